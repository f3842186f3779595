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

/// A reduce or read_reduce, seen uniformly.
struct Reduction {
  ChunkAttr dst;
  SmallVector<Attribute> srcs, channels, remotes;
};

std::optional<Reduction> getReduction(Operation *op) {
  // A copy is a reduction of one source; merged into a reduction that
  // accumulates into its destination, it saves a pass over the chunk.
  if (auto copy = dyn_cast<CopyOp>(op))
    return Reduction{copy.getDst(), {copy.getSrc()}, {}, {}};
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return Reduction{reduce.getDst(), chunkList(reduce.getSrcs()), {}, {}};
  if (auto reduce = dyn_cast<ReadReduceOp>(op))
    return Reduction{reduce.getDst(), chunkList(reduce.getSrcs()),
                     chunkList(reduce.getChannels()),
                     chunkList(reduce.getRemotes())};
  return std::nullopt;
}

/// `second` accumulates into `first`'s destination: it reads that chunk
/// exactly once and nothing else of it, on channels `first` does not use.
bool accumulates(const Reduction &first, const Reduction &second) {
  if (second.dst != first.dst)
    return false;
  unsigned self = 0;
  for (Attribute src : second.srcs) {
    auto chunk = cast<ChunkAttr>(src);
    if (chunk == first.dst)
      ++self;
    else if (chunk.overlaps(first.dst))
      return false;
  }
  return self == 1 && llvm::none_of(second.channels, [&](Attribute channel) {
           return llvm::is_contained(first.channels, channel);
         });
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
      // A copy never accumulates: it may not read its own destination.
      std::optional<Reduction> second =
          isa<CopyOp>(next) ? std::nullopt : getReduction(next);
      if (second && accumulates(merged, *second)) {
        bool skipped = false;
        for (Attribute src : second->srcs) {
          if (!skipped && src == merged.dst) {
            skipped = true;
            continue;
          }
          merged.srcs.push_back(src);
        }
        llvm::append_range(merged.channels, second->channels);
        llvm::append_range(merged.remotes, second->remotes);
        OpAccesses acc = getAccesses(next, &groups);
        llvm::append_range(moving.reads, acc.reads);
        chain.push_back(next);
        continue;
      }
      if (!canSinkPast(next) ||
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
    Operation *result;
    if (merged.channels.empty())
      result = ReduceOp::create(builder, loc, merged.dst,
                                builder.getArrayAttr(merged.srcs));
    else
      result = ReadReduceOp::create(builder, loc, merged.dst,
                                    builder.getArrayAttr(merged.srcs),
                                    builder.getArrayAttr(merged.channels),
                                    builder.getArrayAttr(merged.remotes));
    // Every member but the first counted as a destination, as does the
    // merged op replacing them.
    destinations[merged.dst] -= chain.size() - (counted ? 1 : 2);
    for (Operation *member : chain)
      member->erase();
    return result;
  }

  void runOnOperation() override {
    groups = SwitchGroups(getOperation());
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
  /// How many reduce/read_reduce ops of the current block write each chunk.
  DenseMap<Attribute, int64_t> destinations;
};

} // namespace
