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

/// No access of one launch is unordered with one of the next launch of the
/// same program on any rank, under what the runtime does between launches
/// (AcrossLaunches.cpp). Run once the program is race-free in one launch.
mlir::LogicalResult checkAcrossLaunches(ProgramOp program);

/// One side of an unordered pair of accesses from two launches.
struct LaunchAccess {
  int block = -1;
  mlir::Operation *op = nullptr;
  int launch = 0;
  bool write = false;
  /// The channel of a put whose remote write this is, -1 otherwise.
  int channel = -1;
  /// A packet slot: the two accesses are two launches apart.
  bool packet = false;
  /// The caller of rank `hostRank` between launch `launch - 1` and
  /// `launch`: it reads the output and writes the next input.
  int64_t hostRank = -1;
};

/// Reports `a` and `b`, accesses of `slot` in different launches that
/// nothing orders, at the later launch's access, saying what sync would
/// order them.
void reportAcrossLaunches(const ProgramModel &model, int64_t slot,
                          const LaunchAccess &a, const LaunchAccess &b);

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
  /// Once every block ran to its end (`checkVisibility`): every write into
  /// another rank's memory must have been made visible there. Reports what
  /// was held back; returns true when no race and no invisible write was
  /// found.
  bool finish(bool checkVisibility);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_CHECKS_H
