//===- Machine.h - State of one simulated run -----------------*- C++ -*-===//
//
// The machine holds every rank's buffers with a shadow of who accessed each
// element range last, the channels' in-flight puts, signals and LL packets,
// and one task per thread block (per block of a group). The scheduler
// (Schedule.cpp) repeatedly picks one enabled action: a task's next step,
// the landing of a channel's oldest signal or transfer, or the arrival of
// one piece of an LL put.
//
// Ordering is tracked with vector clocks: a task's clock advances at every
// barrier-like point (barrier, signal, wait, flush), so two accesses of one
// block between two barriers are unordered, as on a GPU where different
// threads handle the same elements in different operations. A signal
// carries the signaller's clock to the wait it releases.
//
// A run may hold several back-to-back launches of the program (what a
// repeated collective does): a task that ends a launch waits until every
// task of its rank ended it (the rank's kernels run one after the other on
// its stream), joins their clocks and starts over, while other ranks may
// still be in the previous launch. Between launches the machine does what
// the runtime does, as mscl/IR/MsclLaunches.h describes it for the static
// proof too: buffers, semaphore counts and the channels' queues are kept;
// LL flags grow by one launch, and packet buffers have two parity halves
// (launchCopy). The caller of a rank (a task of its own that never runs
// steps) reads the output and writes the next input after every task of
// the rank ended a launch, before any starts the next.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_SIMULATOR_MACHINE_H
#define MSCCLC_LIB_SIMULATOR_MACHINE_H

#include "Arith.h"
#include "Model.h"

#include "mlir/IR/Diagnostics.h"

#include <deque>
#include <map>
#include <memory>
#include <random>

namespace mscclc {
namespace sim {

/// The first segment of `map` (keyed by start, each with an exclusive `hi`)
/// that overlaps [lo, ...): the one holding lo, else the first after it.
template <typename Map> auto firstOverlap(Map &map, int64_t lo) {
  auto it = map.upper_bound(lo);
  if (it != map.begin() && std::prev(it)->second.hi > lo)
    --it;
  return it;
}

/// Splits the segment of `map` (keyed by start, each with an exclusive `hi`)
/// that straddles `at`, so that a segment starts exactly at `at` when any
/// covers it; returns the first segment starting at or after `at`.
template <typename Seg>
typename std::map<int64_t, Seg>::iterator splitAt(std::map<int64_t, Seg> &map,
                                                   int64_t at) {
  auto it = map.upper_bound(at);
  if (it == map.begin())
    return it;
  auto prev = std::prev(it);
  if (prev->first == at)
    return prev;
  if (prev->second.hi <= at)
    return it;
  Seg tail = prev->second;
  prev->second.hi = at;
  return map.emplace_hint(it, at, std::move(tail));
}

using Clock = std::vector<uint32_t>;

/// `into` learns everything `other` knows.
inline void join(Clock &into, const Clock &other) {
  for (size_t i = 0; i < into.size(); ++i)
    into[i] = std::max(into[i], other[i]);
}
using ClockPtr = std::shared_ptr<const Clock>;

/// One access: by `task` at its clock value `clock`, in executed operation
/// instance `inst`. task -1 is the host (ordered before everything).
struct Access {
  int32_t task = -1;
  uint32_t clock = 0;
  uint32_t inst = 0;
  /// Another operation of the same task and clock read this range too.
  bool multi = false;
  mlir::Operation *op = nullptr;
};

enum class WriteKind : uint8_t { None, Host, Local, Remote };

/// Shadow state of an element range [key, hi).
struct Segment {
  int64_t hi;
  WriteKind kind = WriteKind::None;
  Access write;
  llvm::SmallVector<Access, 2> reads;
};

/// Flag state of a range of LL packets.
struct PacketSegment {
  int64_t hi;
  int64_t flag = -1;
  uint32_t put = 0;
  mlir::Operation *op = nullptr;
  double time = 0; ///< when the packets arrived (cost-model time)
  int writer = -1; ///< the task whose LL put sent them
};

struct Region {
  /// Puts in flight into this buffer, and port put sources in it not yet
  /// flushed: most accesses skip those checks.
  int pending = 0, inflight = 0;
  std::vector<Word> data;
  std::map<int64_t, Segment> shadow;
  std::map<int64_t, PacketSegment> packets;
};

/// An HB or port put whose data is not visible until a signal lands.
struct PendingPut {
  uint64_t seq;
  int rank, buffer;
  int64_t lo, hi;
  std::vector<Word> data;
  Access issue;
};

/// The source of a port put, which must not change until a flush.
struct InFlightSource {
  uint64_t seq;
  int rank, buffer;
  int64_t lo, hi;
  Access issue;
};

/// A switch broadcast's store into another rank's memory, which a wait on
/// that rank must order before its kernel ends.
struct RemoteStore {
  Access access;
  int rank, buffer;
  int64_t lo, hi;
};

struct QueueItem {
  bool signal;
  uint64_t seq;
  double ready;
  ClockPtr clock;
  Access tag; // the signal's own clock: what committed puts are tagged with
  int flow = -1;
};

struct LandedSignal {
  ClockPtr clock;
  double time;
  int flow;
};

struct ChannelState {
  uint64_t nextSeq = 0;
  std::vector<PendingPut> pending;
  std::vector<InFlightSource> inflight;
  std::deque<QueueItem> queue;
  std::vector<LandedSignal> landed;
  /// Waits done by each block of the owning group; signal increments sent,
  /// and the operation that sent each (an unbalanced count is reported at
  /// the first increment no wait consumes).
  std::vector<int64_t> waits;
  int64_t signals = 0;
  std::vector<mlir::Operation *> signalOps;
  double dataReady = 0; ///< when the last put's data has arrived
};

/// Part of an LL put, delivered on its own.
struct Piece {
  int channel, rank, buffer;
  int64_t lo, hi;
  std::shared_ptr<std::vector<Word>> data;
  int64_t offset;
  int64_t flag;
  uint32_t put;
  double ready;
  Access issue;
};

struct Task {
  int block, member, rank;
  size_t pc = 0;
  /// The launch the task is in, and whether it ended it and waits for the
  /// rest of its rank to end it too.
  int launch = 0;
  bool atBoundary = false;
  /// Per launch: the task's own clock entry when it started it, and its
  /// clock when it ended it.
  std::vector<uint32_t> launchStart;
  std::vector<Clock> launchEnd;
  int64_t iter = 0, trip = 0, unitElems = 1;
  int pipeBegin = -1;
  /// A member of a thread-block group does each data operation one run at
  /// a time, the runs it owns (mscclc_group_stripe, Layout.h): the stripe
  /// size, and the run of the current operation it does next (begin -1:
  /// its first).
  int64_t stripe = 0;
  std::pair<int64_t, int64_t> run{-1, -1};
  Clock clock;
  bool done = false;
  double time = 0;
};

struct TraceSlice {
  int rank;
  int64_t tb;
  int member;
  std::string name;
  double start, end;
  int64_t bytes = 0;
  std::string loc;
  int64_t iteration = -1;
  llvm::SmallVector<int, 2> flowOut, flowIn;
};

/// Picks the next action; implemented by the schedule strategies.
class Strategy {
public:
  virtual ~Strategy() = default;
  /// `ready[i]` is the ready time of action i; `isEvent[i]` tells
  /// deliveries from task steps; `owner[i]` is the task or channel.
  virtual size_t pick(llvm::ArrayRef<double> ready,
                      llvm::ArrayRef<bool> isEvent,
                      llvm::ArrayRef<int> owner) = 0;
  /// How many pieces an LL put splits into (randomly placed).
  virtual int llPieces(int64_t elements) = 0;
  virtual std::mt19937_64 &rng() = 0;
};

class Machine {
public:
  /// Takes its buffers from `pool` when that holds a previous run's.
  /// `launches`: how many back-to-back launches of the program one run
  /// holds.
  Machine(const Model &model, const Layout &layout, DataType type,
          ReduceKind reduce, const CostModel &cost, bool tracing,
          std::vector<Region> *pool = nullptr, int launches = 1);
  /// Hands the buffers back for the next run.
  void recycle(std::vector<Region> &pool) { pool = std::move(regions); }

  /// Fills input buffers (and in-place layouts) with `inputs[rank]`.
  void initInputs(const std::vector<std::vector<Word>> &inputs);
  /// Runs to completion. Errors are emitted with `context` as a note.
  mlir::LogicalResult run(Strategy &strategy, llvm::StringRef context);

  const std::vector<Word> &data(int rank, int buffer) const {
    return regions[rank * model.buffers.size() + buffer].data;
  }
  /// The operation that last wrote element `e`, or null.
  mlir::Operation *lastWriter(int rank, int buffer, int64_t e) const;
  double finishTime() const;
  /// The tasks (thread blocks, one per member of a group) of `rank`.
  std::vector<int> tasksOfRank(int rank) const;
  /// The schedule owners of what channels from `rank` deliver (a port
  /// channel's proxy, signals, LL pieces): slowed down, the rank's kernel
  /// may end and its caller go on while they are still under way.
  std::vector<int> deliveriesOfRank(int rank) const;
  std::vector<TraceSlice> trace;
  /// The trace stops growing at this many slices (set `truncated`).
  static constexpr size_t maxTraceSlices = 2000000;
  bool truncated = false;
  int flowCount = 0;

private:
  friend class StepRunner;
  Region &region(int rank, int buffer) {
    return regions[rank * model.buffers.size() + buffer];
  }
  std::string taskName(int task) const;
  std::string describe(int rank, int buffer, int64_t lo, int64_t hi) const;
  mlir::InFlightDiagnostic error(mlir::Operation *op);
  /// The run's description goes to the verdict line, not to each error.
  void addContext(mlir::InFlightDiagnostic &) {}
  void noteAccess(mlir::InFlightDiagnostic &diag, const Access &access,
                  llvm::StringRef what);
  /// The launch an access of a task was made in.
  int launchOf(const Access &access) const;

  // Shadow memory.
  bool ordered(const Access &a, int task, uint32_t inst) const;
  mlir::LogicalResult checkRead(int task, mlir::Operation *op, uint32_t inst,
                                int rank, int buffer, int64_t lo, int64_t hi);
  void recordRead(int task, mlir::Operation *op, uint32_t inst, int rank,
                  int buffer, int64_t lo, int64_t hi);
  mlir::LogicalResult checkWrite(int task, mlir::Operation *op,
                                 uint32_t inst, int rank, int buffer,
                                 int64_t lo, int64_t hi, bool inFlightPut);
  void recordWrite(const Access &access, WriteKind kind, int rank, int buffer,
                   int64_t lo, int64_t hi, const Word *values);
  /// Reads [lo,hi) of a buffer into `out` after the checks.
  mlir::LogicalResult load(int task, mlir::Operation *op, uint32_t inst,
                           int rank, int buffer, int64_t lo, int64_t hi,
                           std::vector<Word> &out);
  mlir::LogicalResult store(int task, mlir::Operation *op, uint32_t inst,
                            int rank, int buffer, int64_t lo, int64_t hi,
                            const Word *values, WriteKind kind);

  // LL packets.
  /// 0: not all packets of [lo,hi) carry `flag`; 1: ready; 2: some packet
  /// already carries a later flag.
  /// A read of LL packets of [lo, hi) learns that each writer's kernel of
  /// the packets' launch started: its rank's caller before that launch,
  /// and everything before, happened before the read.
  void joinPacketWriters(int task, int rank, int buffer, int64_t lo,
                         int64_t hi);
  int packetState(int rank, int buffer, int64_t lo, int64_t hi,
                  int64_t flag, double *arrival = nullptr) const;
  mlir::LogicalResult deliver(size_t piece);

  // Channels.
  mlir::LogicalResult issuePut(int task, const Step &step, uint32_t inst,
                               int channel, const ChunkRef &dst, int64_t lo,
                               int64_t hi, std::vector<Word> values,
                               int srcBuffer, int64_t srcLo, double &duration);
  mlir::LogicalResult processHead(int channel);
  void commit(int channel, uint64_t beforeSeq, const Access &tag);

  // Tasks.
  void normalize(Task &task);
  bool enabled(int task);
  bool stepEnabled(int task, const Step &step);
  bool syncReady(int task, const Step &step);
  mlir::LogicalResult step(int task);
  /// `following`: the task's next run of the step (begin -1: the step is
  /// done).
  mlir::LogicalResult runData(int task, const Step &step,
                              std::pair<int64_t, int64_t> *following);
  mlir::LogicalResult runSync(int task, const Step &step);
  /// The semaphore count the task's next wait on channel `c` needs.
  int64_t waitTarget(int task, int c) const;
  void reportDeadlock(llvm::StringRef context);
  mlir::LogicalResult finish(llvm::StringRef context);
  /// The LL flag of the task's launch, as the kernels have it (the
  /// runtime's epoch + 1): one per launch, in every pipeline iteration too
  /// (an iteration writes its own slice of each packet chunk).
  int64_t currentFlag(const Task &task) const {
    return int64_t(task.launch) << 32;
  }
  /// Launch boundaries: a task that ended a launch may start the next once
  /// every task of its rank ended it; it then knows all they did.
  bool launchReady(int task) const;
  mlir::LogicalResult startNextLaunch(int task);
  /// The caller of `rank` before its launch `launch`: reads the output,
  /// writes the next input (the same values).
  mlir::LogicalResult runCaller(int rank, int launch);
  /// Before the first launch: every rank's caller writes its input, ordered
  /// before that rank's tasks only.
  mlir::LogicalResult runFirstCallers();
  /// Index of the caller task of `rank` (with several launches only).
  int callerOf(int rank) const { return firstCaller + rank; }
  bool isCaller(int task) const {
    return firstCaller >= 0 && task >= firstCaller;
  }
  TraceSlice &addSlice(int task, const Step &step, double start, double end,
                       int64_t elements);
  /// Ranges of every chunk operand (dsts, srcs, remotes, store, in that
  /// order) for this task's part of the step (its pipeline iteration, its
  /// run in a group); returns the element count moved, or -1 when the task
  /// has no part in it (a group member without a run, a later empty
  /// pipeline iteration on LL packets). An empty part (0) still touches
  /// the first LL packet at its position (Elementwise.h). `following`,
  /// when given, gets the task's next run of the step, begin -1 when this
  /// is its last.
  int64_t sliceRanges(const Task &task, const Step &step,
                      llvm::SmallVectorImpl<std::pair<int64_t, int64_t>> &out,
                      std::pair<int64_t, int64_t> *following = nullptr) const;
  /// An empty part of a step that reads or writes LL packets: the LL put
  /// writes the first packet at its position with the flag alone, the LL
  /// read learns what the packet's writer knew at its launch start.
  mlir::LogicalResult touchFirstPackets(
      int task, const Step &step,
      llvm::ArrayRef<std::pair<int64_t, int64_t>> ranges);

  const Model &model;
  Layout layout;
  DataType type;
  ReduceKind reduce;
  const CostModel &cost;
  bool tracing;
  std::vector<Region> regions;
  std::vector<ChannelState> channels;
  std::vector<Piece> pieces;
  std::vector<RemoteStore> remoteStores;
  std::vector<Task> tasks;
  int launches = 1;
  int firstCaller = -1;
  /// Per rank and launch: its caller's clock once it ran before that
  /// launch. Reading a task's LL packets of launch L joins its rank's:
  /// the packets prove the task's kernel of launch L started.
  std::vector<std::vector<Clock>> callerClocks;
  /// The task whose step is running (for notes on accesses of another
  /// launch).
  int currentTask = -1;
  uint32_t nextInst = 1;
  uint32_t nextPut = 1;
  Strategy *strategy = nullptr;
  std::string context;
  std::vector<Word> scratchA, scratchB;
  std::vector<double> egressFree; ///< per rank, for the cost model
  /// Per NIC (nicOf), when its send / receive side is next free.
  std::vector<double> nicSendFree, nicReceiveFree;
  /// The NIC that carries `rank`'s transfers across nodes.
  size_t nicOf(int rank) const;
  TraceSlice overflowSlice;       ///< written to once the trace is full
};

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_MACHINE_H
