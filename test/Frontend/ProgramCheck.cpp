//===- ProgramCheck.cpp - Symbolic check of an evaluated Program ----------===//
//
// `mscclc-program-check file.mscl [--ranks N] [--gpus-per-node G] [-D k=v]
// [--seeds S] [--launches L] [--print] [--run=false]` parses and evaluates an
// algorithm with the frontend and runs the resulting mscclc::Program
// symbolically: every chunk holds the multiset of input chunks summed into it,
// each thread block is a sequential task, and tasks interleave under seeded
// random schedules, half of them starving one rank. The program is launched L
// times in a row, as a model would call the collective repeatedly: between two
// launches a rank's blocks all finish (the kernel boundary), the rank's
// consumers read its output and its producers write the next input. Reported:
//   - deadlocks (every unfinished block waits), signals never waited for;
//   - reads of data no happens-before edge makes visible (vector clocks: an
//     HB/port put becomes visible to the peer through the signal after it
//     and the matching wait, an LL packet once written in this launch);
//   - writes that may overwrite data another block (or the peer's consumer,
//     or a peer still in the previous launch) has not finished reading;
//   - reads of chunks nobody wrote, LL chunks written twice in one launch;
//   - a result that differs from the collective's definition.
// LL packet buffers are double buffered by launch parity, as the runtime
// does. Prints per-rank operation counts on success. It tests the frontend
// and the example programs, independently of MLIR generation.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>

using namespace mscclc;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> inputFile(cl::Positional, cl::Required);
cl::opt<int64_t> ranks("ranks", cl::init(8));
cl::opt<int64_t> gpusPerNode("gpus-per-node", cl::init(0));
cl::opt<int64_t> instances("instances", cl::init(1));
cl::list<std::string> defines("D", cl::Prefix);
cl::opt<int> seeds("seeds", cl::init(20));
cl::opt<int> launches("launches", cl::init(3));
cl::opt<bool> print("print", cl::desc("print the program"), cl::init(false));
cl::opt<bool> runChecks("run",
                        cl::desc("run the program (--run=false: only print)"),
                        cl::init(true));

/// What a chunk holds: input chunk id -> how many times it was summed in.
using Contents = std::map<int64_t, int64_t>;

struct ChunkState {
  bool defined = false;
  Contents value;
  int writer = -1;        // block that wrote last
  int64_t writeStamp = 0; // its own clock at the write
  int llLaunch = -1;      // launch of the LL put that wrote it, or -1
  std::vector<std::pair<int, int64_t>> reads; // since the last write
};

struct Block {
  int64_t rank, tb;
  std::vector<const Operation *> ops; // pipelines flattened
  size_t pc = 0;                      // over all launches
  int launch() const { return ops.empty() ? 0 : int(pc / ops.size()); }
};

class Machine {
public:
  Machine(const Program &p, unsigned seed)
      : p(p), rng(seed), slowRank(seed % 2 ? int64_t(seed / 2) % p.ranks : -1) {
  }
  /// Runs every launch to completion; false after reporting a problem.
  bool run();

private:
  using Key = std::tuple<std::string, int64_t, int64_t>;

  bool fail(const llvm::Twine &msg) {
    if (!failed) {
      llvm::errs() << "check: rank " << blocks[cur].rank << " tb "
                   << blocks[cur].tb << " launch " << blocks[cur].launch();
      if (blocks[cur].pc < total(blocks[cur]))
        llvm::errs() << " op '" << stringifyOpKind(currentOp(cur).kind)
                     << "' at " << currentOp(cur).loc;
      llvm::errs() << ": " << msg << "\n";
    }
    failed = true;
    return false;
  }
  size_t total(const Block &b) const { return b.ops.size() * launches; }
  const Operation &currentOp(int b) const {
    return *blocks[b].ops[blocks[b].pc % blocks[b].ops.size()];
  }
  std::string name(const std::string &buf, int64_t rank, int64_t idx) const {
    return buf + "@" + std::to_string(rank) + "[" + std::to_string(idx) + "]";
  }
  /// Packet buffers are double buffered by launch parity.
  ChunkState &chunk(const std::string &buf, int64_t rank, int64_t idx) {
    if (packetBuffers.count(buf))
      return mem[Key(buf + "#" + std::to_string(blocks[cur].launch() % 2), rank,
                     idx)];
    return mem[Key(buf, rank, idx)];
  }
  bool visible(const ChunkState &c, int reader) const {
    return c.writer < 0 || c.writer == reader ||
           clocks[reader][c.writer] >= c.writeStamp;
  }
  void tick() { ++clocks[cur][cur]; }
  void join(int into, const std::vector<int64_t> &from) {
    for (size_t i = 0; i < from.size(); ++i)
      clocks[into][i] = std::max(clocks[into][i], from[i]);
  }
  /// Reads a run of chunks as block `cur` (on `rank`, default ref.rank).
  /// Sets `blocked` when LL packets of this launch have not arrived yet.
  bool read(const ChunkRef &ref, std::vector<Contents> &out, bool &blocked,
            std::optional<int64_t> rank = std::nullopt);
  bool write(const ChunkRef &ref, const std::vector<Contents> &vals, bool ll,
             std::optional<int64_t> rank = std::nullopt);
  /// Tries to execute block `cur`'s next operation; `progress` tells
  /// whether it ran (it may be blocked).
  bool step(bool &progress);
  std::string channelKey(const Channel &c, bool reverse) const {
    int64_t a = reverse ? c.dst : c.src, b = reverse ? c.src : c.dst;
    return stringifyOpKind(OpKind::Put).str() + ":" +
           std::to_string(int(c.kind)) + ":" + std::to_string(int(c.protocol)) +
           ":" + std::to_string(a) + "->" + std::to_string(b) + ":" +
           std::to_string(c.id);
  }
  /// Where the collective's buffers live after in-place aliasing.
  std::pair<std::string, int64_t> inputSlot(int64_t r, int64_t i) const;
  std::pair<std::string, int64_t> outputSlot(int64_t r, int64_t i) const;
  Contents expected(int64_t r, int64_t i, int launch) const;
  /// The kernel boundary of `rank` after `launch`: join its blocks, let the
  /// consumer read (and check) the output, the producer write the next input.
  bool boundary(int64_t rank, int launch);

  const Program &p;
  std::mt19937 rng;
  int64_t slowRank; // starved rank, or -1
  std::vector<Block> blocks;
  std::vector<std::vector<int64_t>> clocks;
  std::map<Key, ChunkState> mem;
  std::map<std::string, const Channel *> channels;
  std::set<std::string> packetBuffers;
  std::map<std::string, std::deque<std::vector<int64_t>>> signals;
  std::map<int64_t, std::vector<int>> rankBlocks;
  std::map<int64_t, int> rankLaunch; // launches of the rank fully done
  int cur = 0;
  bool failed = false;
};

void flatten(const std::vector<Operation> &ops,
             std::vector<const Operation *> &out) {
  for (const Operation &op : ops) {
    if (op.kind == OpKind::Pipeline)
      flatten(op.body, out);
    else
      out.push_back(&op);
  }
}

bool Machine::read(const ChunkRef &ref, std::vector<Contents> &out,
                   bool &blocked, std::optional<int64_t> rank) {
  int64_t r = rank.value_or(ref.rank);
  bool packets = packetBuffers.count(ref.buffer);
  for (int64_t i = 0; i < ref.count; ++i) {
    ChunkState &c = chunk(ref.buffer, r, ref.index + i);
    if (packets) {
      if (c.llLaunch != blocks[cur].launch()) {
        blocked = true; // spin until this launch's packets arrive
        return true;
      }
    } else if (!c.defined) {
      return fail("reads " + name(ref.buffer, r, ref.index + i) +
                  ", which nothing wrote");
    } else if (!visible(c, cur)) {
      return fail("reads " + name(ref.buffer, r, ref.index + i) +
                  " before the write by rank " +
                  llvm::Twine(blocks[c.writer].rank) + " tb " +
                  llvm::Twine(blocks[c.writer].tb) +
                  " is visible (missing signal/wait?)");
    }
    out.push_back(c.value);
  }
  // Record the reads once the whole operand is readable; a packet's flag
  // orders what its writer did before it.
  for (int64_t i = 0; i < ref.count; ++i) {
    ChunkState &c = chunk(ref.buffer, r, ref.index + i);
    c.reads.push_back({cur, clocks[cur][cur]});
    if (packets)
      clocks[cur][c.writer] = std::max(clocks[cur][c.writer], c.writeStamp);
  }
  return true;
}

bool Machine::write(const ChunkRef &ref, const std::vector<Contents> &vals,
                    bool ll, std::optional<int64_t> rank) {
  int64_t r = rank.value_or(ref.rank);
  for (int64_t i = 0; i < ref.count; ++i) {
    ChunkState &c = chunk(ref.buffer, r, ref.index + i);
    std::string where = name(ref.buffer, r, ref.index + i);
    if (ll && c.llLaunch == blocks[cur].launch())
      return fail("writes LL chunk " + where + " twice in one launch");
    if (c.writer >= 0 && !visible(c, cur))
      return fail("overwrites " + where + ", racing with the write by rank " +
                  llvm::Twine(blocks[c.writer].rank) + " tb " +
                  llvm::Twine(blocks[c.writer].tb));
    for (auto [reader, stamp] : c.reads)
      if (reader != cur && clocks[cur][reader] < stamp)
        return fail("overwrites " + where + " while rank " +
                    llvm::Twine(blocks[reader].rank) + " tb " +
                    llvm::Twine(blocks[reader].tb) + " may still read it");
    c.defined = true;
    c.value = vals[i];
    c.writer = cur;
    c.writeStamp = clocks[cur][cur];
    c.llLaunch = ll ? blocks[cur].launch() : -1;
    c.reads.clear();
  }
  return true;
}

bool Machine::step(bool &progress) {
  Block &b = blocks[cur];
  const Operation &op = currentOp(cur);
  const Channel *ch = op.channel.empty() ? nullptr : channels[op.channel];
  bool ll = ch && ch->protocol == Protocol::LL;
  bool blocked = false;
  std::vector<Contents> vals;
  auto sum = [](std::vector<Contents> &acc, const std::vector<Contents> &add) {
    if (acc.empty()) {
      acc = add;
      return;
    }
    for (size_t i = 0; i < acc.size(); ++i)
      for (auto [k, v] : add[i])
        acc[i][k] += v;
  };
  tick();
  switch (op.kind) {
  case OpKind::Wait: {
    auto &q = signals[channelKey(*ch, /*reverse=*/true)];
    if (q.empty()) {
      blocked = true;
      break;
    }
    join(cur, q.front());
    q.pop_front();
    break;
  }
  case OpKind::Signal:
    signals[channelKey(*ch, false)].push_back(clocks[cur]);
    break;
  case OpKind::Flush:
  case OpKind::Barrier:
  case OpKind::Pipeline:
    break;
  case OpKind::Put:
  case OpKind::PutSignal:
  case OpKind::PutSignalFlush:
  case OpKind::Copy:
  case OpKind::Get:
    if (!read(op.srcs[0], vals, blocked))
      return false;
    if (blocked)
      break;
    if (!write(*op.dst, vals, ll && op.kind == OpKind::Put))
      return false;
    if (op.kind == OpKind::PutSignal || op.kind == OpKind::PutSignalFlush)
      signals[channelKey(*ch, false)].push_back(clocks[cur]);
    break;
  case OpKind::Reduce:
  case OpKind::ReducePut:
  case OpKind::ReadReduce: {
    std::vector<Contents> acc;
    std::vector<ChunkRef> srcs = op.srcs;
    if (op.kind == OpKind::ReadReduce)
      srcs.insert(srcs.begin(), *op.dst); // dst += remote src
    for (const ChunkRef &s : srcs) {
      std::vector<Contents> v;
      if (!read(s, v, blocked))
        return false;
      if (blocked)
        break;
      sum(acc, v);
    }
    if (blocked)
      break;
    if (!write(*op.dst, acc, ll))
      return false;
    break;
  }
  case OpKind::SwitchReduce: {
    std::vector<Contents> acc;
    for (int64_t r : ch->ranks) {
      std::vector<Contents> v;
      if (!read(op.srcs[0], v, blocked, r))
        return false;
      sum(acc, v);
    }
    if (!write(*op.dst, acc, false))
      return false;
    break;
  }
  case OpKind::SwitchBroadcast:
    if (!read(op.srcs[0], vals, blocked))
      return false;
    for (int64_t r : ch->ranks)
      if (!write(*op.dst, vals, false, r))
        return false;
    break;
  }
  if (blocked) {
    --clocks[cur][cur];
    return true;
  }
  ++b.pc;
  progress = true;
  return true;
}

std::pair<std::string, int64_t> Machine::inputSlot(int64_t r, int64_t i) const {
  if (!p.inPlace || p.collective == CollectiveKind::ReduceScatter ||
      p.collective == CollectiveKind::Scatter)
    return {"input", i};
  if (p.collective == CollectiveKind::AllGather ||
      p.collective == CollectiveKind::Gather)
    return {"output", r * p.chunks + i};
  return {"output", i};
}

std::pair<std::string, int64_t> Machine::outputSlot(int64_t r,
                                                    int64_t i) const {
  if (p.inPlace && (p.collective == CollectiveKind::ReduceScatter ||
                    p.collective == CollectiveKind::Scatter))
    return {"input", r * p.chunks + i};
  return {"output", i};
}

Contents Machine::expected(int64_t r, int64_t i, int launch) const {
  int64_t n = p.ranks, k = p.chunks, in = p.inputChunks;
  int64_t base = int64_t(launch) * n * in; // each launch has fresh inputs
  Contents want;
  switch (p.collective) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::Reduce:
    for (int64_t q = 0; q < n; ++q)
      want[base + q * in + i] = 1;
    break;
  case CollectiveKind::AllGather:
  case CollectiveKind::Gather:
    want[base + (i / k) * in + i % k] = 1;
    break;
  case CollectiveKind::Scatter:
    want[base + p.root * in + r * k + i] = 1;
    break;
  case CollectiveKind::ReduceScatter:
    for (int64_t q = 0; q < n; ++q)
      want[base + q * in + r * k + i] = 1;
    break;
  case CollectiveKind::Broadcast:
    want[base + p.root * in + i] = 1;
    break;
  case CollectiveKind::AllToAll:
    want[base + (i / k) * in + r * k + i % k] = 1;
    break;
  case CollectiveKind::Custom:
    break;
  }
  return want;
}

bool Machine::boundary(int64_t rank, int launch) {
  const std::vector<int> &bs = rankBlocks[rank];
  std::vector<int64_t> all(blocks.size(), 0);
  for (int b : bs)
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = std::max(all[i], clocks[b][i]);
  for (int b : bs)
    join(b, all);
  cur = bs.front();
  tick();
  // reduce and gather define the root's output only.
  bool rootOnly = p.collective == CollectiveKind::Reduce ||
                  p.collective == CollectiveKind::Gather;
  if (launch >= 0 && p.collective != CollectiveKind::Custom &&
      !(rootOnly && rank != p.root)) {
    // The consumer of the collective reads the output.
    for (int64_t i = 0; i < p.outputChunks; ++i) {
      auto [buf, idx] = outputSlot(rank, i);
      std::vector<Contents> v;
      bool blocked = false;
      if (!read(ChunkRef{buf, rank, idx, 1, currentOp(cur).loc}, v, blocked))
        return fail("at the end of the launch (the output is incomplete)");
      Contents want = expected(rank, i, launch);
      if (v[0] != want) {
        std::string got;
        for (auto [id, times] : v[0])
          got += " in" + std::to_string(id / p.inputChunks) + "[" +
                 std::to_string(id % p.inputChunks) + "]x" +
                 std::to_string(times);
        return fail("wrong result in output@" + llvm::Twine(rank) + "[" +
                    llvm::Twine(i) + "]: got {" + got + " }");
      }
    }
  }
  if (launch + 1 < launches) {
    // The producer writes the next launch's input.
    tick();
    for (int64_t i = 0; i < p.inputChunks; ++i) {
      auto [buf, idx] = inputSlot(rank, i);
      Contents v;
      v[int64_t(launch + 1) * p.ranks * p.inputChunks + rank * p.inputChunks +
        i] = 1;
      if (!write(ChunkRef{buf, rank, idx, 1, currentOp(cur).loc}, {v}, false))
        return fail("when the next input is produced (a peer of the "
                    "previous launch may still read it)");
    }
  }
  for (int b : bs)
    clocks[b] = clocks[cur];
  return true;
}

bool Machine::run() {
  for (const Channel &c : p.channels)
    channels[c.name] = &c;
  for (const ScratchBuffer &s : p.scratch)
    if (s.packet)
      packetBuffers.insert(s.name);
  for (const RankProgram &rp : p.rankPrograms)
    for (const ThreadBlock &tb : rp.threadBlocks) {
      Block b{rp.rank, tb.id, {}, 0};
      flatten(tb.ops, b.ops);
      if (b.ops.empty())
        continue;
      rankBlocks[rp.rank].push_back(blocks.size());
      blocks.push_back(std::move(b));
    }
  clocks.assign(blocks.size(), std::vector<int64_t>(blocks.size(), 0));
  for (auto &[rank, bs] : rankBlocks) {
    rankLaunch[rank] = 0;
    // Launch 0's input: written by the producer before anything runs.
    cur = bs.front();
    for (int64_t i = 0; i < p.inputChunks; ++i) {
      auto [buf, idx] = inputSlot(rank, i);
      ChunkState &c = chunk(buf, rank, idx);
      c.defined = true;
      c.value[rank * p.inputChunks + i] = 1;
    }
  }
  while (!failed) {
    // A block at the end of a launch waits for its rank's kernel boundary.
    auto runnable = [&](int b) {
      const Block &blk = blocks[b];
      return blk.pc < total(blk) && blk.launch() <= rankLaunch[blk.rank];
    };
    std::vector<int> live;
    for (size_t b = 0; b < blocks.size(); ++b)
      if (runnable(b))
        live.push_back(b);
    std::shuffle(live.begin(), live.end(), rng);
    // Adversarial schedules: every other seed starves one rank, running it
    // only when nothing else can run, so fast peers get as far ahead as the
    // synchronisation lets them (races across launches show up).
    if (slowRank >= 0)
      std::stable_partition(live.begin(), live.end(),
                            [&](int b) { return blocks[b].rank != slowRank; });
    bool progress = false;
    for (int b : live) {
      cur = b;
      if (!step(progress))
        return false;
      if (progress)
        break;
    }
    // Kernel boundaries: every block of the rank finished launch k.
    for (auto &[rank, bs] : rankBlocks) {
      int done = rankLaunch[rank];
      bool allDone = true;
      for (int b : bs)
        allDone &= blocks[b].pc >= blocks[b].ops.size() * (done + 1);
      if (allDone && done < launches) {
        if (!boundary(rank, done))
          return false;
        rankLaunch[rank] = done + 1;
        progress = true;
      }
    }
    bool finished = true;
    for (const Block &b : blocks)
      finished &= b.pc >= total(b);
    if (finished)
      break;
    if (!progress) {
      llvm::errs() << "check: deadlock; blocked:\n";
      for (int b : live)
        llvm::errs() << "  rank " << blocks[b].rank << " tb " << blocks[b].tb
                     << " launch " << blocks[b].launch() << " at '"
                     << stringifyOpKind(currentOp(b).kind) << " "
                     << currentOp(b).channel << "' " << currentOp(b).loc
                     << "\n";
      return false;
    }
  }
  if (failed)
    return false;
  for (auto &[key, q] : signals)
    if (!q.empty()) {
      llvm::errs() << "check: " << q.size() << " signal(s) on channel " << key
                   << " are never waited for\n";
      return false;
    }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  auto buf = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buf) {
    llvm::errs() << "check: cannot open " << inputFile << "\n";
    return 1;
  }
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buf), llvm::SMLoc());
  mlir::MLIRContext ctx;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  FrontendOptions opts;
  opts.ranks = ranks;
  if (gpusPerNode > 0)
    opts.gpusPerNode = gpusPerNode.getValue();
  opts.instances = instances;
  for (const std::string &d : defines) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t v = 0;
    if (value.getAsInteger(0, v)) {
      llvm::errs() << "check: bad -D " << d << "\n";
      return 1;
    }
    opts.defines.push_back({name.str(), v});
  }
  auto module = parseProgram(sm, ctx);
  if (!module)
    return 1;
  std::optional<Program> program = evaluateProgram(*module, opts, ctx);
  if (!program)
    return 1;
  if (print)
    printProgram(*program, llvm::outs());
  if (!runChecks)
    return 0;
  for (int s = 1; s <= seeds; ++s) {
    if (!Machine(*program, s).run()) {
      llvm::errs() << "check: FAILED with schedule seed " << s << "\n";
      return 1;
    }
  }
  // A summary FileCheck can match: operations per rank.
  for (const RankProgram &rp : program->rankPrograms) {
    std::map<std::string, int> counts;
    std::function<void(const std::vector<Operation> &)> count =
        [&](const std::vector<Operation> &ops) {
          for (const Operation &op : ops) {
            ++counts[stringifyOpKind(op.kind).str()];
            count(op.body);
          }
        };
    for (const ThreadBlock &tb : rp.threadBlocks)
      count(tb.ops);
    llvm::outs() << "rank " << rp.rank << ":";
    for (auto &[kind, n] : counts)
      llvm::outs() << " " << kind << "=" << n;
    llvm::outs() << "\n";
  }
  llvm::outs() << "OK " << program->name << ": " << seeds << " schedules of "
               << launches << " launches, results correct\n";
  return 0;
}
