//===- Diagnostics.h - Error reporting shared by frontend stages -*- C++
//-*-===//
//
// All frontend errors go through MLIR's diagnostic engine (so the driver's
// SourceMgr handlers print and verify them); this wrapper adds what a
// compiler needs on top: an error count, and a limit after which stages stop
// so that a garbage input cannot produce millions of messages.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_DIAGNOSTICS_H
#define MSCCLC_FRONTEND_DIAGNOSTICS_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"

namespace mscclc {

class DiagReporter {
public:
  explicit DiagReporter(mlir::MLIRContext &ctx, unsigned maxErrors = 50)
      : ctx(ctx), maxErrors(maxErrors) {}

  /// Emits `msg` as an error at `loc`. The last one within the limit gets
  /// a "too many errors" note; the rest are dropped.
  void error(mlir::Location loc, const llvm::Twine &msg);

  /// Emits an error with one attached note (e.g. "previous definition").
  void error(mlir::Location loc, const llvm::Twine &msg, mlir::Location noteLoc,
             const llvm::Twine &note);

  /// True once the error limit was reached: callers should stop.
  bool limitReached() const { return count >= maxErrors; }
  unsigned errorCount() const { return count; }
  mlir::MLIRContext &getContext() const { return ctx; }

private:
  /// Returns false if the error must be dropped.
  bool admit(mlir::Location loc);

  mlir::MLIRContext &ctx;
  unsigned maxErrors;
  unsigned count = 0;
};

} // namespace mscclc

#endif // MSCCLC_FRONTEND_DIAGNOSTICS_H
