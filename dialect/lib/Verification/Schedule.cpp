//===- Schedule.cpp - Abstract execution of all thread blocks -------------===//

#include "Schedule.h"

#include "mscl/IR/MsclLaunches.h"

using namespace mscl;
using namespace mscl::verify;

Scheduler::Scheduler(const ProgramModel &model)
    : model(model), pc(model.blocks.size(), 0), waitsMet(model.blocks.size(), 0),
      signalCount(model.channels.size(), 0),
      waitCount(model.channels.size(), 0), queued(model.blocks.size(), 0),
      blocksOfRank(model.ranks) {
  for (int b = 0, e = static_cast<int>(model.blocks.size()); b < e; ++b) {
    blocksOfRank[model.blocks[b].rank].push_back(b);
    const std::vector<Step> &steps = model.blocks[b].steps;
    for (int s = 0, se = static_cast<int>(steps.size()); s < se; ++s)
      for (const Move &move : steps[s].moves)
        if (model.isPacket(move.dst))
          for (int64_t j = 0; j < move.dst.count; ++j)
            writers[model.slot(move.dst, j)].push_back({b, s});
  }
}

StepRef Scheduler::packetWriter(int64_t slot, int launch) const {
  auto it = writers.find(slot);
  size_t index =
      static_cast<size_t>(earlierLaunchesOnCopy(/*packet=*/true, launch));
  if (it == writers.end() || index >= it->second.size())
    return {};
  return it->second[index];
}

bool Scheduler::canRun(int block, const Step &step, Blocker *why) const {
  const Block &own = model.blocks[block];
  if (step.launch > 0 && own.startsLaunch(pc[block]))
    for (int other : blocksOfRank[own.rank]) {
      if (pc[other] >= model.blocks[other].launchStarts[step.launch])
        continue;
      if (why) {
        why->launchBoundary = true;
        why->waitsFor = other;
      }
      return false;
    }
  // Counters only grow: a wait found satisfied stays so until the step
  // runs, so a wait on many channels is not scanned from its start again
  // at every signal.
  for (size_t i = waitsMet[block]; i < step.waits.size(); ++i) {
    int channel = step.waits[i];
    // Waiting twice on one channel in one operation needs two signals.
    int64_t need = waitCount[channel] + 1;
    if (step.waitsRepeat)
      for (size_t k = 0; k < i; ++k)
        need += step.waits[k] == channel;
    int other = model.channels[channel].otherEnd;
    if (other >= 0 && signalCount[other] >= need) {
      waitsMet[block] = i + 1;
      continue;
    }
    if (why) {
      why->channel = channel;
      why->signal = need - 1;
      why->waitsFor = other >= 0 ? model.channels[other].owner : -1;
    }
    return false;
  }
  if (!step.readsPackets)
    return true;
  for (const Move &move : step.moves)
    for (const Range &src : move.sources()) {
      if (!model.isPacket(src))
        continue;
      for (int64_t j = 0; j < src.count; ++j) {
        int64_t slot = model.slot(src, j);
        // Launches L-2, L-4, ... wrote the same parity half before.
        if (packetsWritten.lookup(slot) >
            earlierLaunchesOnCopy(/*packet=*/true, step.launch))
          continue;
        if (why) {
          why->slot = slot;
          why->writer = packetWriter(slot, step.launch);
          if (why->writer.valid())
            why->waitsFor = why->writer.block;
        }
        return false;
      }
    }
  return true;
}

void Scheduler::wake(int block) {
  if (block < 0 || queued[block])
    return;
  queued[block] = 1;
  ready.push_back(block);
}

void Scheduler::execute(int block, const Step &step) {
  for (int channel : step.waits)
    ++waitCount[channel];
  for (const Move &move : step.moves) {
    if (!model.isPacket(move.dst))
      continue;
    for (int64_t j = 0; j < move.dst.count; ++j) {
      int64_t slot = model.slot(move.dst, j);
      // Every launch of the slot's parity writes it once more.
      ++packetsWritten[slot];
      auto it = packetWaiters.find(slot);
      if (it != packetWaiters.end()) {
        for (int waiter : it->second)
          wake(waiter);
        packetWaiters.erase(it);
      }
    }
  }
  for (int channel : step.signals) {
    ++signalCount[channel];
    int other = model.channels[channel].otherEnd;
    if (other >= 0)
      wake(model.channels[other].owner);
  }
  (void)block;
}

bool Scheduler::run(llvm::function_ref<void(int, int)> onStep) {
  for (int b = static_cast<int>(model.blocks.size()) - 1; b >= 0; --b)
    wake(b);
  while (!ready.empty()) {
    int block = ready.back();
    ready.pop_back();
    queued[block] = 0;
    const std::vector<Step> &steps = model.blocks[block].steps;
    while (pc[block] < static_cast<int>(steps.size())) {
      const Step &step = steps[pc[block]];
      Blocker why;
      if (!canRun(block, step, &why)) {
        if (why.slot >= 0)
          packetWaiters[why.slot].push_back(block);
        break;
      }
      execute(block, step);
      onStep(block, pc[block]);
      // The rank's blocks may be waiting for this one to end its launch.
      if (model.launches > 1 && model.blocks[block].endsLaunch(pc[block]))
        for (int other : blocksOfRank[model.blocks[block].rank])
          if (other != block)
            wake(other);
      ++pc[block];
      waitsMet[block] = 0;
    }
  }
  for (size_t b = 0; b < pc.size(); ++b)
    if (pc[b] < static_cast<int>(model.blocks[b].steps.size()))
      return false;
  return true;
}

std::vector<Blocker> Scheduler::blocked() const {
  std::vector<Blocker> result;
  for (int b = 0, e = static_cast<int>(pc.size()); b < e; ++b) {
    const std::vector<Step> &steps = model.blocks[b].steps;
    if (pc[b] >= static_cast<int>(steps.size()))
      continue;
    Blocker why;
    why.block = b;
    why.step = pc[b];
    (void)canRun(b, steps[pc[b]], &why);
    result.push_back(why);
  }
  return result;
}
