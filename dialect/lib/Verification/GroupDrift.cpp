//===- GroupDrift.cpp - Blocks of a group signalling out of step ----------===//
//
// The proofs run a thread-block group as one cursor, but its G blocks run
// independently: a signal op sends one increment per block, and the n-th
// wait on the other end completes at n*G increments, from whichever blocks
// sent them. The one-cursor view is exact as long as no block of the group
// can send its (n+1)-th signal on a channel before every block sent its
// n-th; otherwise a fast block supplies two rounds, the waiter goes on
// early and reads a slice still to come.
//
// A block of the group learns that every block passed a point only through
// another block that waited for the group: a wait consumes the increments
// of all G blocks. (A read of LL packets tells only of the blocks whose
// packets it spins on: of a single writing block, to a single reading
// block.) So this check keeps vector clocks as the race
// detector does and, per group, the latest epoch of its own that came back
// to it through such a join. Before each signal on a channel, that epoch
// must have reached the group's previous signal on the channel. Pipeline
// bodies are unrolled twice: the last signal of one iteration and the first
// of the next are such a pair, and every chain between them lies within
// those two iterations.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

using Clock = std::vector<uint32_t>;

class DriftChecker {
public:
  explicit DriftChecker(const ProgramModel &model, const Scheduler &scheduler)
      : model(model), scheduler(scheduler),
        clocks(model.blocks.size(), Clock(model.blocks.size(), 0)),
        passedByAll(model.blocks.size(), 0),
        pending(model.channels.size()),
        lastSignal(model.channels.size(), {0, nullptr}) {}

  void step(int block, int stepIndex);
  bool ok() const { return reports == 0; }

private:
  void join(int block, const Clock &from) {
    // What the other block knows of this group: a point all its blocks
    // passed (see the file comment).
    passedByAll[block] = std::max(passedByAll[block], from[block]);
    Clock &into = clocks[block];
    for (size_t i = 0; i < into.size(); ++i)
      into[i] = std::max(into[i], from[i]);
  }
  void report(int block, int channel, Operation *signal, Operation *previous);

  const ProgramModel &model;
  const Scheduler &scheduler;
  std::vector<Clock> clocks;
  std::vector<uint32_t> passedByAll;
  /// Per channel: the signaller's clock at each signal not yet consumed.
  std::vector<std::deque<Clock>> pending;
  /// Per channel: epoch and operation of the owner's latest signal.
  std::vector<std::pair<uint32_t, Operation *>> lastSignal;
  llvm::DenseMap<std::pair<int, int>, Clock> packetClocks;
  llvm::DenseSet<Operation *> reportedOps;
  unsigned reports = 0;
};

} // namespace

void DriftChecker::report(int block, int channel, Operation *signal,
                          Operation *previous) {
  if (!reportedOps.insert(signal).second)
    return;
  ++reports;
  const ChannelInfo &info = model.channels[channel];
  std::string name = model.channelName(channel);
  InFlightDiagnostic diag =
      signal->emitError()
      << "signal on " << name << " may be sent by one block of "
      << model.blockName(block)
      << " before another block of the group sent its previous signal on "
      << name << ": nothing in between waits for every block of the group, "
      << "so rank " << info.dst << "'s wait on "
      << (info.otherEnd >= 0 ? model.channelName(info.otherEnd)
                             : std::string("the other end"))
      << " may count one block's signals twice and go on before the other "
         "blocks' data is visible";
  diag.attachNote(previous->getLoc())
      << (previous == signal
              ? "the previous signal is this one, in the previous pipeline "
                "iteration"
              : "the previous signal on " + name);
  diag.attachNote(signal->getLoc())
      << "wait, between the two signals, for a signal that rank " << info.dst
      << " sends after its wait on "
      << (info.otherEnd >= 0 ? model.channelName(info.otherEnd)
                             : std::string("the other end"))
      << ", or give each block its own channel";
}

void DriftChecker::step(int block, int stepIndex) {
  const Step &step = model.blocks[block].steps[stepIndex];
  uint32_t epoch = ++clocks[block][block];
  for (int channel : step.waits) {
    std::deque<Clock> &queue = pending[model.channels[channel].otherEnd];
    join(block, queue.front());
    queue.pop_front();
  }
  // A read of LL packets proves that their writer passed its put, where
  // it spins on the writer's packets: every packet of one writing block,
  // read by one block. A group's block spins only on the stripes it owns,
  // and a group writes a chunk through the blocks owning its stripes, at
  // small counts not all of them (execution-model.md).
  if (step.readsPackets && model.blocks[block].group == 1)
    for (const Move &move : step.moves)
      for (const Range &src : move.sources()) {
        if (!model.isPacket(src))
          continue;
        for (int64_t j = 0; j < src.count; ++j) {
          auto it = scheduler.packetWriters().find(model.slot(src, j));
          if (it == scheduler.packetWriters().end())
            continue;
          StepRef writer = it->second.front();
          if (model.blocks[writer.block].group > 1)
            continue;
          auto clock = packetClocks.find({writer.block, writer.step});
          if (clock != packetClocks.end())
            join(block, clock->second);
        }
      }
  bool group = model.blocks[block].group > 1;
  for (int channel : step.signals) {
    auto &[previous, previousOp] = lastSignal[channel];
    if (group && previousOp && passedByAll[block] < previous)
      report(block, channel, step.op, previousOp);
    lastSignal[channel] = {epoch, step.op};
    pending[channel].push_back(clocks[block]);
  }
  for (const Move &move : step.moves)
    if (model.isPacket(move.dst)) {
      packetClocks[{block, stepIndex}] = clocks[block];
      break;
    }
}

LogicalResult mscl::verify::checkGroupDrift(ProgramOp program) {
  bool groups = false;
  program.walk([&](ThreadBlockOp tb) { groups |= tb.getGroup() > 1; });
  if (!groups)
    return success();
  ProgramModel model(program, /*pipelineCopies=*/2);
  Scheduler scheduler(model);
  DriftChecker checker(model, scheduler);
  // The one-iteration schedule finished, so this one does too: every
  // iteration pairs its signals and waits alike.
  scheduler.run([&](int block, int step) { checker.step(block, step); });
  return success(checker.ok());
}
