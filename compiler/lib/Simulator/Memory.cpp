//===- Memory.cpp - Buffers with a shadow of unordered accesses ----------===//
//
// Each rank's buffer keeps, per element range, its last write and the reads
// since then (one per task, FastTrack style). An access conflicts with an
// earlier one unless the earlier one happened before it; what "happened
// before" means is in Machine.h. Puts still in flight (pending) and port
// put sources not yet flushed are checked on every access as well.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mscclc::sim;

static const std::vector<int> noChannels;

bool Machine::ordered(const Access &a, int task, uint32_t inst) const {
  if (a.task < 0)
    return true;
  const Clock &clock = tasks[task].clock;
  if (a.task == task)
    return a.clock < clock[task] || (a.inst == inst && !a.multi);
  return a.clock < clock[a.task];
}

std::string Machine::taskName(int task) const {
  const Task &t = tasks[task];
  std::string name;
  llvm::raw_string_ostream os(name);
  if (t.block < 0) {
    os << "the caller of rank " << t.rank
       << (t.launch == 0 ? " (before its first launch)" : " (between launches)");
    return name;
  }
  const BlockInfo &block = model.blocks[t.block];
  os << "rank " << block.rank << " tb " << block.id + t.member;
  return name;
}

std::string Machine::describe(int rank, int buffer, int64_t lo,
                              int64_t hi) const {
  const BufferInfo &info = model.buffers[buffer];
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t first = layout.chunkOf(info, lo);
  int64_t last = layout.chunkOf(info, std::max(lo, hi - 1));
  os << "rank " << rank << " " << info.name << "[" << first;
  if (last != first)
    os << ":" << last + 1;
  os << "] (elements " << lo << ".." << hi - 1 << ")";
  return text;
}

InFlightDiagnostic Machine::error(Operation *op) {
  return emitError(op ? op->getLoc() : model.program.getLoc());
}

int Machine::launchOf(const Access &access) const {
  if (access.task < 0)
    return 0;
  const std::vector<uint32_t> &starts = tasks[access.task].launchStart;
  int launch = 0;
  for (int l = 1; l < static_cast<int>(starts.size()); ++l)
    if (starts[l] && starts[l] <= access.clock)
      launch = l;
  return launch;
}

void Machine::noteAccess(InFlightDiagnostic &diag, const Access &access,
                         llvm::StringRef what) {
  if (access.task >= 0 && isCaller(access.task)) {
    int rank = tasks[access.task].rank;
    diag.attachNote()
        << "the caller of rank " << rank
        << " writes its input (and uses its output) on the rank's stream, "
           "ordered before rank "
        << rank
        << "'s own kernel only: signal a channel from rank " << rank
        << " at the start of every launch and wait for that signal before "
           "this access";
    return;
  }
  if (!access.op)
    return;
  Diagnostic &note = diag.attachNote(access.op->getLoc());
  note << what << " " << access.op->getName().getStringRef() << " of "
       << (access.task >= 0 ? taskName(access.task) : std::string("the host"));
  if (currentTask < 0 || access.task < 0)
    return;
  int then = launchOf(access), now = tasks[currentTask].launch;
  if (then == now)
    return;
  note << " in launch " << then + 1 << ", while " << taskName(currentTask)
       << " is in launch " << now + 1
       << ": a rank starts its next launch once its own thread blocks "
          "ended, and plain scratch and the user buffers are the same "
          "memory in every launch; order the two with a signal after the "
          "earlier access and a wait for it before the later one";
}

LogicalResult Machine::checkRead(int task, Operation *op, uint32_t inst,
                                 int rank, int buffer, int64_t lo,
                                 int64_t hi) {
  if (lo >= hi)
    return success();
  Region &reg = region(rank, buffer);
  for (int c : reg.pending ? model.channelsInto[rank] : noChannels)
    for (const PendingPut &put : channels[c].pending)
      if (put.buffer == buffer && put.lo < hi && lo < put.hi) {
        auto diag = error(op);
        diag << "read of data that no signal covered: " << taskName(task)
             << " reads " << describe(rank, buffer, std::max(lo, put.lo),
                                      std::min(hi, put.hi))
             << " while a put into it through @" << model.channels[c].name
             << " is in flight (no signal on @" << model.channels[c].name
             << " has made it visible)";
        noteAccess(diag, put.issue, "the put is");
        addContext(diag);
        return failure();
      }
  for (auto it = firstOverlap(reg.shadow, lo);
       it != reg.shadow.end() && it->first < hi; ++it) {
    Segment &seg = it->second;
    int64_t a = std::max(lo, it->first), b = std::min(hi, seg.hi);
    // Reading what nothing wrote is allowed: scratch chunks are padded to
    // the largest chunk size, and garbage that reaches the output is caught
    // by the result check.
    if (seg.kind == WriteKind::None)
      continue;
    if (seg.kind == WriteKind::Host || ordered(seg.write, task, inst))
      continue;
    auto diag = error(op);
    if (seg.kind == WriteKind::Remote)
      diag << "read of data that no signal covered: " << taskName(task)
           << " reads " << describe(rank, buffer, a, b) << ", written by "
           << taskName(seg.write.task)
           << ", but no wait orders this read after the signal that made "
              "it visible";
    else if (seg.write.task == task)
      diag << "race (missing barrier): " << taskName(task) << " reads "
           << describe(rank, buffer, a, b)
           << " written by an earlier operation of the same thread block "
              "with no barrier in between";
    else
      diag << "race: " << taskName(task) << " reads "
           << describe(rank, buffer, a, b) << " while "
           << taskName(seg.write.task)
           << " writes it; no signal/wait or barrier orders them";
    noteAccess(diag, seg.write, "written by");
    addContext(diag);
    return failure();
  }
  return success();
}

void Machine::recordRead(int task, Operation *op, uint32_t inst, int rank,
                         int buffer, int64_t lo, int64_t hi) {
  if (lo >= hi)
    return;
  Region &reg = region(rank, buffer);
  splitAt(reg.shadow, hi);
  uint32_t now = tasks[task].clock[task];
  for (auto it = splitAt(reg.shadow, lo);
       it != reg.shadow.end() && it->first < hi; ++it) {
    auto &reads = it->second.reads;
    Access *mine = nullptr;
    for (Access &r : reads)
      if (r.task == task)
        mine = &r;
    if (!mine) {
      reads.push_back({task, now, inst, false, op});
    } else if (mine->clock == now) {
      if (mine->inst != inst)
        mine->multi = true;
      mine->inst = inst;
      mine->op = op;
    } else {
      *mine = {task, now, inst, false, op};
    }
  }
}

LogicalResult Machine::checkWrite(int task, Operation *op, uint32_t inst,
                                  int rank, int buffer, int64_t lo,
                                  int64_t hi, bool inFlightPut) {
  if (lo >= hi)
    return success();
  Region &reg = region(rank, buffer);
  for (int c : reg.pending ? model.channelsInto[rank] : noChannels)
    for (const PendingPut &put : channels[c].pending)
      if (put.buffer == buffer && put.lo < hi && lo < put.hi) {
        auto diag = error(op);
        diag << "write race: " << taskName(task) << " writes "
             << describe(rank, buffer, std::max(lo, put.lo),
                         std::min(hi, put.hi))
             << " while a put into it through @" << model.channels[c].name
             << " is still in flight";
        noteAccess(diag, put.issue, "the put is");
        addContext(diag);
        return failure();
      }
  for (int c : reg.inflight ? model.channelsFrom[rank] : noChannels)
    for (const InFlightSource &src : channels[c].inflight)
      if (src.buffer == buffer && src.lo < hi && lo < src.hi) {
        // A caller (no op of its own) writing the next input: the put is
        // where the fix goes.
        auto diag = error(op ? op : src.issue.op);
        diag << "port put source overwritten before flush: "
             << taskName(task) << " writes "
             << describe(rank, buffer, std::max(lo, src.lo),
                         std::min(hi, src.hi))
             << ", the source of a put on @" << model.channels[c].name
             << " that no flush has completed";
        if (!op)
          diag << "; flush @" << model.channels[c].name
               << " before the kernel ends";
        else
          noteAccess(diag, src.issue, "the put is");
        addContext(diag);
        return failure();
      }
  (void)inFlightPut;
  for (auto it = firstOverlap(reg.shadow, lo);
       it != reg.shadow.end() && it->first < hi; ++it) {
    Segment &seg = it->second;
    int64_t a = std::max(lo, it->first), b = std::min(hi, seg.hi);
    const Access *conflict = nullptr;
    bool withRead = false;
    if ((seg.kind == WriteKind::Local || seg.kind == WriteKind::Remote) &&
        !ordered(seg.write, task, inst))
      conflict = &seg.write;
    for (const Access &r : seg.reads)
      if (!conflict && !ordered(r, task, inst)) {
        conflict = &r;
        withRead = true;
      }
    if (!conflict)
      continue;
    auto diag = error(op);
    diag << "write race";
    if (conflict->task == task)
      diag << " (missing barrier)";
    diag << ": " << taskName(task) << " writes "
         << describe(rank, buffer, a, b) << " while "
         << taskName(conflict->task)
         << (withRead ? " may still be reading it" : " writes it too")
         << "; no signal/wait or barrier orders the two";
    noteAccess(diag, *conflict, withRead ? "read by" : "written by");
    addContext(diag);
    return failure();
  }
  return success();
}

void Machine::recordWrite(const Access &access, WriteKind kind, int rank,
                          int buffer, int64_t lo, int64_t hi,
                          const Word *values) {
  if (lo >= hi)
    return;
  Region &reg = region(rank, buffer);
  splitAt(reg.shadow, hi);
  auto first = splitAt(reg.shadow, lo);
  auto last = first;
  while (last != reg.shadow.end() && last->first < hi)
    ++last;
  reg.shadow.erase(first, last);
  Segment seg;
  seg.hi = hi;
  seg.kind = kind;
  seg.write = access;
  reg.shadow.emplace(lo, std::move(seg));
  std::copy(values, values + (hi - lo), reg.data.begin() + lo);
}

LogicalResult Machine::load(int task, Operation *op, uint32_t inst, int rank,
                            int buffer, int64_t lo, int64_t hi,
                            std::vector<Word> &out) {
  out.clear();
  if (lo >= hi)
    return success();
  if (model.buffers[buffer].packet) {
    int64_t flag = currentFlag(tasks[task]);
    if (packetState(rank, buffer, lo, hi, flag) != 1) {
      auto diag = error(op);
      diag << "LL packets with a later flag: " << taskName(task) << " reads "
           << describe(rank, buffer, lo, hi) << " expecting flag " << flag;
      // Only a later launch of the same parity writes them again.
      diag << ", but some packets carry the flag of launch "
           << tasks[task].launch + 3
           << ": packet buffers alternate by launch parity, so their "
              "writer ran two launches ahead and overwrote them before "
              "this read; make the writer wait, in every launch, for a "
              "signal (or packets) sent after this read";
      addContext(diag);
      return failure();
    }
    joinPacketWriters(task, rank, buffer, lo, hi);
  } else {
    if (failed(checkRead(task, op, inst, rank, buffer, lo, hi)))
      return failure();
    recordRead(task, op, inst, rank, buffer, lo, hi);
  }
  const std::vector<Word> &data = region(rank, buffer).data;
  out.assign(data.begin() + lo, data.begin() + hi);
  return success();
}

LogicalResult Machine::store(int task, Operation *op, uint32_t inst,
                             int rank, int buffer, int64_t lo, int64_t hi,
                             const Word *values, WriteKind kind) {
  if (failed(checkWrite(task, op, inst, rank, buffer, lo, hi, false)))
    return failure();
  Access access{task, tasks[task].clock[task], inst, false, op};
  recordWrite(access, kind, rank, buffer, lo, hi, values);
  return success();
}

void Machine::joinPacketWriters(int task, int rank, int buffer, int64_t lo,
                                int64_t hi) {
  if (callerClocks.empty())
    return; // one launch: nothing comes before it
  const auto &packets = region(rank, buffer).packets;
  for (auto it = firstOverlap(packets, lo);
       it != packets.end() && it->first < hi; ++it) {
    const PacketSegment &seg = it->second;
    if (seg.writer < 0)
      continue;
    const std::vector<Clock> &starts = callerClocks[tasks[seg.writer].rank];
    size_t launch = size_t(seg.flag >> 32);
    if (launch < starts.size() && !starts[launch].empty())
      join(tasks[task].clock, starts[launch]);
  }
}

int Machine::packetState(int rank, int buffer, int64_t lo, int64_t hi,
                         int64_t flag, double *arrival) const {
  const auto &packets =
      regions[rank * model.buffers.size() + buffer].packets;
  int state = 1;
  for (auto it = firstOverlap(packets, lo);
       it != packets.end() && it->first < hi; ++it) {
    if (it->second.flag > flag)
      return 2;
    if (it->second.flag != flag)
      state = 0;
    if (arrival)
      *arrival = std::max(*arrival, it->second.time);
  }
  return state;
}

Operation *Machine::lastWriter(int rank, int buffer, int64_t e) const {
  const auto &shadow = regions[rank * model.buffers.size() + buffer].shadow;
  auto it = shadow.upper_bound(e);
  if (it == shadow.begin())
    return nullptr;
  --it;
  if (it->second.hi <= e)
    return nullptr;
  return it->second.write.op;
}
