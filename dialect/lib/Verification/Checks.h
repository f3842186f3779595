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
  /// Reports what was held back; returns true when no race was found.
  bool finish();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_CHECKS_H
