//===- Tasks.cpp - Thread blocks stepped one operation at a time ---------===//
//
// A task is one thread block (one member of a thread-block group). Data
// operations run on the task's slice of the data: the pipeline iteration's
// slice of every chunk, then the member's share of the elements moved, cut
// as the kernels cut it (mscclc/device/Layout.h).
// Barrier-like steps (barrier, signal, wait, flush) act on the task alone:
// the blocks of a group synchronise only through semaphores.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "mscl/IR/MsclLaunches.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mscclc::sim;

static double perUs(double gbps) { return gbps * 1e3; }


void Machine::normalize(Task &task) {
  if (task.block < 0) // a rank's caller runs no steps
    return;
  const std::vector<Step> &steps = model.blocks[task.block].steps;
  while (true) {
    if (task.pc >= steps.size()) {
      if (task.launch + 1 < launches) {
        if (!task.atBoundary) {
          // The end of the kernel orders every access of the launch (an
          // access is ordered once its task's clock moved past it).
          task.atBoundary = true;
          ++task.clock[&task - tasks.data()];
          task.launchEnd[task.launch] = task.clock;
        }
        return;
      }
      task.done = true;
      return;
    }
    const Step &step = steps[task.pc];
    if (step.kind == StepKind::PipelineBegin) {
      // The generated kernels' trip count (Layout.h), whatever the body of
      // this block holds.
      task.unitElems = int64_t(mscclc_pipeline_unit_elems(
          mscclc_u64(step.unit), mscclc_u64(byteSize(type))));
      task.trip = int64_t(mscclc_pipeline_trips(mscclc_u64(layout.chunkSize()),
                                                mscclc_u64(task.unitElems)));
      if (task.trip == 0) { // count 0: no iteration at all
        task.pc = step.partner + 1;
        continue;
      }
      task.pipeBegin = task.pc;
      task.iter = 0;
      ++task.pc;
      continue;
    }
    if (step.kind == StepKind::PipelineEnd) {
      if (++task.iter < task.trip) {
        task.pc = task.pipeBegin + 1;
      } else {
        task.pipeBegin = -1;
        task.iter = 0;
        ++task.pc;
      }
      continue;
    }
    return;
  }
}

int64_t Machine::sliceRanges(
    const Task &task, const Step &step,
    llvm::SmallVectorImpl<std::pair<int64_t, int64_t>> &out,
    std::pair<int64_t, int64_t> *following) const {
  // One chunk per operand (Model.cpp splits runs where chunk steps differ
  // from one run, as the kernels do): positions count from each operand's
  // first element, and the step moves the smallest operand's size.
  llvm::SmallVector<int64_t, 8> bases;
  int64_t n = INT64_MAX;
  bool packets = false;
  auto add = [&](const ChunkRef &c) {
    const BufferInfo &info = model.buffers[c.buffer];
    packets |= info.packet;
    int64_t lo = layout.start(info, c.index);
    n = std::min(n, layout.start(info, c.index + c.count) - lo);
    // The parity half of packet buffers.
    bases.push_back(lo + mscl::launchCopy(info.packet, task.launch) *
                             layout.size(info));
  };
  for (const auto *list :
       std::initializer_list<const llvm::SmallVectorImpl<ChunkRef> *>{
           &step.dsts, &step.srcs, &step.remotes})
    for (const ChunkRef &c : *list)
      add(c);
  if (step.store)
    add(*step.store);
  if (bases.empty())
    n = 0;
  // The pipeline iteration's slice, then the member's run of it, as the
  // kernels cut them (Layout.h).
  int64_t begin = 0, end = n;
  if (following)
    *following = {-1, -1};
  if (task.pipeBegin >= 0) {
    begin = std::min(n, task.iter * task.unitElems);
    end = std::min(n, begin + task.unitElems);
    // A later empty iteration touches no LL packet (Operands.cpp).
    if (begin == end && task.iter > 0 && packets) {
      out.clear();
      return -1;
    }
  }
  int64_t group = model.blocks[task.block].group;
  if (group > 1) {
    mscclc_u64 b = 0, e = 0;
    if (task.run.first >= 0) {
      b = mscclc_u64(task.run.first);
      e = mscclc_u64(task.run.second);
    } else {
      mscclc_group_first(mscclc_u64(begin), mscclc_u64(end),
                         mscclc_u64(task.member), mscclc_u64(group),
                         mscclc_u64(task.stripe), &b, &e);
    }
    out.clear();
    if (b == MSCCLC_GROUP_NONE)
      return -1;
    if (following) {
      mscclc_u64 nb = 0, ne = 0;
      mscclc_group_next(b, e, mscclc_u64(end), mscclc_u64(group),
                        mscclc_u64(task.stripe), &nb, &ne);
      if (nb != MSCCLC_GROUP_NONE)
        *following = {int64_t(nb), int64_t(ne)};
    }
    begin = int64_t(b);
    end = int64_t(e);
  }
  out.clear();
  for (int64_t base : bases)
    out.push_back({base + begin, base + end});
  return end - begin;
}

LogicalResult Machine::touchFirstPackets(
    int task, const Step &step,
    llvm::ArrayRef<std::pair<int64_t, int64_t>> ranges) {
  // The first packet at the position exists once a chunk holds anything.
  if (layout.chunkSize() == 0)
    return success();
  size_t srcBase = step.dsts.size();
  for (size_t i = 0; i < step.srcs.size(); ++i) {
    const ChunkRef &c = step.srcs[i];
    if (model.buffers[c.buffer].packet)
      joinPacketWriters(task, c.rank, c.buffer, ranges[srcBase + i].first,
                        ranges[srcBase + i].first + 1);
  }
  for (size_t i = 0; i < step.dsts.size(); ++i) {
    const ChunkRef &d = step.dsts[i];
    if (!model.buffers[d.buffer].packet || i >= step.channels.size())
      continue;
    int64_t at = ranges[i].first;
    // The flag alone: the element keeps what it held.
    std::vector<Word> keep{data(d.rank, d.buffer)[at]};
    double duration = 0;
    if (failed(issuePut(task, step, nextInst++, step.channels[i], d, at,
                        at + 1, std::move(keep), -1, 0, duration)))
      return failure();
  }
  return success();
}

bool Machine::syncReady(int task, const Step &step) {
  switch (step.kind) {
  case StepKind::Wait:
    for (int c : step.channels) {
      int peer = model.channels[c].peer;
      if (peer < 0 || static_cast<int64_t>(channels[peer].landed.size()) <
                          waitTarget(task, c))
        return false;
    }
    return true;
  case StepKind::Flush:
    for (int c : step.channels)
      if (model.channels[c].isPort() && !channels[c].queue.empty())
        return false;
    return true;
  default:
    return true;
  }
}

bool Machine::stepEnabled(int task, const Step &step) {
  const Task &t = tasks[task];
  llvm::SmallVector<std::pair<int64_t, int64_t>, 8> ranges;
  int64_t n = sliceRanges(t, step, ranges);
  if (n < 0 || (n == 0 && layout.chunkSize() == 0))
    return true;
  size_t first = step.dsts.size();
  for (size_t i = 0; i < step.srcs.size(); ++i) {
    const ChunkRef &c = step.srcs[i];
    if (!model.buffers[c.buffer].packet)
      continue;
    auto [lo, hi] = ranges[first + i];
    hi = std::max(hi, lo + 1); // an empty read waits for its first packet
    if (packetState(c.rank, c.buffer, lo, hi, currentFlag(t)) == 0)
      return false;
  }
  return true;
}

int64_t Machine::waitTarget(int task, int c) const {
  const ChannelInfo &ch = model.channels[c];
  int64_t group = ch.peer >= 0 ? model.channels[ch.peer].group : 1;
  return (channels[c].waits[tasks[task].member] + 1) * group;
}

bool Machine::launchReady(int task) const {
  const Task &t = tasks[task];
  return llvm::all_of(tasks, [&](const Task &other) {
    // A task still at the end of an earlier launch has not ended this one.
    return other.rank != t.rank || other.block < 0 ||
           other.launch > t.launch ||
           (other.launch == t.launch && other.atBoundary);
  });
}

LogicalResult Machine::runCaller(int rank, int launch) {
  int index = callerOf(rank);
  Task &caller = tasks[index];
  if (launch > 0)
    for (const Task &other : tasks)
      if (other.rank == rank && other.block >= 0)
        join(caller.clock, other.launchEnd[launch - 1]);
  ++caller.clock[index];
  caller.launch = launch;
  caller.launchStart[launch] = caller.clock[index];
  currentTask = index;
  uint32_t inst = nextInst++;
  std::vector<Word> values;
  // The producer writes the next input; the output is the caller's again
  // once the rank's kernel ended (it reads the result, may reuse the
  // buffer, may pass it at another count): a write of both, with the same
  // values, so the result check stays as it is. In place, the one buffer
  // is both.
  llvm::SmallVector<int, 2> userBuffers{model.input};
  if (model.output != model.input)
    userBuffers.push_back(model.output);
  for (int buffer : userBuffers) {
    int64_t size = layout.size(model.buffers[buffer]);
    values.assign(data(rank, buffer).begin(), data(rank, buffer).begin() + size);
    if (failed(store(index, nullptr, inst, rank, buffer, 0, size,
                     values.data(), WriteKind::Local)))
      return failure();
  }
  ++caller.clock[index]; // what comes after knows the caller's accesses
  if (callerClocks.empty())
    callerClocks.assign(model.ranks, std::vector<Clock>(launches));
  callerClocks[rank][launch] = caller.clock;
  return success();
}

LogicalResult Machine::runFirstCallers() {
  // The caller's writes are stream-ordered before its own rank's kernel
  // only (mscl/IR/MsclLaunches.h): a peer's first launch may overlap them.
  for (int rank = 0; rank < model.ranks; ++rank) {
    if (failed(runCaller(rank, 0)))
      return failure();
    for (auto [i, task] : llvm::enumerate(tasks))
      if (task.rank == rank && task.block >= 0) {
        join(task.clock, tasks[callerOf(rank)].clock);
        ++task.clock[i];
      }
  }
  currentTask = -1;
  return success();
}

LogicalResult Machine::startNextLaunch(int task) {
  Task &t = tasks[task];
  const Task &caller = tasks[callerOf(t.rank)];
  if (caller.launch <= t.launch &&
      failed(runCaller(t.rank, t.launch + 1)))
    return failure();
  join(t.clock, tasks[callerOf(t.rank)].clock);
  ++t.launch;
  ++t.clock[task];
  t.launchStart[t.launch] = t.clock[task];
  t.atBoundary = false;
  t.pc = 0;
  normalize(t);
  return success();
}

bool Machine::enabled(int task) {
  Task &t = tasks[task];
  if (t.done)
    return false;
  if (t.atBoundary)
    return launchReady(task);
  const Step &step = model.blocks[t.block].steps[t.pc];
  return step.isSync() ? syncReady(task, step) : stepEnabled(task, step);
}

LogicalResult Machine::step(int task) {
  Task &t = tasks[task];
  if (t.atBoundary)
    return startNextLaunch(task);
  currentTask = task;
  const Step &step = model.blocks[t.block].steps[t.pc];
  if (step.isSync()) {
    if (failed(runSync(task, step)))
      return failure();
  } else {
    // A group member does a data step one run at a time.
    std::pair<int64_t, int64_t> following{-1, -1};
    if (failed(runData(task, step, &following)))
      return failure();
    t.run = following;
    if (following.first >= 0)
      return success();
  }
  ++t.pc;
  normalize(t);
  return success();
}

/// Barrier-like steps act on one block: a group's blocks synchronise only
/// through semaphores, as in the generated code (docs/backend.md). A signal
/// op sends one increment per block; the k-th wait of a block needs k times
/// the signalling group's size, and joins the clocks of every signal up to
/// that count (what an acquire load of the counter synchronises with).
LogicalResult Machine::runSync(int task, const Step &step) {
  Task &t = tasks[task];
  double start = t.time;
  llvm::SmallVector<int, 2> flowIn, flowOut;
  uint32_t inst = nextInst++;
  Clock &clock = t.clock;
  if (step.kind == StepKind::Wait) {
    for (int c : step.channels) {
      int64_t target = waitTarget(task, c);
      int64_t first = target - model.channels[model.channels[c].peer].group;
      const auto &landed = channels[model.channels[c].peer].landed;
      for (int64_t i = std::max<int64_t>(first, 0); i < target; ++i) {
        join(clock, *landed[i].clock);
        start = std::max(start, landed[i].time);
        if (landed[i].flow >= 0)
          flowIn.push_back(landed[i].flow);
      }
      ++channels[c].waits[t.member];
    }
  } else if (step.kind == StepKind::Flush) {
    for (int c : step.channels) {
      for (const InFlightSource &src : channels[c].inflight)
        --region(src.rank, src.buffer).inflight;
      channels[c].inflight.clear();
      if (model.channels[c].isPort())
        start = std::max(start, channels[c].dataReady);
    }
  }
  ++clock[task]; // the implied block barrier
  if (step.kind == StepKind::Signal) {
    for (int c : step.channels) {
      const ChannelInfo &ch = model.channels[c];
      ChannelState &cs = channels[c];
      Access tag{task, clock[task], inst, false, step.op};
      ++clock[task];
      double lat = !ch.isPort()      ? cost.signalLatency
                   : ch.crossNode ? cost.netLatency
                                  : cost.portLatency;
      double ready = std::max(start, cs.dataReady) + lat;
      if (ch.isPort())
        cs.dataReady = ready;
      int flow = tracing ? flowCount++ : -1;
      if (flow >= 0)
        flowOut.push_back(flow);
      cs.queue.push_back({true, cs.nextSeq++, ready,
                          std::make_shared<const Clock>(clock), tag, flow});
      ++cs.signals;
      cs.signalOps.push_back(step.op);
    }
  }
  double end = start + cost.opOverhead;
  if (tracing) {
    TraceSlice &slice = addSlice(task, step, t.time, end, 0);
    slice.flowIn = flowIn;
    slice.flowOut = flowOut;
  }
  t.time = end;
  return success();
}

LogicalResult Machine::runData(int task, const Step &step,
                               std::pair<int64_t, int64_t> *following) {
  Task &t = tasks[task];
  uint32_t inst = nextInst++;
  llvm::SmallVector<std::pair<int64_t, int64_t>, 8> ranges;
  int64_t n = sliceRanges(t, step, ranges, following);
  if (n < 0)
    return success(); // a group member with no part in it
  if (n == 0 && failed(touchFirstPackets(task, step, ranges)))
    return failure();
  double bytes = static_cast<double>(n) * byteSize(type);
  double start = t.time;
  // Spinning on LL packets ends when the last one arrived.
  for (size_t i = 0; i < step.srcs.size(); ++i) {
    const ChunkRef &c = step.srcs[i];
    if (model.buffers[c.buffer].packet) {
      auto [lo, hi] = ranges[step.dsts.size() + i];
      packetState(c.rank, c.buffer, lo, hi, currentFlag(t), &start);
    }
  }
  double duration = cost.opOverhead;
  auto local = [&](double factor) {
    return cost.localLatency +
           factor * bytes /
               perUs(std::min(cost.blockBandwidth, cost.localBandwidth));
  };
  size_t srcBase = step.dsts.size();
  size_t remBase = srcBase + step.srcs.size();
  Operation *op = step.op;
  auto loadSrc = [&](size_t i, std::vector<Word> &out) {
    const ChunkRef &c = step.srcs[i];
    auto [lo, hi] = ranges[srcBase + i];
    return load(task, op, inst, c.rank, c.buffer, lo, hi, out);
  };
  // Reduces every local source (then `extra`) into scratchA.
  auto reduceSources = [&]() -> LogicalResult {
    if (failed(loadSrc(0, scratchA)))
      return failure();
    for (size_t i = 1; i < step.srcs.size(); ++i) {
      if (failed(loadSrc(i, scratchB)))
        return failure();
      reduceInto(type, reduce, scratchA.data(), scratchB.data(), n);
    }
    return success();
  };
  auto storeDst = [&](const ChunkRef &c, std::pair<int64_t, int64_t> range,
                      WriteKind kind) {
    return store(task, op, inst, c.rank, c.buffer, range.first,
                 range.second, scratchA.data(), kind);
  };

  if (n > 0) {
    switch (step.kind) {
    case StepKind::Copy:
      if (failed(loadSrc(0, scratchA)) ||
          failed(storeDst(step.dsts[0], ranges[0], WriteKind::Local)))
        return failure();
      duration += local(2);
      break;
    case StepKind::Reduce:
      if (failed(reduceSources()) ||
          failed(storeDst(step.dsts[0], ranges[0], WriteKind::Local)))
        return failure();
      duration += local(step.srcs.size() + 1);
      break;
    case StepKind::Put:
      if (failed(loadSrc(0, scratchA)) ||
          failed(issuePut(task, step, inst, step.channels[0], step.dsts[0],
                          ranges[0].first, ranges[0].second, scratchA,
                          step.srcs[0].buffer, ranges[srcBase].first,
                          duration)))
        return failure();
      break;
    case StepKind::Get:
    case StepKind::ReadReduce: {
      if (step.kind == StepKind::ReadReduce && !step.srcs.empty()) {
        if (failed(reduceSources()))
          return failure();
      } else {
        scratchA.clear();
      }
      for (size_t i = 0; i < step.remotes.size(); ++i) {
        const ChunkRef &c = step.remotes[i];
        auto [lo, hi] = ranges[remBase + i];
        std::vector<Word> &into = scratchA.empty() ? scratchA : scratchB;
        if (failed(load(task, op, inst, c.rank, c.buffer, lo, hi, into)))
          return failure();
        if (&into == &scratchB)
          reduceInto(type, reduce, scratchA.data(), scratchB.data(), n);
      }
      if (failed(storeDst(step.dsts[0], ranges[0], WriteKind::Local)))
        return failure();
      duration += cost.memHBLatency +
                  bytes * step.remotes.size() /
                      perUs(std::min(cost.blockBandwidth,
                                     cost.memHBBandwidth)) +
                  local(step.srcs.size());
      break;
    }
    case StepKind::ReducePut: {
      if (failed(reduceSources()))
        return failure();
      duration += local(step.srcs.size());
      for (size_t i = 0; i < step.channels.size(); ++i) {
        const ChunkRef &c = step.srcs[0];
        if (failed(issuePut(task, step, inst, step.channels[i], step.dsts[i],
                            ranges[i].first, ranges[i].second, scratchA,
                            c.buffer, ranges[srcBase].first, duration)))
          return failure();
      }
      if (step.store &&
          failed(storeDst(*step.store, ranges.back(), WriteKind::Local)))
        return failure();
      break;
    }
    case StepKind::SwitchReduce: {
      const SwitchInfo &sw = model.switches[step.switchId];
      const ChunkRef &src = step.srcs[0];
      auto [lo, hi] = ranges[srcBase];
      for (auto [i, r] : llvm::enumerate(sw.ranks)) {
        std::vector<Word> &into = i == 0 ? scratchA : scratchB;
        if (failed(load(task, op, inst, r, src.buffer, lo, hi, into)))
          return failure();
        if (i > 0)
          reduceInto(type, reduce, scratchA.data(), scratchB.data(), n);
      }
      if (failed(storeDst(step.dsts[0], ranges[0], WriteKind::Local)))
        return failure();
      duration += cost.switchLatency +
                  bytes / perUs(std::min(cost.blockBandwidth,
                                         cost.switchBandwidth));
      break;
    }
    case StepKind::SwitchBroadcast: {
      if (failed(loadSrc(0, scratchA)))
        return failure();
      const SwitchInfo &sw = model.switches[step.switchId];
      for (int r : sw.ranks) {
        if (failed(store(task, op, inst, r, step.dsts[0].buffer,
                         ranges[0].first, ranges[0].second, scratchA.data(),
                         r == t.rank ? WriteKind::Local : WriteKind::Remote)))
          return failure();
        if (r != t.rank)
          remoteStores.push_back({Access{task, t.clock[task], inst, false, op},
                                  r, step.dsts[0].buffer, ranges[0].first,
                                  ranges[0].second});
      }
      duration += cost.switchLatency +
                  bytes / perUs(std::min(cost.blockBandwidth,
                                         cost.switchBandwidth));
      break;
    }
    default:
      break;
    }
  }
  t.time = start + duration;
  if (tracing)
    addSlice(task, step, start, t.time, n);
  return success();
}

TraceSlice &Machine::addSlice(int task, const Step &step, double start,
                              double end, int64_t elements) {
  const Task &t = tasks[task];
  const BlockInfo &block = model.blocks[t.block];
  if (trace.size() >= maxTraceSlices) {
    truncated = true;
    return overflowSlice;
  }
  TraceSlice slice;
  slice.rank = block.rank;
  slice.tb = block.id;
  slice.member = t.member;
  slice.name = step.op->getName().getStringRef().drop_front(5).str();
  slice.start = start;
  slice.end = end;
  slice.bytes = elements * byteSize(type);
  if (auto loc = dyn_cast<FileLineColLoc>(step.op->getLoc())) {
    llvm::raw_string_ostream os(slice.loc);
    os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  }
  if (t.pipeBegin >= 0)
    slice.iteration = t.iter;
  trace.push_back(std::move(slice));
  return trace.back();
}
