//===- RaceDetector.cpp - Happens-before races over the abstract schedule -===//
//
// Vector clocks, one component per thread block. Every step ticks its
// block's clock; its accesses carry that epoch. A wait joins the clock the
// signalling block had at the signal it consumes; an LL read joins the clock
// of the LL put that wrote its packets. An access B is ordered after access
// A when B's block knows A's epoch.
//
// Two kinds of access do not happen at their operation's epoch:
// - the remote write of a put on an HB memory or port channel becomes
//   visible only when a later signal on the same channel lands, which only
//   the block waiting on the other end observes. Such a write is a
//   "transfer": it is ordered before an access when the access's block knows
//   the epoch of the wait that consumed the publishing signal (known only
//   once that wait ran; before that nothing is ordered after it). Later puts
//   on the same channel are ordered after it (FIFO).
// - the source read of a put on a port channel lasts until a flush on the
//   channel (or until the data is seen to have landed): it is ordered before
//   an access that knows the flush's epoch or the publishing wait.
//
// Each chunk slot remembers its last write and the reads since (one per
// block, plus pending port reads), in the style of FastTrack; hb is the same
// in every schedule (see Schedule.h), so checking along one schedule finds
// every unordered pair that involves the last write or a read since.
//
// Visibility is an obligation of its own, checked once every block ran to
// its end: a write into another rank's memory must be visible there before
// that rank's kernel ends, or the host may read the buffer (or the next
// launch reuse it) before the data lands. A transfer needs a later signal
// on its channel (the pairing check gives that signal its wait); a switch
// broadcast into a peer needs a signal after it that some block of the
// peer waits for (the peer's clock knows the broadcast). LL packets need
// nothing: their readers spin on the flags.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

#include <memory>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

using Clock = std::vector<uint32_t>;

struct Access {
  int block = -1;
  uint32_t epoch = 0;
  int transfer = -1; // index into transfers, or -1 for a plain access
  Operation *op = nullptr;
};

struct SlotState {
  Access write;
  std::vector<Access> reads;
};

struct Transfer {
  int channel;
  int block;
  int step;
  int64_t slot;            // first chunk slot it writes
  int64_t signal = -1;     // number of the signal on the channel publishing it
  uint32_t flushEpoch = 0; // epoch of the flush that completed it, 0 if none
};

constexpr unsigned kMaxReports = 20;

/// A plain store into another rank's memory (a switch broadcast).
struct RemoteWrite {
  int block;
  uint32_t epoch;
  mlir::Operation *op;
  int64_t rank;
  int64_t slot;
};

/// A block's clock at one of its steps. Consecutive signals of a block with
/// no join in between differ only in the block's own component, so they
/// share `base` and keep their own epoch apart.
struct Snapshot {
  std::shared_ptr<const Clock> base;
  int block = -1;
  uint32_t epoch = 0;
};

} // namespace

struct RaceDetector::Impl {
  Impl(const ProgramModel &model, const Scheduler &scheduler)
      : model(model), scheduler(scheduler),
        clocks(model.blocks.size(), Clock(model.blocks.size(), 0)),
        slots(model.numSlots()), shared(model.blocks.size()),
        snapshots(model.channels.size()),
        snapshotHead(model.channels.size(), 0),
        signalsSent(model.channels.size(), 0),
        waitEpochs(model.channels.size()), unsignalled(model.channels.size()),
        unflushed(model.channels.size()) {}

  void step(int block, int stepIndex);
  void join(int block, const Snapshot &from) {
    Clock &into = clocks[block];
    const Clock &base = *from.base;
    bool grew = false;
    for (size_t i = 0, e = into.size(); i < e; ++i)
      if (base[i] > into[i]) {
        into[i] = base[i];
        grew = true;
      }
    if (from.epoch > into[from.block]) {
      into[from.block] = from.epoch;
      grew = true;
    }
    if (grew)
      shared[block].reset();
  }
  Snapshot snapshot(int block) {
    if (!shared[block])
      shared[block] = std::make_shared<const Clock>(clocks[block]);
    return {shared[block], block, clocks[block][block]};
  }
  bool published(const Clock &clock, const Transfer &t) const;
  bool ordered(const Clock &clock, const Access &prev, const Access &cur) const;
  void read(int64_t slot, const Clock &clock, const Access &cur);
  void write(int64_t slot, const Clock &clock, const Access &cur);
  void report(int64_t slot, const Access &prev, const Access &cur,
              bool prevIsWrite, bool curIsWrite);
  /// Static: the wait that consumes the signal publishing a put, if any.
  Operation *coveringWait(const Transfer &t) const;
  /// A read of `chunk` by `read`'s block that a later put into it makes
  /// a race: reported at the read, naming the wait it lacks.
  void reportEarlyRead(const std::string &chunk, const Access &read,
                       const Transfer &put, Operation *putOp);
  /// A note at the wait `read` follows when that wait is not on the other
  /// end of `channel`.
  void noteOtherWait(InFlightDiagnostic &diag, const Access &read,
                     int channel);
  /// After a complete schedule: every remote write is visible at its rank.
  void checkVisibility();
  bool budget() {
    if (reports >= kMaxReports) {
      ++suppressed;
      return false;
    }
    ++reports;
    return true;
  }

  const ProgramModel &model;
  const Scheduler &scheduler;
  std::vector<Clock> clocks;
  std::vector<SlotState> slots;
  /// Per block: a copy of its clock still valid but for its own component.
  std::vector<std::shared_ptr<const Clock>> shared;
  /// Per channel: clocks at its signals not yet consumed by a wait.
  std::vector<std::vector<Snapshot>> snapshots;
  std::vector<size_t> snapshotHead;
  std::vector<int64_t> signalsSent;
  /// Per channel (waiting end): the epoch of each of its waits.
  std::vector<std::vector<uint32_t>> waitEpochs;
  std::vector<std::vector<int>> unsignalled, unflushed;
  std::vector<Transfer> transfers;
  /// Per transfer: part of a reported race (its visibility is not reported
  /// again).
  std::vector<char> transferRaced;
  std::vector<RemoteWrite> remoteWrites;
  /// Clocks of LL puts, for the reads of their packets.
  llvm::DenseMap<std::pair<int, int>, Snapshot> packetClocks;
  llvm::DenseSet<std::pair<Operation *, Operation *>> reportedPairs;
  unsigned reports = 0;
  unsigned suppressed = 0;
};

RaceDetector::RaceDetector(const ProgramModel &model,
                           const Scheduler &scheduler)
    : impl(std::make_unique<Impl>(model, scheduler)) {}
RaceDetector::~RaceDetector() = default;
void RaceDetector::step(int block, int step) { impl->step(block, step); }
bool RaceDetector::finish(bool completed) {
  if (completed)
    impl->checkVisibility();
  if (impl->suppressed)
    impl->model.program->emitError()
        << impl->suppressed << " more unordered accesses not shown";
  return impl->reports == 0;
}

bool RaceDetector::Impl::published(const Clock &clock,
                                   const Transfer &t) const {
  int waitEnd = model.channels[t.channel].otherEnd;
  if (t.signal < 0 || waitEnd < 0)
    return false;
  const std::vector<uint32_t> &epochs = waitEpochs[waitEnd];
  if (t.signal >= static_cast<int64_t>(epochs.size()))
    return false;
  return clock[model.channels[waitEnd].owner] >= epochs[t.signal];
}

bool RaceDetector::Impl::ordered(const Clock &clock, const Access &prev,
                                 const Access &cur) const {
  if (prev.transfer < 0)
    return clock[prev.block] >= prev.epoch;
  const Transfer &t = transfers[prev.transfer];
  if (cur.transfer >= 0 && transfers[cur.transfer].channel == t.channel)
    return true;
  return published(clock, t);
}

Operation *RaceDetector::Impl::coveringWait(const Transfer &t) const {
  const ChannelInfo &channel = model.channels[t.channel];
  int64_t n = 0;
  for (int s : channel.signalSteps) {
    if (s >= t.step)
      break;
    ++n;
  }
  // The put's own step may signal (put_with_signal): it counts as after.
  if (channel.otherEnd < 0 ||
      n >= static_cast<int64_t>(channel.signalSteps.size()))
    return nullptr;
  const ChannelInfo &waiter = model.channels[channel.otherEnd];
  if (n >= static_cast<int64_t>(waiter.waitSteps.size()))
    return nullptr;
  return model.blocks[waiter.owner].steps[waiter.waitSteps[n]].op;
}

void RaceDetector::Impl::report(int64_t slot, const Access &prev,
                                const Access &cur, bool prevIsWrite,
                                bool curIsWrite) {
  for (int t : {prev.transfer, cur.transfer})
    if (t >= 0)
      transferRaced[t] = 1;
  if (!reportedPairs.insert({cur.op, prev.op}).second || !budget())
    return;
  std::string chunk = model.slotName(slot);
  std::string other = model.blockName(prev.block);
  const Transfer *t = prev.transfer >= 0 ? &transfers[prev.transfer] : nullptr;
  if (!curIsWrite && t) {
    InFlightDiagnostic diag =
        cur.op->emitError()
        << "reads " << chunk << " before the wait that makes the put writing it"
        << " visible";
    Operation *wait = coveringWait(*t);
    if (!wait) {
      diag.attachNote(prev.op->getLoc())
          << "written by this put on " << model.channelName(t->channel) << " ("
          << other << "), which no later signal on "
          << model.channelName(t->channel) << " publishes";
      return;
    }
    diag.attachNote(prev.op->getLoc())
        << "written by this put on " << model.channelName(t->channel) << " ("
        << other << ")";
    diag.attachNote(wait->getLoc())
        << "the data is visible only after this wait, which does not happen "
           "before the read";
    noteOtherWait(diag, cur, t->channel);
    return;
  }
  // A put landing on a chunk that a block of its destination rank read
  // before: the read came too early (a wait missing, or on another
  // channel), not the put.
  const Transfer *landing =
      cur.transfer >= 0 ? &transfers[cur.transfer] : nullptr;
  if (curIsWrite && !prevIsWrite && !t && landing &&
      model.blocks[prev.block].rank == model.channels[landing->channel].dst) {
    reportEarlyRead(chunk, prev, *landing, cur.op);
    return;
  }
  if (curIsWrite && !prevIsWrite && t) {
    InFlightDiagnostic diag = cur.op->emitError()
                              << "overwrites " << chunk
                              << ", the source of a port-channel put that may "
                                 "still be reading it";
    diag.attachNote(prev.op->getLoc())
        << "the put on " << model.channelName(t->channel) << " (" << other
        << "); flush " << model.channelName(t->channel)
        << " before reusing its source";
    return;
  }
  InFlightDiagnostic diag = cur.op->emitError();
  if (curIsWrite && prevIsWrite)
    diag << "writes " << chunk << ", which " << other
         << " also writes; nothing orders the two writes";
  else if (curIsWrite)
    diag << "writes " << chunk << " while " << other
         << " may still be reading it; nothing orders the read before the "
            "write";
  else
    diag << "reads " << chunk << " while " << other
         << " may still be writing it; nothing orders the write before the "
            "read";
  diag.attachNote(prev.op->getLoc())
      << (prevIsWrite ? "the unordered write" : "the unordered read")
      << (t ? " (a put on " + model.channelName(t->channel) + ")" : "");
}

void RaceDetector::Impl::read(int64_t slot, const Clock &clock,
                              const Access &cur) {
  SlotState &state = slots[slot];
  if (state.write.op && !ordered(clock, state.write, cur))
    report(slot, state.write, cur, true, false);
  // One plain read per block suffices (program order); a port put's read
  // on a channel subsumes the earlier ones on that channel (FIFO).
  for (Access &prev : state.reads) {
    bool same = cur.transfer < 0
                    ? prev.transfer < 0 && prev.block == cur.block
                    : prev.transfer >= 0 && transfers[prev.transfer].channel ==
                                                transfers[cur.transfer].channel;
    if (same) {
      prev = cur;
      return;
    }
  }
  state.reads.push_back(cur);
}

void RaceDetector::Impl::write(int64_t slot, const Clock &clock,
                               const Access &cur) {
  SlotState &state = slots[slot];
  if (state.write.op && !ordered(clock, state.write, cur))
    report(slot, state.write, cur, true, true);
  for (const Access &prev : state.reads) {
    if (prev.transfer >= 0) {
      // A pending port read is complete once flushed or seen landed.
      const Transfer &t = transfers[prev.transfer];
      bool done = (t.flushEpoch && clock[t.block] >= t.flushEpoch) ||
                  published(clock, t);
      if (!done)
        report(slot, prev, cur, false, true);
      continue;
    }
    if (!ordered(clock, prev, cur))
      report(slot, prev, cur, false, true);
  }
  state.write = cur;
  state.reads.clear();
}

void RaceDetector::Impl::step(int block, int stepIndex) {
  const Step &step = model.blocks[block].steps[stepIndex];
  Clock &clock = clocks[block];
  uint32_t epoch = ++clock[block];

  for (int channel : step.waits) {
    int other = model.channels[channel].otherEnd;
    size_t &head = snapshotHead[other];
    join(block, snapshots[other][head]);
    snapshots[other][head] = Snapshot();
    ++head;
    waitEpochs[channel].push_back(epoch);
  }
  if (step.readsPackets)
    for (const Move &move : step.moves)
      for (const Range &src : move.srcs) {
        if (!model.isPacket(src))
          continue;
        const auto &writers = scheduler.packetWriters();
        for (int64_t j = 0; j < src.count; ++j) {
          auto it = writers.find(model.slot(src, j));
          if (it == writers.end())
            continue;
          StepRef writer = it->second.front();
          auto clockIt = packetClocks.find({writer.block, writer.step});
          if (clockIt != packetClocks.end())
            join(block, clockIt->second);
        }
      }

  Access plain{block, epoch, -1, step.op};
  // Reads of every move first: an operation reads all operands before it
  // stores (reduce_put may store into one of its sources).
  std::vector<int> moveTransfers(step.moves.size(), -1);
  for (size_t m = 0; m < step.moves.size(); ++m) {
    const Move &move = step.moves[m];
    bool remote = move.channel >= 0 && !model.channels[move.channel].ll;
    if (remote) {
      moveTransfers[m] = static_cast<int>(transfers.size());
      transfers.push_back(
          {move.channel, block, stepIndex, model.slot(move.dst, 0)});
      transferRaced.push_back(0);
      unsignalled[move.channel].push_back(moveTransfers[m]);
      if (model.channels[move.channel].port)
        unflushed[move.channel].push_back(moveTransfers[m]);
    }
    if (move.sharesSources && !move.asyncSource)
      continue; // read once for the previous move, at the same epoch
    for (const Range &src : move.srcs) {
      if (model.isPacket(src))
        continue;
      Access access = plain;
      if (move.asyncSource) {
        access.transfer = moveTransfers[m];
        access.epoch = 0;
      }
      for (int64_t j = 0; j < src.count; ++j)
        read(model.slot(src, j), clock, access);
    }
  }
  for (size_t m = 0; m < step.moves.size(); ++m) {
    const Move &move = step.moves[m];
    if (model.isPacket(move.dst))
      continue; // LL packets: one writer, reads wait for it (checked apart)
    Access access = plain;
    access.transfer = moveTransfers[m];
    if (move.channel < 0 && move.dst.rank != model.blocks[block].rank &&
        move.dst.count > 0)
      remoteWrites.push_back({block, epoch, step.op, move.dst.rank,
                              model.slot(move.dst, 0)});
    for (int64_t j = 0; j < move.dst.count; ++j)
      write(model.slot(move.dst, j), clock, access);
  }

  for (int channel : step.signals) {
    int64_t n = signalsSent[channel]++;
    for (int t : unsignalled[channel])
      transfers[t].signal = n;
    unsignalled[channel].clear();
    snapshots[channel].push_back(snapshot(block));
  }
  for (int channel : step.flushes) {
    for (int t : unflushed[channel])
      transfers[t].flushEpoch = epoch;
    unflushed[channel].clear();
  }
  for (const Move &move : step.moves)
    if (model.isPacket(move.dst)) {
      packetClocks[{block, stepIndex}] = snapshot(block);
      break;
    }
}

void RaceDetector::Impl::reportEarlyRead(const std::string &chunk,
                                         const Access &read,
                                         const Transfer &put,
                                         Operation *putOp) {
  std::string channel = model.channelName(put.channel);
  InFlightDiagnostic diag =
      read.op->emitError()
      << "reads " << chunk
      << " before the wait that makes the put writing it visible";
  diag.attachNote(putOp->getLoc())
      << "written by this put on " << channel << " ("
      << model.blockName(put.block) << ")";
  if (Operation *wait = coveringWait(put))
    diag.attachNote(wait->getLoc())
        << "the data is visible only after this wait, which does not happen "
           "before the read";
  noteOtherWait(diag, read, put.channel);
}

void RaceDetector::Impl::noteOtherWait(InFlightDiagnostic &diag,
                                       const Access &read, int channel) {
  // The reader's last wait before the read, when it waited on another
  // channel: the likely slip.
  const std::vector<Step> &steps = model.blocks[read.block].steps;
  int waitEnd = model.channels[channel].otherEnd;
  const Step *lastWait = nullptr;
  for (const Step &step : steps) {
    if (step.op == read.op)
      break;
    if (!step.waits.empty())
      lastWait = &step;
  }
  if (lastWait && !llvm::is_contained(lastWait->waits, waitEnd))
    diag.attachNote(lastWait->op->getLoc())
        << "the read follows this wait on "
        << model.channelName(lastWait->waits.front()) << ", which does not "
        << "publish a put on " << model.channelName(channel);
}

void RaceDetector::Impl::checkVisibility() {
  llvm::DenseSet<Operation *> reported;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer &t = transfers[i];
    Operation *op = model.blocks[t.block].steps[t.step].op;
    if (t.signal >= 0 || transferRaced[i] || !reported.insert(op).second ||
        !budget())
      continue;
    const ChannelInfo &channel = model.channels[t.channel];
    InFlightDiagnostic diag =
        op->emitError()
        << "put on " << model.channelName(t.channel) << " into "
        << model.slotName(t.slot)
        << " is never made visible: no later signal on "
        << model.channelName(t.channel) << " covers it, so rank "
        << channel.dst << " may finish before the data lands; signal "
        << model.channelName(t.channel) << " after the put and wait on ";
    if (channel.otherEnd >= 0)
      diag << model.channelName(channel.otherEnd);
    else
      diag << "its other end";
    diag << " on rank " << channel.dst;
  }
  std::vector<std::vector<int>> blocksOf(model.ranks);
  for (int b = 0, e = static_cast<int>(model.blocks.size()); b < e; ++b)
    blocksOf[model.blocks[b].rank].push_back(b);
  for (const RemoteWrite &w : remoteWrites) {
    bool seen = llvm::any_of(blocksOf[w.rank], [&](int b) {
      return clocks[b][w.block] >= w.epoch;
    });
    if (seen || !reported.insert(w.op).second || !budget())
      continue;
    w.op->emitError() << "switch broadcast into " << model.slotName(w.slot)
                      << " is never made visible to rank " << w.rank
                      << ": no wait on rank " << w.rank
                      << " follows a signal sent after it, so rank " << w.rank
                      << " may finish before the data lands; signal rank "
                      << w.rank << " after the broadcast and wait there";
  }
}
