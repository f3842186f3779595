//===- Checks.h - The individual checks behind mscl-check-sync ------------===//
#ifndef MSCL_LIB_VERIFICATION_CHECKS_H
#define MSCL_LIB_VERIFICATION_CHECKS_H

#include "ProgramModel.h"
#include "Schedule.h"

#include "mlir/Support/LLVM.h"

namespace mscl::verify {

/// Every signal on a channel meets a wait on its other end and every wait a
/// signal, counted per channel pair; inside pipelines per iteration.
mlir::LogicalResult checkSignalWaitPairing(const ProgramModel &model);

/// Every packet chunk that is read has exactly one LL put writing it, and
/// no packet chunk is written twice.
mlir::LogicalResult checkPacketWriters(const ProgramModel &model,
                                       const Scheduler &scheduler);

/// Every packet chunk that is read takes no more elements than its LL put
/// sends, for every run-time count (chunk sizes depend on it).
mlir::LogicalResult checkPacketSizes(const ProgramModel &model,
                                     const Scheduler &scheduler);

/// No block of a thread-block group can send its next signal on a channel
/// before every block of the group sent the previous one (GroupDrift.cpp).
/// Run once the program is known to run to completion.
mlir::LogicalResult checkGroupDrift(ProgramOp program);

/// After a schedule that did not finish: reports each cycle of blocked
/// thread blocks as a deadlock.
void reportDeadlock(const ProgramModel &model, const Scheduler &scheduler);

/// Happens-before race detection over the abstract schedule (see
/// RaceDetector.cpp). Feed it every executed step, in order.
class RaceDetector {
public:
  RaceDetector(const ProgramModel &model, const Scheduler &scheduler);
  ~RaceDetector();
  void step(int block, int step);
  /// Once every block ran to its end (`completed`): every write into
  /// another rank's memory must have been made visible there (see
  /// Visibility.cpp). Reports what was held back; returns true when no
  /// race and no invisible write was found.
  bool finish(bool completed);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_CHECKS_H
