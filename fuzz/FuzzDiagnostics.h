//===- FuzzDiagnostics.h - Fuzz targets' checks on errors ----*- C++ -*-===//
//
// Bad input is expected, so errors are not findings; but the compiler
// promises that every error points into the source (file:line:col) and
// that a failed compile says why. A violation is reported and aborts, so
// libFuzzer keeps the input like a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_FUZZ_FUZZDIAGNOSTICS_H
#define MSCCLC_FUZZ_FUZZDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace mscclc::fuzz {

/// Swallows the diagnostics of one fuzz input, counting errors and, with
/// `requireLocations`, keeping the first one without a file location. (MLIR
/// text states its own locations, `loc(unknown)` included, so only .mscl
/// sources require them.)
class DiagnosticChecker {
public:
  DiagnosticChecker(mlir::MLIRContext &ctx, bool requireLocations)
      : ctx(ctx) {
    id = ctx.getDiagEngine().registerHandler([this, requireLocations](
                                                 mlir::Diagnostic &diag) {
      if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::success();
      ++errors;
      if (requireLocations && unlocated.empty() &&
          !hasFileLocation(diag.getLocation()))
        unlocated = diag.str();
      return mlir::success();
    });
  }
  ~DiagnosticChecker() { ctx.getDiagEngine().eraseHandler(id); }

  /// Aborts when an error had no file location, or when `failed` holds
  /// and nothing said why.
  void check(bool failed) const {
    if (!unlocated.empty())
      die("an error without a file:line:col location: " + unlocated);
    if (failed && errors == 0)
      die("the input was rejected without an error message");
  }

private:
  static bool hasFileLocation(mlir::Location loc) {
    bool found = false;
    loc->walk([&](mlir::Location inner) {
      found = found || mlir::isa<mlir::FileLineColLoc>(inner);
      return found ? mlir::WalkResult::interrupt()
                   : mlir::WalkResult::advance();
    });
    return found;
  }
  [[noreturn]] static void die(const std::string &message) {
    llvm::errs() << "fuzz finding: " << message << "\n";
    abort();
  }

  mlir::MLIRContext &ctx;
  mlir::DiagnosticEngine::HandlerID id;
  unsigned errors = 0;
  std::string unlocated;
};

} // namespace mscclc::fuzz

#endif // MSCCLC_FUZZ_FUZZDIAGNOSTICS_H
