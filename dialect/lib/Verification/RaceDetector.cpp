//===- RaceDetector.cpp - Happens-before races over the abstract schedule -===//
//
// Vector clocks, one component per thread block. Every step ticks its
// block's clock; its accesses carry that epoch. A wait joins the clock the
// signalling block had at the signal it consumes (the signal's release
// fence orders the block's earlier accesses before it). An LL read joins
// only the clock the writing block had when its launch started: seeing a
// packet of this launch proves the writer's kernel runs, so its rank's
// earlier launches and its caller are done, but nothing fences the
// writer's earlier accesses of this launch before its packet stores
// (docs/execution-model.md). The packet's own data is the packet checks'.
// An access B is ordered after access A when B's block knows A's epoch.
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
// Over a model of several launches (AcrossLaunches.cpp) the first step of
// a launch joins the clocks every block of its rank had at the end of the
// previous launch, and an unordered pair from two launches is reported by
// reportAcrossLaunches. Packet slots are tracked there too: an LL put two
// launches later writes the same parity half, so every read of it in the
// earlier launch must be ordered before the put. Between two launches of a
// rank its caller (the host, or the next kernel on its stream) reads the
// output and writes the next input: that is a clock component of its own
// per rank ("host"), after every block's end of the launch and before every
// block's start of the next; it writes the first input before launch 0,
// ordered before the rank's own blocks only (mscl/IR/MsclLaunches.h).
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
  int launch = 0;
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
        clocks(model.blocks.size() + model.ranks,
               Clock(model.blocks.size() + model.ranks, 0)),
        stateOf(model.numSlots(), kNoState), shared(model.blocks.size() + model.ranks),
        snapshots(model.channels.size()),
        snapshotHead(model.channels.size(), 0),
        signalsSent(model.channels.size(), 0),
        waitEpochs(model.channels.size()), unsignalled(model.channels.size()),
        unflushed(model.channels.size()), blocksOfRank(model.ranks),
        launchEnds(model.blocks.size(),
                   std::vector<Snapshot>(model.launches)),
        hostLaunch(model.ranks, -1), hostSnapshot(model.ranks),
        launchStart(model.blocks.size()) {
    for (int b = 0, e = static_cast<int>(model.blocks.size()); b < e; ++b)
      blocksOfRank[model.blocks[b].rank].push_back(b);
  }

  void step(int block, int stepIndex);
  /// The kernel boundary: the first step of a launch knows everything its
  /// rank did in the previous one.
  void startLaunch(int block, int launch) {
    int64_t rank = model.blocks[block].rank;
    if (hostLaunch[rank] < launch)
      runHost(rank, launch);
    join(block, hostSnapshot[rank]);
  }
  /// The caller of `rank` before its launch `launch`: it knows all the rank
  /// did, reads the output (not before the first launch) and writes the
  /// next input.
  void runHost(int64_t rank, int launch);
  int hostOf(int64_t rank) const {
    return static_cast<int>(model.blocks.size() + rank);
  }
  bool isHost(int block) const {
    return block >= static_cast<int>(model.blocks.size());
  }
  /// Over several launches: an LL put into a packet slot read in an earlier
  /// launch (of the same parity) must come after every such read.
  void writePacket(int64_t slot, const Clock &clock, const Access &cur);
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
  /// Per slot, its accesses: an index into `states`, kNoState for a slot
  /// nothing touched yet (4 bytes a slot, the rest only for those touched,
  /// so that the cost follows the program's operations).
  static constexpr uint32_t kNoState = ~0u;
  std::vector<uint32_t> stateOf;
  std::vector<SlotState> states;
  SlotState &slotState(int64_t slot) {
    uint32_t &index = stateOf[size_t(slot)];
    if (index == kNoState) {
      index = static_cast<uint32_t>(states.size());
      states.emplace_back();
    }
    return states[index];
  }
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
  /// Clocks of LL puts, for the reads of their packets: the writer's clock
  /// at the start of its launch.
  llvm::DenseMap<std::pair<int, int>, Snapshot> packetClocks;

  llvm::DenseSet<std::pair<Operation *, Operation *>> reportedPairs;
  std::vector<llvm::SmallVector<int, 4>> blocksOfRank;
  /// Per block and launch: its clock after its last step of the launch.
  std::vector<std::vector<Snapshot>> launchEnds;
  /// Over several launches: the reads of each packet slot since its put.
  llvm::DenseMap<int64_t, llvm::SmallVector<Access, 1>> packetReads;
  /// Over several launches: the launch of the last put into each packet
  /// slot.
  llvm::DenseMap<int64_t, int> packetWriteLaunch;
  /// Per rank: the last launch its caller ran before, and its clock then.
  std::vector<int> hostLaunch;
  std::vector<Snapshot> hostSnapshot;
  /// Per block: its clock when it started its current launch.
  std::vector<Snapshot> launchStart;
  /// (reader block, writer block) -> the reader's last read of the
  /// writer's LL packets, for the note on a race between the two.
  llvm::DenseMap<std::pair<int, int>, Operation *> llHeard;
  unsigned reports = 0;
  unsigned suppressed = 0;
};

RaceDetector::RaceDetector(const ProgramModel &model,
                           const Scheduler &scheduler)
    : impl(std::make_unique<Impl>(model, scheduler)) {}
RaceDetector::~RaceDetector() = default;
void RaceDetector::step(int block, int step) { impl->step(block, step); }
bool RaceDetector::finish(bool checkVisibility) {
  if (checkVisibility)
    impl->checkVisibility();
  if (impl->suppressed)
    impl->model.program->emitError()
        << impl->suppressed << " more race report"
        << (impl->suppressed == 1 ? "" : "s") << " not shown";
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
  if (prev.launch != cur.launch || isHost(prev.block) || isHost(cur.block)) {
    auto of = [&](const Access &a, bool isWrite) {
      return LaunchAccess{
          a.block,
          a.op,
          a.launch,
          isWrite,
          a.transfer >= 0 ? transfers[a.transfer].channel : -1,
          false,
          isHost(a.block) ? a.block - static_cast<int64_t>(model.blocks.size())
                          : -1};
    };
    reportAcrossLaunches(model, slot, of(prev, prevIsWrite),
                         of(cur, curIsWrite));
    return;
  }
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
  // The reader heard from the other block through LL packets only.
  if (Operation *heard = llHeard.lookup({cur.block, prev.block}))
    diag.attachNote(heard->getLoc())
        << "this reads LL packets of " << other
        << ", which do not order what it did before them in this launch "
           "(nothing fences its earlier accesses before its packet "
           "stores): signal after the "
        << (prevIsWrite ? "write" : "read")
        << " and wait for the signal before this access";
}

void RaceDetector::Impl::read(int64_t slot, const Clock &clock,
                              const Access &cur) {
  SlotState &state = slotState(slot);
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
  SlotState &state = slotState(slot);
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
  // Over several launches the caller's write of the first input comes
  // before launch 0 too, ordered before its own rank's blocks only.
  if (step.launch > 0 ? model.blocks[block].startsLaunch(stepIndex)
                      : model.launches > 1 && stepIndex == 0)
    startLaunch(block, step.launch);
  if (stepIndex == 0 || model.blocks[block].startsLaunch(stepIndex)) {
    // What an LL read of this launch's packets tells the reader: that this
    // block's kernel started, so everything before it (its rank's previous
    // launches, its caller) is done; nothing of this launch (no fence
    // orders the block's earlier writes before its packet stores).
    auto start = std::make_shared<Clock>(clock);
    (*start)[block] = epoch - 1;
    launchStart[block] = Snapshot{std::move(start), block, epoch - 1};
  }

  for (int channel : step.waits) {
    int other = model.channels[channel].otherEnd;
    size_t &head = snapshotHead[other];
    join(block, snapshots[other][head]);
    snapshots[other][head] = Snapshot();
    ++head;
    waitEpochs[channel].push_back(epoch);
  }
  Access plain{block, epoch, -1, step.op, step.launch};
  model.forEachPacketRead(step, [&](const Move &move, const Range &src,
                                    int64_t j) {
    int64_t slot = model.slot(src, j);
    StepRef writer = scheduler.packetWriter(slot, step.launch);
    if (!writer.valid())
      return;
    // Every LL read spins on at least its first packet, at every count
    // (Elementwise.h). A block of a thread-block group spins only on its
    // own stripes of what the read moves, and may own none. If the read
    // moves a scratch chunk's worth (as many elements as the largest
    // chunk) at every count, a block owning none owns no element of any
    // chunk it accesses after, so what it learns covers all it does. A
    // shorter read teaches the group nothing: a block may own only the
    // positions past it, in a longer chunk it then reads.
    bool learns = model.blocks[block].group == 1 ||
                  model.layout.lastElement(/*user=*/false, 0)
                      .minus(model.movesLast(move, j))
                      .empty();
    if (learns) {
      llHeard[{block, writer.block}] = step.op;
      auto clockIt = packetClocks.find({writer.block, writer.step});
      if (clockIt != packetClocks.end())
        join(block, clockIt->second);
    }
    if (model.launches > 1) {
      // A put two launches later already rewrote the packets: it ran before
      // this read, so nothing orders it after the read.
      auto last = packetWriteLaunch.find(slot);
      if (last != packetWriteLaunch.end() && last->second > step.launch) {
        StepRef rewriter = scheduler.packetWriter(slot, last->second);
        Operation *putOp = model.step(rewriter).op;
        if (reportedPairs.insert({putOp, step.op}).second && budget())
          reportAcrossLaunches(
              model, slot, {block, step.op, step.launch, false, -1, true},
              {rewriter.block, putOp, last->second, true, -1, true});
        return;
      }
      llvm::SmallVector<Access, 1> &reads = packetReads[slot];
      for (Access &prev : reads)
        if (prev.block == block) {
          prev = plain;
          return;
        }
      reads.push_back(plain);
    }
  });

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
    for (const Range &src : move.sources()) {
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
    if (model.isPacket(move.dst)) {
      // LL packets: one writer per launch, reads wait for it (checked
      // apart); over several launches, the reads of two launches before.
      if (model.launches > 1)
        for (int64_t j = 0; j < move.dst.count; ++j)
          writePacket(model.slot(move.dst, j), clock, plain);
      continue;
    }
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
      packetClocks[{block, stepIndex}] = launchStart[block];
      break;
    }
  if (model.launches > 1 && model.blocks[block].endsLaunch(stepIndex))
    launchEnds[block][step.launch] = snapshot(block);
}

void RaceDetector::Impl::runHost(int64_t rank, int launch) {
  int host = hostOf(rank);
  if (launch > 0)
    for (int block : blocksOfRank[rank])
      if (launchEnds[block][launch - 1].base)
        join(host, launchEnds[block][launch - 1]);
  Clock &clock = clocks[host];
  Access access{host, ++clock[host], -1, model.program, launch};
  for (int b = 0, e = static_cast<int>(model.buffers.size()); b < e; ++b) {
    const BufferInfo &buffer = model.buffers[b];
    for (int64_t j = 0; j < buffer.chunks; ++j) {
      int64_t slot = model.slot(rank, b, j);
      // The caller's use of the user buffers: it writes the next input,
      // and the output is its own again once the rank's kernel ended (it
      // reads the result, may reuse the buffer, and may pass it at
      // another count next time, where the chunks lie elsewhere).
      if (buffer.input || buffer.output)
        write(slot, clock, access);
    }
  }
  hostLaunch[rank] = launch;
  hostSnapshot[rank] = snapshot(host);
}

void RaceDetector::Impl::writePacket(int64_t slot, const Clock &clock,
                                     const Access &cur) {
  packetWriteLaunch[slot] = cur.launch;
  auto it = packetReads.find(slot);
  if (it == packetReads.end())
    return;
  for (const Access &prev : it->second)
    if (clock[prev.block] < prev.epoch &&
        reportedPairs.insert({cur.op, prev.op}).second && budget())
      reportAcrossLaunches(model, slot,
                           {prev.block, prev.op, prev.launch, false, -1, true},
                           {cur.block, cur.op, cur.launch, true, -1, true});
  packetReads.erase(it);
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
