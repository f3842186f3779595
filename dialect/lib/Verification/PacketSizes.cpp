//===- PacketSizes.cpp - LL reads take no more packets than were sent -----===//
//
// An operation moves as many elements as its smallest operand holds, and
// chunk sizes depend on the run-time count: user-buffer chunk j covers
// [floor(j*c/K), floor((j+1)*c/K)), a scratch chunk ceil(c/K) elements. An
// LL put from a small user chunk therefore fills only a prefix of its packet
// chunk, and a read that takes the whole chunk (into scratch, or into a
// larger user chunk) spins forever on packets nobody sends. Chunk
// granularity cannot see this; this check compares, for every packet chunk
// that is read, the elements read with the elements its one LL put writes,
// for every count.
//
// Each length is, with c = q*K + r, a minimum of terms n*q + g(r) with
// 0 <= g(r) <= n, clamped to a chunk of q + [r > 0] elements: for each r a
// piecewise-linear function of q whose breaks lie below 2n + 6. Checking q
// up to there and one q far beyond (where both sides are linear) decides
// every count.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

#include <memory>

#include <algorithm>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

/// Elements of `range` for count `c` (K chunks per rank).
int64_t length(const ProgramModel &model, const Range &range, int64_t c) {
  int64_t k = model.chunks;
  if (!model.buffers[range.buffer].user)
    return range.count * ((c + k - 1) / k);
  // Chunk j of a user buffer starts at floor(j*c/K); j*c stays far below
  // 2^63 for the counts tried here (j < 2^24, c < 2^31).
  int64_t a = range.index, b = range.index + range.count;
  return (b * c) / k - (a * c) / k;
}

/// The elements an operation moves, as a function of the count: its
/// smallest operand. When every operand spans n chunks (the usual case) it
/// is n*q + h[r] for c = q*K + r: each operand holds n*q plus its length
/// at c = r, which depends only on its kind, n and (user buffers) its first
/// chunk modulo K.
class Moved {
public:
  Moved(const ProgramModel &model, const Step &step) : model(model), step(step) {
    for (const Move &move : step.moves) {
      n = std::max(n, move.dst.count);
      uniform &= move.dst.count == step.moves.front().dst.count;
    }
    if (!uniform)
      return;
    int64_t k = model.chunks;
    // Distinct operand shapes: -1 for scratch, else the first chunk mod K.
    llvm::SmallVector<int64_t, 4> shapes;
    forEachOperand([&](const Range &range) {
      int64_t shape =
          model.buffers[range.buffer].user ? range.index % k : -1;
      if (!llvm::is_contained(shapes, shape))
        shapes.push_back(shape);
    });
    h.assign(k, INT64_MAX);
    for (int64_t shape : shapes) {
      Range range;
      range.count = n;
      range.index = shape < 0 ? 0 : shape;
      range.buffer = shape < 0 ? scratchBuffer() : userBuffer();
      for (int64_t r = 0; r < k; ++r)
        h[r] = std::min(h[r], length(model, range, r));
    }
  }
  int64_t at(int64_t c) const {
    int64_t k = model.chunks;
    if (uniform)
      return n * (c / k) + h[c % k];
    int64_t best = INT64_MAX;
    forEachOperand(
        [&](const Range &range) { best = std::min(best, length(model, range, c)); });
    return best == INT64_MAX ? 0 : best;
  }
  /// Whether this operation moves at least as much as `other` for every
  /// count, known without trying counts.
  bool surelyCovers(const Moved &other) const {
    if (!uniform || !other.uniform || n != other.n)
      return false;
    for (size_t r = 0; r < h.size(); ++r)
      if (h[r] < other.h[r])
        return false;
    return true;
  }
  /// The widest operand, in chunks.
  int64_t n = 1;

private:
  template <typename Fn> void forEachOperand(Fn fn) const {
    for (const Move &move : step.moves) {
      fn(move.dst);
      for (const Range &src : move.srcs)
        fn(src);
    }
  }
  int scratchBuffer() const { return findBuffer(false); }
  int userBuffer() const { return findBuffer(true); }
  int findBuffer(bool user) const {
    for (size_t b = 0; b < model.buffers.size(); ++b)
      if (model.buffers[b].user == user)
        return static_cast<int>(b);
    return 0;
  }
  const ProgramModel &model;
  const Step &step;
  bool uniform = true;
  std::vector<int64_t> h;
};

/// Elements of the `k`-th chunk of a range of which `total` elements move.
int64_t inChunk(int64_t total, int64_t k, int64_t chunk) {
  return std::clamp<int64_t>(total - k * chunk, 0, chunk);
}

/// Elements `step` moves in the `k`-th chunk of its operands at count `c`.
/// Inside a pipeline an operation on a run of chunks is done one chunk at a
/// time (docs/simulator.md), each moving its own smallest chunk.
int64_t elementsInChunk(const ProgramModel &model, const Step &step,
                        const Moved &moved, int64_t k, int64_t c) {
  int64_t chunk = (c + model.chunks - 1) / model.chunks;
  if (!step.pipeline)
    return inChunk(moved.at(c), k, chunk);
  int64_t best = INT64_MAX;
  auto consider = [&](const Range &range) {
    if (k >= range.count)
      return;
    Range one = range;
    one.index += k;
    one.count = 1;
    best = std::min(best, length(model, one, c));
  };
  for (const Move &move : step.moves) {
    consider(move.dst);
    for (const Range &src : move.srcs)
      consider(src);
  }
  return best == INT64_MAX ? 0 : best;
}

} // namespace

LogicalResult mscl::verify::checkPacketSizes(const ProgramModel &model,
                                             const Scheduler &scheduler) {
  const auto &writers = scheduler.packetWriters();
  const int64_t k = model.chunks;
  llvm::DenseSet<Operation *> reported;
  llvm::DenseMap<const Step *, std::unique_ptr<Moved>> cache;
  auto movedBy = [&](const Step &step) -> const Moved & {
    std::unique_ptr<Moved> &entry = cache[&step];
    if (!entry)
      entry = std::make_unique<Moved>(model, step);
    return *entry;
  };
  llvm::DenseMap<std::pair<const Moved *, const Moved *>, bool> covers;
  bool ok = true;
  for (const Block &block : model.blocks)
    for (const Step &step : block.steps)
      model.forEachPacketRead(step, [&](const Range &src, int64_t j) {
        auto it = writers.find(model.slot(src, j));
        if (it == writers.end() || it->second.size() != 1)
          return; // checkPacketWriters reports these
        const Step &put = model.step(it->second.front());
        // The writer's position of this chunk within its destination.
        int64_t index = src.index + j, offset = -1;
        for (const Move &write : put.moves)
          if (write.dst.rank == src.rank &&
              write.dst.buffer == src.buffer &&
              write.dst.index <= index &&
              index < write.dst.index + write.dst.count)
            offset = index - write.dst.index;
        if (offset < 0)
          return;
        const Moved &reads = movedBy(step), &writes = movedBy(put);
        if (j == offset && !step.pipeline && !put.pipeline) {
          auto [known, fresh] = covers.try_emplace({&writes, &reads});
          if (fresh)
            known->second = writes.surelyCovers(reads);
          if (known->second)
            return;
        }
        int64_t bound = 2 * std::max(reads.n, writes.n) + 6;
        int64_t failing = -1, read = 0, written = 0;
        for (int64_t q = 0; q <= bound + 1 && failing < 0; ++q)
          for (int64_t r = 0; r < k && failing < 0; ++r) {
            int64_t c = (q <= bound ? q : bound + 1000000) * k + r;
            if (c == 0)
              continue;
            read = elementsInChunk(model, step, reads, j, c);
            written = elementsInChunk(model, put, writes, offset, c);
            if (read > written)
              failing = c;
          }
        if (failing < 0 || !reported.insert(step.op).second)
          return;
        ok = false;
        InFlightDiagnostic diag =
            step.op->emitError()
            << "reads more packets of " << model.slotName(model.slot(src, j))
            << " than the LL put into it sends: at a count of " << failing
            << " elements the put fills " << written
            << " element(s) of the chunk and this operation reads " << read
            << "; the read would spin forever on the rest";
        diag.attachNote(put.op->getLoc())
            << "the LL put, which moves only as many elements as its "
               "smallest operand holds";
      });
  return success(ok);
}
