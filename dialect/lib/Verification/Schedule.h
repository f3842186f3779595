//===- Schedule.h - Abstract execution of all thread blocks ---------------===//
//
// Runs every thread block of every rank as a cursor over its steps. A wait
// may proceed once the other end of its channel signalled as often as the
// block waited so far plus one; a read of an LL packet chunk proceeds once
// the LL put writing that chunk ran; signals, puts and flushes never block.
// Because a semaphore has a single waiting block and counters only grow, a
// step that can run stays runnable: every maximal schedule ends in the same
// state, so one schedule decides deadlock freedom, and every happens-before
// edge (n-th signal -> n-th wait, LL put -> LL read) is the same in all of
// them. Each block runs as far as it can before the next is tried, which
// keeps the schedule linear in the program size.
//
// In a model of several launches, the first step of a launch runs once
// every block of its rank finished the previous launch (the kernels of one
// rank run one after the other on its stream), and nothing else: other
// ranks may still be in the previous launch. A packet chunk is written once
// per launch of its parity, so a read in launch L needs the write of L.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_SCHEDULE_H
#define MSCL_LIB_VERIFICATION_SCHEDULE_H

#include "ProgramModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mscl::verify {

/// What a block that cannot move waits for.
struct Blocker {
  int block = -1;
  int step = -1;
  /// A wait: the block's channel waited on and the number of the signal
  /// (0-based) it needs from the other end.
  int channel = -1;
  int64_t signal = 0;
  /// An LL read: the packet slot and the LL put that writes it.
  int64_t slot = -1;
  StepRef writer;
  /// The start of a launch: a block of the rank still in the previous one.
  bool launchBoundary = false;
  /// The block that has to move first (-1 when nobody can).
  int waitsFor = -1;
};

class Scheduler {
public:
  explicit Scheduler(const ProgramModel &model);

  /// Runs the abstract execution, calling `onStep(block, step)` for every
  /// step in the order it executes (after the steps it depends on). Returns
  /// true when every block ran to its end.
  bool run(llvm::function_ref<void(int, int)> onStep);

  /// After run(): one entry per block that did not finish.
  std::vector<Blocker> blocked() const;

  /// Every LL put (step) writing each packet slot, in program order of
  /// blocks.
  const llvm::DenseMap<int64_t, llvm::SmallVector<StepRef, 1>> &
  packetWriters() const {
    return writers;
  }
  /// The LL put writing packet slot `slot` in launch `launch` (one per
  /// launch of the slot's parity), invalid when there is none.
  StepRef packetWriter(int64_t slot, int launch) const;

private:
  bool canRun(int block, const Step &step, Blocker *why) const;
  void execute(int block, const Step &step);
  void wake(int block);

  const ProgramModel &model;
  std::vector<int> pc;
  /// Per block: how many waits of its current step are known satisfied.
  mutable std::vector<size_t> waitsMet;
  std::vector<int64_t> signalCount, waitCount;
  llvm::DenseMap<int64_t, llvm::SmallVector<StepRef, 1>> writers;
  llvm::DenseMap<int64_t, int> packetsWritten;
  llvm::DenseMap<int64_t, llvm::SmallVector<int, 2>> packetWaiters;
  std::vector<int> ready;
  std::vector<char> queued;
  /// Blocks of each rank (for launch boundaries).
  std::vector<llvm::SmallVector<int, 4>> blocksOfRank;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_SCHEDULE_H
