//===- Compile.h - The .mscl to checked MLIR pipeline ----------*- C++ -*-===//
//
// What `mscclc` runs between a parsed .mscl module and the IR it emits:
// evaluation, MLIRGen, the optimisation passes and the static proof. The
// driver and the fuzz targets (fuzz/) share it, so a fuzzer exercises
// exactly the stages a user's compile goes through.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_DRIVER_COMPILE_H
#define MSCCLC_DRIVER_COMPILE_H

#include "mscclc/Frontend/Frontend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class PassManager;
} // namespace mlir

namespace mscclc {

struct CompileOptions {
  FrontendOptions frontend;
  /// Replication, fusion and barriers (off: MLIRGen's output as it is).
  bool optimize = true;
  /// The static proof (mscl-check-sync, mscl-check-collective), after the
  /// optimisations when they run.
  bool staticProof = true;
  /// The proof over back-to-back launches (mscl-check-launches) as well.
  bool acrossLaunches = true;
  /// Translation validation of the optimisation passes
  /// (mscl/Verification/TranslationValidation.h).
  bool validateTranslation = true;
  /// The MLIR verifier after every pass, as mscl-opt runs it. Off, the IR
  /// is verified once, after the last pass: a pass that breaks it is a
  /// compiler bug the lit tests of passes catch, and at hundreds of ranks
  /// ten walks of the whole program cost a sixth of the compile time.
  bool verifyEachPass = false;
  /// The most chunks (every buffer's, on every rank, after replication)
  /// the proofs and the validation may track: their memory grows with
  /// them, about 40 bytes each. A program past it is refused with a
  /// message naming --max-proof-chunks.
  int64_t maxProofChunks = kDefaultMaxProofChunks;
  static constexpr int64_t kDefaultMaxProofChunks = int64_t(1) << 24;
};

/// Evaluates `module` for `options.frontend`, lowers it to the mscl
/// dialect and runs the requested passes in one pass manager, which
/// `configure` (if given) may set up first (the driver applies its
/// --mlir-* options there). Returns null after an error, reported through
/// `ctx`'s diagnostic engine (a translation validation failure, an internal
/// error, is printed to stderr).
mlir::OwningOpRef<mlir::ModuleOp>
compileModule(const ast::Module &module, const CompileOptions &options,
              mlir::MLIRContext &ctx,
              llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)>
                  configure = nullptr);

} // namespace mscclc

#endif // MSCCLC_DRIVER_COMPILE_H
