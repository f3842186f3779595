//===- Diagnostics.cpp - Error reporting shared by frontend stages --------===//

#include "mscclc/Frontend/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"

using namespace mscclc;

bool DiagReporter::admit(mlir::Location loc) {
  if (count >= maxErrors)
    return false;
  ++count;
  return true;
}

// The last error admitted says that the rest are dropped, in a note of its
// own: the errors shown stay at most maxErrors.
void DiagReporter::error(mlir::Location loc, const llvm::Twine &msg) {
  if (!admit(loc))
    return;
  mlir::InFlightDiagnostic diag = mlir::emitError(loc) << msg;
  if (limitReached())
    diag.attachNote() << "too many errors, stopping";
}

void DiagReporter::error(mlir::Location loc, const llvm::Twine &msg,
                         mlir::Location noteLoc, const llvm::Twine &note) {
  if (!admit(loc))
    return;
  mlir::InFlightDiagnostic diag = mlir::emitError(loc) << msg;
  diag.attachNote(noteLoc) << note;
  if (limitReached())
    diag.attachNote() << "too many errors, stopping";
}
