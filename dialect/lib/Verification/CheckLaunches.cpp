//===- CheckLaunches.cpp - mscl-check-launches: back-to-back launches -----===//
//
// Runs after mscl-check-sync and mscl-check-collective: a program they
// accept is correct in one launch, so every race the model of several
// launches shows (AcrossLaunches.cpp) lies between two launches, or
// between a launch and the caller of a rank between two of its launches.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"
#include "GroupedDiagnostics.h"

#include "mscl/Verification/Passes.h"

namespace mscl {
#define GEN_PASS_DEF_CHECKLAUNCHES
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

struct CheckLaunchesPass final
    : mscl::impl::CheckLaunchesBase<CheckLaunchesPass> {
  void runOnOperation() override {
    ProgramOp program = getOperation();
    GroupedDiagnostics grouped(program->getContext());
    if (failed(checkAcrossLaunches(program)))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
