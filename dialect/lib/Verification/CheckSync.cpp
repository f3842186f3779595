//===- CheckSync.cpp - mscl-check-sync: no deadlock, no race --------------===//
//
// Static checks first (signal/wait pairing, one LL put per read packet
// chunk); when they hold, one abstract execution drives both the deadlock
// check (did every block finish?) and the happens-before race detector.
// Stopping after failed static checks avoids reporting their consequences
// (a missing signal is also a blocked wait) a second time.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"
#include "GroupedDiagnostics.h"

#include "mscl/Verification/Passes.h"

namespace mscl {
#define GEN_PASS_DEF_CHECKSYNC
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

LogicalResult checkProgram(ProgramOp program, const ProgramModel &model) {
  GroupedDiagnostics grouped(program->getContext());
  Scheduler scheduler(model);
  bool pairing = succeeded(checkSignalWaitPairing(model));
  bool packets = succeeded(checkPacketWriters(model, scheduler)) &&
                 succeeded(checkPacketSizes(model, scheduler));
  if (!pairing || !packets)
    return failure();
  RaceDetector races(model, scheduler);
  bool finished =
      scheduler.run([&](int block, int step) { races.step(block, step); });
  bool raceFree = races.finish(finished);
  if (!finished) {
    reportDeadlock(model, scheduler);
    return failure();
  }
  bool inStep = succeeded(checkGroupDrift(program));
  return success(raceFree && inStep);
}

struct CheckSyncPass final : mscl::impl::CheckSyncBase<CheckSyncPass> {
  void runOnOperation() override {
    if (failed(checkProgram(getOperation(),
                            getAnalysis<ProgramModelAnalysis>().model)))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
