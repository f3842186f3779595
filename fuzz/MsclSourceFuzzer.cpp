//===- MsclSourceFuzzer.cpp - .mscl source through the whole compiler ----===//
//
// Each input is the text of an .mscl file. It goes through what
// `mscclc --emit=mlir` runs: parsing (with imports), name checks,
// evaluation, MLIRGen, the optimisation passes, the static proof and the
// printer. Rejections are fine; crashes, hangs, leaks, sanitizer reports
// and errors without a source location (FuzzDiagnostics.h) are findings.
//
// The rank count comes from the input's size (kRanks[size % 5]), so one
// corpus covers one rank, odd counts and larger communicators while each
// input still compiles one way. To reproduce with the driver, run
// `mscclc INPUT --ranks R` with R = kRanks[size of INPUT % 5], from a copy
// of INPUT in stdlib/ when it imports.
//
//===----------------------------------------------------------------------===//

#include "FuzzDiagnostics.h"

#include "mscclc/Driver/Compile.h"
#include "mscclc/Frontend/Frontend.h"

#include "mscl/IR/MsclDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

namespace {
constexpr int64_t kRanks[] = {1, 2, 3, 4, 8};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mscclc::CompileOptions options;
  options.frontend.ranks = kRanks[size % std::size(kRanks)];

  // No thread pool per input: one input is one sequential compile.
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.getOrLoadDialect<mscl::MsclDialect>();
  ctx.printOpOnDiagnostic(false);
  mscclc::fuzz::DiagnosticChecker diagnostics(ctx, /*requireLocations=*/true);

  // Named as a file of the stdlib, so `import "common.mscl"` resolves.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          MSCCLC_FUZZ_IMPORT_DIR "/fuzz-input.mscl"),
      llvm::SMLoc());

  // As `--emit=mlir`, the checked module is printed.
  bool failed = true;
  if (std::unique_ptr<mscclc::ast::Module> module =
          mscclc::parseProgram(sourceMgr, ctx)) {
    if (mlir::OwningOpRef<mlir::ModuleOp> ir =
            mscclc::compileModule(*module, options, ctx)) {
      ir->print(llvm::nulls());
      failed = false;
    }
  }
  diagnostics.check(failed);
  return 0;
}
