//===- Run.cpp - The scheduling loop, deadlocks and end-of-run checks ----===//

#include "Machine.h"

#include "mscl/IR/MsclLaunches.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mscclc::sim;

Machine::Machine(const Model &model, const Layout &layout, DataType type,
                 ReduceKind reduce, const CostModel &cost, bool tracing,
                 std::vector<Region> *pool, int launches)
    : model(model), layout(layout), type(type), reduce(reduce), cost(cost),
      tracing(tracing), launches(std::max(1, launches)) {
  Word garbage = isFloat(type) ? fromDouble(NAN) : wrapInt(type, 0x5a5a5a5a);
  if (pool)
    regions = std::move(*pool);
  regions.resize(model.ranks * model.buffers.size());
  for (int r = 0; r < model.ranks; ++r)
    for (auto [b, info] : llvm::enumerate(model.buffers)) {
      Region &reg = region(r, b);
      // Over several launches a packet buffer holds both parity halves.
      int64_t size =
          layout.size(info) * mscl::launchCopies(info.packet, this->launches);
      reg.data.assign(size, garbage);
      reg.shadow.clear();
      reg.pending = reg.inflight = 0;
      reg.packets.clear();
      Segment seg;
      seg.hi = size;
      reg.shadow.emplace(0, std::move(seg));
      if (info.packet)
        reg.packets.emplace(0, PacketSegment{size});
    }
  channels.resize(model.channels.size());
  egressFree.assign(model.ranks, 0);
  nicSendFree.assign(model.ranks, 0);
  nicReceiveFree.assign(model.ranks, 0);
  for (auto [b, block] : llvm::enumerate(model.blocks)) {
    // A group's stripes (Layout.h): of its smallest pipeline unit, if any.
    mscclc_u64 unitElems = 0;
    for (const Step &step : block.steps)
      if (step.kind == StepKind::PipelineBegin) {
        mscclc_u64 elems = mscclc_pipeline_unit_elems(
            mscclc_u64(step.unit), mscclc_u64(byteSize(type)));
        unitElems = unitElems ? std::min(unitElems, elems) : elems;
      }
    int64_t stripe = int64_t(mscclc_group_stripe(
        mscclc_u64(layout.chunkSize()), unitElems, mscclc_u64(block.group),
        mscclc_u64(byteSize(type))));
    for (int64_t m = 0; m < block.group; ++m) {
      Task task;
      task.block = b;
      task.member = m;
      task.rank = block.rank;
      task.stripe = stripe;
      tasks.push_back(std::move(task));
    }
  }
  if (this->launches > 1) {
    firstCaller = static_cast<int>(tasks.size());
    for (int r = 0; r < model.ranks; ++r) {
      Task caller;
      caller.block = -1;
      caller.member = 0;
      caller.rank = r;
      caller.done = true; // it runs no steps, only between launches
      tasks.push_back(std::move(caller));
    }
  }
  for (auto [c, ch] : llvm::enumerate(model.channels))
    channels[c].waits.assign(ch.group, 0);
  for (auto [i, task] : llvm::enumerate(tasks)) {
    task.clock.assign(tasks.size(), 0);
    task.clock[i] = 1;
    task.launchStart.assign(this->launches, 0);
    task.launchStart[0] = 1;
    task.launchEnd.resize(this->launches);
  }
}

std::vector<int> Machine::tasksOfRank(int rank) const {
  std::vector<int> result;
  for (auto [i, task] : llvm::enumerate(tasks))
    if (task.rank == rank && task.block >= 0)
      result.push_back(static_cast<int>(i));
  return result;
}

std::vector<int> Machine::deliveriesOfRank(int rank) const {
  // The owners run() gives a channel's FIFO head and its LL pieces.
  std::vector<int> result;
  int nTasks = static_cast<int>(tasks.size());
  int nChannels = static_cast<int>(channels.size());
  for (int c : model.channelsFrom[rank]) {
    result.push_back(nTasks + c);
    result.push_back(nTasks + nChannels + c);
  }
  return result;
}

void Machine::initInputs(const std::vector<std::vector<Word>> &inputs) {
  const BufferInfo &info = model.buffers[model.input];
  int64_t size = layout.size(info);
  for (int r = 0; r < model.ranks; ++r) {
    const std::vector<Word> &in = inputs[r];
    // In-place allgather and gather: the rank's input is its block of the
    // output.
    int64_t offset = 0;
    if (model.inplace &&
        (model.collective == mscl::CollectiveKind::allgather ||
         model.collective == mscl::CollectiveKind::gather))
      offset = r * layout.count;
    int64_t n = std::min<int64_t>(in.size(), size - offset);
    Access host;
    recordWrite(host, WriteKind::Host, r, model.input, offset, offset + n,
                in.data());
  }
}

double Machine::finishTime() const {
  double end = 0;
  for (const Task &t : tasks)
    end = std::max(end, t.time);
  for (const ChannelState &cs : channels)
    end = std::max(end, cs.dataReady);
  return end;
}

LogicalResult Machine::run(Strategy &strat, llvm::StringRef ctx) {
  strategy = &strat;
  context = ctx.str();
  if (launches > 1 && failed(runFirstCallers()))
    return failure();
  for (Task &t : tasks)
    normalize(t);
  enum Kind { TaskStep, ChannelHead, PieceArrival };
  std::vector<std::pair<Kind, int>> actions;
  std::vector<double> ready;
  llvm::SmallVector<bool, 64> isEvent;
  std::vector<int> owner;
  const int64_t limit = 200000000;
  for (int64_t steps = 0;; ++steps) {
    actions.clear();
    ready.clear();
    isEvent.clear();
    owner.clear();
    for (size_t t = 0; t < tasks.size(); ++t)
      if (enabled(t)) {
        actions.push_back({TaskStep, static_cast<int>(t)});
        ready.push_back(tasks[t].time);
        isEvent.push_back(false);
        owner.push_back(t);
      }
    // Owners: a task's index; then, past the tasks, a channel's FIFO head
    // and after those its LL pieces (deliveriesOfRank).
    for (size_t c = 0; c < channels.size(); ++c)
      if (!channels[c].queue.empty()) {
        actions.push_back({ChannelHead, static_cast<int>(c)});
        ready.push_back(channels[c].queue.front().ready);
        isEvent.push_back(true);
        owner.push_back(tasks.size() + c);
      }
    // LL pieces land in any order, but a lazy schedule can hold back tens
    // of thousands of them, and offering every one at every step made long
    // pipelines quadratic. The first kPiecesOffered are offered (the
    // order is arbitrary already: delivery moves the newest piece into the
    // delivered one's place); the rest come later, still in any order.
    constexpr size_t kPiecesOffered = 256;
    for (size_t p = 0; p < std::min(pieces.size(), kPiecesOffered); ++p) {
      actions.push_back({PieceArrival, static_cast<int>(p)});
      ready.push_back(pieces[p].ready);
      isEvent.push_back(true);
      owner.push_back(tasks.size() + channels.size() + pieces[p].channel);
    }
    if (actions.empty())
      break;
    if (steps > limit) {
      emitError(model.program.getLoc())
          << "simulation stopped after " << limit << " steps";
      return failure();
    }
    auto [kind, index] = actions[strategy->pick(ready, isEvent, owner)];
    LogicalResult result = kind == TaskStep      ? step(index)
                           : kind == ChannelHead ? processHead(index)
                                                 : deliver(index);
    if (failed(result))
      return failure();
  }
  for (const Task &t : tasks)
    if (!t.done) {
      reportDeadlock(ctx);
      return failure();
    }
  return finish(ctx);
}

void Machine::reportDeadlock(llvm::StringRef ctx) {
  Operation *first = nullptr;
  for (const Task &t : tasks)
    if (!t.done && !t.atBoundary && !first)
      first = model.blocks[t.block].steps[t.pc].op;
  auto diag = error(first);
  diag << "deadlock: every remaining thread block is blocked";
  int shown = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task &t = tasks[i];
    if (t.done)
      continue;
    if (t.atBoundary) {
      if (++shown > 16)
        break;
      diag.attachNote() << taskName(i) << " ended launch " << t.launch + 1
                        << " and waits for the other thread blocks of rank "
                        << t.rank << " to end it";
      continue;
    }
    const BlockInfo &block = model.blocks[t.block];
    const Step &step = block.steps[t.pc];
    std::string what;
    llvm::raw_string_ostream os(what);
    os << taskName(i);
    if (step.kind == StepKind::Wait) {
      for (int c : step.channels) {
        const ChannelInfo &ch = model.channels[c];
        if (ch.peer < 0) {
          os << " waits on @" << ch.name << ", but no channel from rank "
             << ch.dst << " to rank " << ch.src
             << " of the same kind and id can signal it";
          break;
        }
        int64_t landed = channels[ch.peer].landed.size();
        int64_t target = waitTarget(i, c);
        if (landed >= target)
          continue;
        const ChannelInfo &peer = model.channels[ch.peer];
        if (peer.group == 1)
          os << " waits for signal #" << target << " on @" << peer.name
             << " from rank " << ch.dst << ", which has sent "
             << channels[ch.peer].signals;
        else
          os << " waits for @" << peer.name << "'s semaphore to reach "
             << target << " (" << peer.group
             << " blocks signal each round) from rank " << ch.dst
             << ", which has sent " << channels[ch.peer].signals;
        break;
      }
    } else if (step.kind == StepKind::Flush) {
      os << " waits for a flush";
    } else {
      llvm::SmallVector<std::pair<int64_t, int64_t>, 8> ranges;
      bool part = sliceRanges(t, step, ranges) >= 0;
      for (size_t s = 0; part && s < step.srcs.size(); ++s) {
        const ChunkRef &c = step.srcs[s];
        auto [lo, hi] = ranges[step.dsts.size() + s];
        hi = std::max(hi, lo + 1); // an empty read waits for one packet
        if (model.buffers[c.buffer].packet &&
            packetState(c.rank, c.buffer, lo, hi, currentFlag(t)) == 0) {
          os << " waits for LL packets of " << describe(c.rank, c.buffer, lo, hi)
             << " with flag " << currentFlag(t)
             << " that no LL put has sent";
          break;
        }
      }
    }
    if (++shown > 16) {
      diag.attachNote() << "... and more blocked thread blocks";
      break;
    }
    diag.attachNote(step.op->getLoc()) << what;
  }
  addContext(diag);
}

LogicalResult Machine::finish(llvm::StringRef ctx) {
  // A write into another rank's memory must be visible there before that
  // rank's kernel ends: a put needs a later signal on its channel (its wait
  // is the semaphore balance below), a switch broadcast a signal after it
  // that the peer waits for.
  for (auto [c, ch] : llvm::enumerate(model.channels)) {
    const ChannelState &cs = channels[c];
    if (cs.pending.empty())
      continue;
    const PendingPut &put = cs.pending.front();
    auto diag = error(put.issue.op);
    diag << "put on @" << ch.name << " into "
         << describe(put.rank, put.buffer, put.lo, put.hi)
         << " is never made visible: no later signal on @" << ch.name
         << " covers it, so rank " << ch.dst
         << " may finish before the data lands; signal @" << ch.name
         << " after the put and wait on ";
    if (ch.peer >= 0)
      diag << "@" << model.channels[ch.peer].name;
    else
      diag << "its other end";
    diag << " on rank " << ch.dst;
    addContext(diag);
    return failure();
  }
  for (const RemoteStore &store : remoteStores) {
    bool seen = llvm::any_of(tasks, [&](const Task &t) {
      return t.rank == store.rank && t.clock[store.access.task] > store.access.clock;
    });
    if (seen)
      continue;
    auto diag = error(store.access.op);
    diag << "switch broadcast into "
         << describe(store.rank, store.buffer, store.lo, store.hi)
         << " is never made visible to rank " << store.rank << ": no wait on rank "
         << store.rank << " follows a signal " << taskName(store.access.task)
         << " sent after it, so rank " << store.rank
         << " may finish before the data lands; signal rank " << store.rank
         << " after the broadcast and wait there";
    addContext(diag);
    return failure();
  }
  for (auto [c, ch] : llvm::enumerate(model.channels)) {
    ChannelState &cs = channels[c];
    // Every block of the waiting group must have consumed every increment.
    bool balanced = true;
    int64_t waits = 0, consumed = INT64_MAX; // increments every waiter took
    if (ch.peer >= 0)
      for (int64_t w : channels[ch.peer].waits) {
        waits = w;
        balanced &= w * ch.group == cs.signals;
        consumed = std::min(consumed, w * ch.group);
      }
    else
      balanced = cs.signals == 0, consumed = 0;
    if (!balanced) {
      // At the first signal that some waiter never consumed; the earlier
      // ones were matched.
      Operation *at = consumed < cs.signals && consumed >= 0
                          ? cs.signalOps[size_t(consumed)]
                          : ch.op;
      auto diag = error(at);
      diag << "unbalanced semaphore: " << cs.signals << " signal(s) on @"
           << ch.name << " but " << waits << " wait(s) on its other end";
      if (ch.peer >= 0)
        diag << " @" << model.channels[ch.peer].name;
      if (ch.group > 1)
        diag << " (a group of " << ch.group
             << " blocks sends that many signals per signal op)";
      diag << "; the next launch would see a stale count";
      addContext(diag);
      return failure();
    }
  }
  return success();
}
