//===- Compile.cpp - The .mscl to checked MLIR pipeline ------------------===//

#include "mscclc/Driver/Compile.h"

#include "mscclc/MLIRGen/MLIRGen.h"

#include "mscl/Transforms/Passes.h"
#include "mscl/Verification/Passes.h"
#include "mscl/Verification/TranslationValidation.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace {

/// The chunks the proofs track for `program`: every chunk of every buffer
/// on every rank, times the instances replication makes, twice for packet
/// buffers (they alternate between launches). Saturates.
uint64_t trackedChunks(mscl::ProgramOp program) {
  uint64_t perRank = 0;
  for (auto buffer : program.getBodyBlock().getOps<mscl::BufferOp>())
    perRank = llvm::SaturatingAdd(
        perRank, llvm::SaturatingMultiply<uint64_t>(buffer.getChunks(),
                                                    buffer.getPacket() ? 2 : 1));
  uint64_t instances =
      std::max<int64_t>(1, program.getInstancesAttr().getInt());
  return llvm::SaturatingMultiply(
      llvm::SaturatingMultiply(perRank, instances),
      static_cast<uint64_t>(program.getRanks()));
}

/// Refuses, at the algorithm's header, a program whose proof would track
/// more chunks than `limit`.
LogicalResult checkProofSize(ModuleOp module, int64_t limit) {
  LogicalResult result = success();
  module.walk([&](mscl::ProgramOp program) {
    uint64_t chunks = trackedChunks(program);
    if (chunks <= static_cast<uint64_t>(limit))
      return;
    program.emitError() << "the proofs would track " << chunks
                        << " chunks (every buffer's, on all "
                        << program.getRanks()
                        << " ranks), more than the limit of " << limit
                        << "; declare fewer chunks, or raise the limit with "
                           "--max-proof-chunks (about 40 bytes a chunk)";
    result = failure();
  });
  return result;
}

} // namespace

OwningOpRef<ModuleOp> mscclc::compileModule(
    const ast::Module &module, const CompileOptions &options, MLIRContext &ctx,
    llvm::function_ref<LogicalResult(PassManager &)> configure) {
  std::optional<Program> program =
      evaluateProgram(module, options.frontend, ctx);
  if (!program)
    return nullptr;
  OwningOpRef<ModuleOp> ir = generateMLIR(*program, ctx);
  if (!ir || (!options.optimize && !options.staticProof))
    return ir;
  if (failed(checkProofSize(*ir, options.maxProofChunks)))
    return nullptr;
  // One pass manager, so --mlir-print-ir-after-all and --mlir-timing see
  // the whole pipeline. The static proof runs on what is emitted: after
  // the optimisations.
  PassManager pm(&ctx, ModuleOp::getOperationName());
  if (configure && failed(configure(pm)))
    return nullptr;
  pm.enableVerifier(options.verifyEachPass);
  mscl::TranslationValidation validation;
  if (options.optimize && options.validateTranslation)
    pm.addInstrumentation(validation.instrumentation());
  if (options.optimize)
    mscl::buildOptimizationPipeline(pm, /*instances=*/0);
  if (options.staticProof)
    mscl::addVerificationPasses(pm, options.acrossLaunches);
  // A program the proofs refuse may be racy, and then the validation's
  // values need not hold: its errors count only for accepted programs.
  if (failed(pm.run(*ir)))
    return nullptr;
  if (!options.verifyEachPass && failed(verify(*ir)))
    return nullptr;
  if (validation.failed()) {
    // Without the proof in the pipeline (--simulate, --skip-static-checks),
    // run it now: a program it refuses explains itself, and is no compiler
    // bug.
    if (!options.staticProof) {
      PassManager proof(&ctx, ModuleOp::getOperationName());
      mscl::addVerificationPasses(proof, options.acrossLaunches);
      if (failed(proof.run(*ir)))
        return nullptr;
    }
    validation.printErrors(llvm::errs());
    return nullptr;
  }
  return ir;
}
