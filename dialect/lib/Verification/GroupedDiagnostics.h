//===- GroupedDiagnostics.h - One report per mistake in a rank loop -------===//
//
// A .mscl loop over ranks emits one operation per rank at one source
// location, so one mistake in it fails the proof once per rank with
// near-identical messages. While a GroupedDiagnostics is alive it holds the
// diagnostics back; when it goes it emits the first of each group (same
// location, same text up to numbers) with a note naming the ranks of the
// others.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_GROUPEDDIAGNOSTICS_H
#define MSCL_LIB_VERIFICATION_GROUPEDDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <vector>

namespace mscl::verify {

class GroupedDiagnostics {
public:
  explicit GroupedDiagnostics(mlir::MLIRContext *context);
  ~GroupedDiagnostics();
  GroupedDiagnostics(const GroupedDiagnostics &) = delete;
  GroupedDiagnostics &operator=(const GroupedDiagnostics &) = delete;

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID handler;
  std::vector<mlir::Diagnostic> held;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_GROUPEDDIAGNOSTICS_H
