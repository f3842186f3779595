//===- Deadlock.cpp - Reports the cycles of blocked thread blocks ---------===//
//
// When the abstract execution stops with unfinished blocks, every blocked
// block waits for one other block (the owner of the channel whose signal it
// needs, or the block of the LL put it reads). Once signals and waits pair up
// and every read packet has its put, the awaited block cannot have finished,
// so following "waits for" from any blocked block ends in a cycle. Each
// cycle is reported once: an error at one of its operations and a note at
// each of the others, saying what each waits for.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

static std::string waitingFor(const ProgramModel &model, const Blocker &b) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (b.channel >= 0) {
    const ChannelInfo &channel = model.channels[b.channel];
    os << "waiting on " << model.channelName(b.channel)
       << " for a signal from rank " << channel.dst;
    if (channel.otherEnd >= 0 && b.waitsFor >= 0)
      os << " (" << model.blockName(b.waitsFor) << ", on "
         << model.channelName(channel.otherEnd) << ")";
  } else {
    os << "waiting for the LL put that writes " << model.slotName(b.slot);
    if (b.waitsFor >= 0)
      os << " (" << model.blockName(b.waitsFor) << ")";
  }
  return text;
}

void mscl::verify::reportDeadlock(const ProgramModel &model,
                                  const Scheduler &scheduler) {
  std::vector<Blocker> blocked = scheduler.blocked();
  std::vector<int> indexOf(model.blocks.size(), -1);
  for (int i = 0, e = static_cast<int>(blocked.size()); i < e; ++i)
    indexOf[blocked[i].block] = i;
  // 0 = unvisited, 1 = on the current path, 2 = done.
  std::vector<char> state(blocked.size(), 0);
  size_t inCycles = 0;
  std::vector<std::vector<int>> cycles;
  for (size_t start = 0; start < blocked.size(); ++start) {
    if (state[start])
      continue;
    std::vector<int> path;
    int cur = static_cast<int>(start);
    while (cur >= 0 && state[cur] == 0) {
      state[cur] = 1;
      path.push_back(cur);
      int next = blocked[cur].waitsFor;
      cur = next >= 0 ? indexOf[next] : -1;
    }
    if (cur < 0 || state[cur] != 1) {
      // The chain ends at a block that is not blocked: cannot happen after
      // the pairing checks, but say so rather than stay silent.
      if (cur < 0 && !path.empty()) {
        const Blocker &last = blocked[path.back()];
        model.step({last.block, last.step}).op->emitError()
            << "deadlock: " << model.blockName(last.block)
            << " waits here forever, " << waitingFor(model, last);
      }
      for (int i : path)
        state[i] = 2;
      continue;
    }
    // The cycle is the part of the path from `cur` on.
    auto first = std::find(path.begin(), path.end(), cur);
    cycles.emplace_back(first, path.end());
    inCycles += cycles.back().size();
    for (int i : path)
      state[i] = 2;
  }
  for (size_t c = 0; c < cycles.size(); ++c) {
    const std::vector<int> &cycle = cycles[c];
    const Blocker &head = blocked[cycle.front()];
    InFlightDiagnostic diag =
        model.step({head.block, head.step}).op->emitError()
        << "deadlock: " << model.blockName(head.block)
        << " waits here forever, " << waitingFor(model, head);
    // A block never waits for itself: that needs a channel from a rank to
    // itself, which the channel verifier refuses.
    assert(cycle.size() > 1 && "a block waiting for itself");
    diag << "; " << cycle.size() << " thread blocks wait for each other";
    if (c == 0 && inCycles < blocked.size())
      diag << " (" << blocked.size() - inCycles << " more thread block"
           << (blocked.size() - inCycles == 1 ? " is" : "s are")
           << " blocked behind them)";
    for (size_t i = 1; i < cycle.size(); ++i) {
      const Blocker &b = blocked[cycle[i]];
      diag.attachNote(model.step({b.block, b.step}).op->getLoc())
          << model.blockName(b.block) << " is blocked here, "
          << waitingFor(model, b);
    }
  }
}
