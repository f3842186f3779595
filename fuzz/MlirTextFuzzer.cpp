//===- MlirTextFuzzer.cpp - MLIR text through the mscl dialect -----------===//
//
// Each input is the text of an .mlir file, read as mscl-opt reads it: the
// mscl dialect registered, parsed and verified (the dialect's verifier
// runs the whole-program checks of MsclVerifier.cpp), then printed back as
// mscl-opt prints its result. Rejections are fine; crashes, hangs, leaks,
// sanitizer reports and a rejection without an error are findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzDiagnostics.h"

#include "mscl/IR/MsclDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.getOrLoadDialect<mscl::MsclDialect>();
  ctx.printOpOnDiagnostic(false);
  mscclc::fuzz::DiagnosticChecker diagnostics(ctx, /*requireLocations=*/false);

  // MLIR's lexer stops at a NUL after the buffer (files read through
  // MemoryBuffer, as mscl-opt reads them, have one); libFuzzer's data has
  // none, and lexing past it read out of bounds in the harness.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz-input.mlir");
  if (module)
    module->print(llvm::nulls());
  diagnostics.check(!module);
  return 0;
}
