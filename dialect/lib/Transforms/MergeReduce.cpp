//===- MergeReduce.cpp - Merge reductions into one destination -----------===//
//
// `reduce to D from S1` followed by `reduce to D from [D, S2...]` computes
// D = S1 + S2 in two passes over D; one `reduce to D from S1 ++ S2` reads
// each input once and writes D once. read_reduce merges the same way, its
// remote chunks concatenated, and a reduce merges with a read_reduce into a
// read_reduce. The first op moves down to the second, so every op between
// them must let it pass (FusionUtils.h) and not touch its chunks. A copy
// into D followed by a reduction accumulating into D merges the same way
// (`copy D <- X; reduce D from [D, Y]` is `reduce D from [X, Y]`).
//
// A merge never changes what is computed, bit for bit: sources are reduced
// left to right in the element type, so `reduce(D, a, b); reduce(D, D, c)`
// is ((a + b) + c) and merges into `reduce(D, a, b, c)`, but
// `reduce(D, c, D)` is (c + (a + b)) and does not merge (a copy's one
// source may take D's place anywhere). read_reduce reduces its local
// sources first, then the remote ones: a merge whose order would put a
// local source after a remote one is left alone. Translation validation
// (docs/verification.md) checks this after the pass.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLMERGEREDUCE
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

/// One source of a reduction: a local chunk, or a peer's chunk read over
/// `channel`.
struct Source {
  ChunkAttr chunk;
  Attribute channel; ///< null for a local chunk
};

/// A copy, reduce or read_reduce, seen uniformly: its sources in the order
/// they are reduced.
struct Reduction {
  ChunkAttr dst;
  SmallVector<Source> sources;
  bool isCopy = false;
};

std::optional<Reduction> getReduction(Operation *op) {
  Reduction r;
  auto addLocals = [&](ArrayAttr chunks) {
    for (Attribute c : chunks)
      r.sources.push_back({cast<ChunkAttr>(c), {}});
  };
  if (auto copy = dyn_cast<CopyOp>(op)) {
    r.dst = copy.getDst();
    r.sources.push_back({copy.getSrc(), {}});
    r.isCopy = true;
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    r.dst = reduce.getDst();
    addLocals(reduce.getSrcs());
  } else if (auto reduce = dyn_cast<ReadReduceOp>(op)) {
    r.dst = reduce.getDst();
    addLocals(reduce.getSrcs());
    for (auto [channel, chunk] :
         llvm::zip(reduce.getChannels(), reduce.getRemotes()))
      r.sources.push_back({cast<ChunkAttr>(chunk), channel});
  } else {
    return std::nullopt;
  }
  return r;
}

/// `second` reduces `first`'s destination, reading it exactly once and
/// nothing else of it, on channels `first` does not use: the two as one
/// reduction, in the same order, or nullopt when they are not that or
/// one operation cannot list the merged order.
std::optional<Reduction> merge(const Reduction &first,
                               const Reduction &second) {
  if (second.isCopy || second.dst != first.dst)
    return std::nullopt;
  int self = -1;
  for (auto [i, src] : llvm::enumerate(second.sources)) {
    if (src.channel) {
      if (llvm::any_of(first.sources, [&](const Source &f) {
            return f.channel == src.channel;
          }))
        return std::nullopt;
      continue;
    }
    if (src.chunk == first.dst) {
      if (self >= 0)
        return std::nullopt;
      self = static_cast<int>(i);
    } else if (src.chunk.overlaps(first.dst)) {
      return std::nullopt;
    }
  }
  // D = fold(first) takes D's place: as a leading run of sources only if
  // it comes first (left to right), anywhere if it is one source.
  if (self < 0 || (self > 0 && first.sources.size() > 1))
    return std::nullopt;
  Reduction merged{first.dst, {}, false};
  for (auto [i, src] : llvm::enumerate(second.sources)) {
    if (static_cast<int>(i) == self)
      llvm::append_range(merged.sources, first.sources);
    else
      merged.sources.push_back(src);
  }
  // reduce and read_reduce reduce every local source before the remote
  // ones.
  bool remoteSeen = false;
  for (const Source &src : merged.sources) {
    if (!src.channel && remoteSeen)
      return std::nullopt;
    remoteSeen |= bool(src.channel);
  }
  return merged;
}

struct MergeReducePass final
    : mscl::impl::MsclMergeReduceBase<MergeReducePass> {
  /// Merges `op` and every later reduction accumulating into its
  /// destination (a chain, in one rewrite) into one op at the last of them.
  /// Returns the merged op, or null.
  Operation *tryMerge(Operation *op, OpBuilder &builder) {
    std::optional<Reduction> first = getReduction(op);
    if (!first)
      return nullptr;
    // Only scan when a later reduction into the same chunk can exist.
    bool counted = !isa<CopyOp>(op);
    if (destinations.lookup(first->dst) <= (counted ? 1 : 0))
      return nullptr;
    Reduction merged = *first;
    SmallVector<Operation *> chain{op};
    OpAccesses moving = getAccesses(op, &groups);
    unsigned scanned = 0;
    for (Operation *next = op->getNextNode(); next && scanned < kFusionWindow;
         next = next->getNextNode(), ++scanned) {
      std::optional<Reduction> second = getReduction(next);
      std::optional<Reduction> both =
          second ? merge(merged, *second) : std::nullopt;
      if (both) {
        merged = std::move(*both);
        OpAccesses acc = getAccesses(next, &groups);
        llvm::append_range(moving.reads, acc.reads);
        chain.push_back(next);
        continue;
      }
      if (!canSinkPast(next, *packets) ||
          accessesConflict(moving, getAccesses(next, &groups)))
        break;
    }
    if (chain.size() < 2)
      return nullptr;

    SmallVector<Location> locs;
    for (Operation *member : chain)
      locs.push_back(member->getLoc());
    builder.setInsertionPoint(chain.back());
    Location loc = builder.getFusedLoc(locs);
    SmallVector<Attribute> locals, channels, remotes;
    for (const Source &src : merged.sources) {
      if (!src.channel) {
        locals.push_back(src.chunk);
        continue;
      }
      channels.push_back(src.channel);
      remotes.push_back(src.chunk);
    }
    Operation *result;
    if (channels.empty())
      result = ReduceOp::create(builder, loc, merged.dst,
                                builder.getArrayAttr(locals));
    else
      result = ReadReduceOp::create(builder, loc, merged.dst,
                                    builder.getArrayAttr(locals),
                                    builder.getArrayAttr(channels),
                                    builder.getArrayAttr(remotes));
    // Every member but the first counted as a destination, as does the
    // merged op replacing them.
    destinations[merged.dst] -= chain.size() - (counted ? 1 : 2);
    for (Operation *member : chain)
      member->erase();
    return result;
  }

  void runOnOperation() override {
    groups = SwitchGroups(getOperation());
    packets.emplace(getOperation());
    bool changed = false;
    OpBuilder builder(&getContext());
    forEachOpList(getOperation(), [&](Block &block) {
      destinations.clear();
      for (Operation &op : block)
        if (isa<ReduceOp, ReadReduceOp>(op))
          ++destinations[getReduction(&op)->dst];
      Operation *op = block.empty() ? nullptr : &block.front();
      while (op) {
        // After a merge, resume right after the erased op: ops between it
        // and the merged one may merge with later ones too.
        Operation *prev = op->getPrevNode();
        if (tryMerge(op, builder)) {
          changed = true;
          op = prev ? prev->getNextNode() : &block.front();
          continue;
        }
        op = op->getNextNode();
      }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }

  SwitchGroups groups;
  std::optional<PacketBuffers> packets;
  /// How many reduce/read_reduce ops of the current block write each chunk.
  DenseMap<Attribute, int64_t> destinations;
};

} // namespace
