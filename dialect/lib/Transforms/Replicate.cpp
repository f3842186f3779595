//===- Replicate.cpp - More thread blocks and chunks for parallelism -----===//
//
// Instance i of K runs a copy of every thread block on its own part of the
// data. User-buffer chunk j becomes chunk j*K + i: with K times the chunks
// the old chunk j covers exactly new chunks j*K .. j*K+K-1 (the floor
// boundaries of the layout agree), so the user-visible layout is unchanged.
// A user-buffer range of several chunks is no longer contiguous per
// instance and is split into one op per chunk first (every data op is
// element-wise; a put_with_signal becomes puts and one put_with_signal on
// the last chunk, so the peer still sees one signal). Scratch buffers have no
// user layout: instance i takes the contiguous copy i*M .. i*M+M-1 of an
// M-chunk buffer, so scratch ranges stay whole. Channels get one copy per
// instance (ids id*K + i, both ends alike, so the pairing of ends is kept)
// because a channel belongs to one thread block.
//
//===----------------------------------------------------------------------===//

#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLREPLICATE
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct ReplicatePass final : mscl::impl::MsclReplicateBase<ReplicatePass> {
  using MsclReplicateBase::MsclReplicateBase;
  void runOnOperation() override;

private:
  void replicateChannels(ProgramOp program);
  void splitUserRanges(Block &block);
  void remap(Operation *op, int64_t instance);
  Attribute remapAttr(Attribute attr, int64_t instance);

  int64_t factor = 1;
  /// Scratch buffers and their chunk counts before replication.
  llvm::StringMap<int64_t> scratchChunks;
  /// Channel name -> its name in each instance.
  llvm::StringMap<SmallVector<FlatSymbolRefAttr>> channelCopies;
};

/// Replaces every chunk and channel reference held by `op` through `fn`.
void mapOperands(Operation *op, function_ref<Attribute(Attribute)> fn) {
  if (auto comm = dyn_cast<CommOpInterface>(op))
    comm.mapChunksAndChannels(fn);
}

/// Calls `fn` on every chunk `op` names.
void forEachChunk(Operation *op, function_ref<void(ChunkAttr)> fn) {
  for (const Action &action : getActions(op))
    for (ArrayRef<ActionOperand> operands :
         {ArrayRef<ActionOperand>(action.reads),
          ArrayRef<ActionOperand>(action.writes)})
      for (const ActionOperand &operand : operands)
        fn(operand.chunk);
}

/// Whether `op` names a range of several user-buffer chunks.
bool hasUserRange(Operation *op, const llvm::StringMap<int64_t> &scratch) {
  bool found = false;
  forEachChunk(op, [&](ChunkAttr chunk) {
    if (chunk.getCount() > 1 && !scratch.count(chunk.getBuffer()))
      found = true;
  });
  return found;
}

} // namespace

void ReplicatePass::replicateChannels(ProgramOp program) {
  llvm::StringSet<> names;
  for (Operation &op : program.getBodyBlock())
    if (auto symbol =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      names.insert(symbol.getValue());
  OpBuilder builder(&getContext());
  for (auto channel :
       llvm::make_early_inc_range(program.getBodyBlock().getOps<ChannelOp>())) {
    int64_t id = channel.getIdAttr().getInt();
    SmallVector<FlatSymbolRefAttr> &copies =
        channelCopies[channel.getSymName()];
    copies.push_back(FlatSymbolRefAttr::get(channel.getSymNameAttr()));
    builder.setInsertionPointAfter(channel);
    for (int64_t i = 1; i < factor; ++i) {
      std::string name = (channel.getSymName() + "_i" + Twine(i)).str();
      while (names.contains(name))
        name += "_";
      names.insert(name);
      auto copy = cast<ChannelOp>(builder.clone(*channel));
      copy.setSymName(name);
      copy.setIdAttr(builder.getI64IntegerAttr(id * factor + i));
      copies.push_back(FlatSymbolRefAttr::get(copy.getSymNameAttr()));
      builder.setInsertionPointAfter(copy);
    }
    channel.setIdAttr(builder.getI64IntegerAttr(id * factor));
  }
}

void ReplicatePass::splitUserRanges(Block &block) {
  OpBuilder builder(&getContext());
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto pipeline = dyn_cast<PipelineOp>(op)) {
      splitUserRanges(pipeline.getBody().front());
      continue;
    }
    if (!hasUserRange(&op, scratchChunks))
      continue;
    int64_t count = 0;
    forEachChunk(&op, [&](ChunkAttr chunk) {
      count = std::max(count, chunk.getCount());
    });
    builder.setInsertionPoint(&op);
    for (int64_t m = 0; m < count; ++m) {
      Operation *piece = builder.clone(op);
      mapOperands(piece, [&](Attribute attr) -> Attribute {
        auto chunk = dyn_cast<ChunkAttr>(attr);
        if (!chunk)
          return attr;
        return ChunkAttr::get(chunk.getContext(), chunk.getBuffer(),
                              chunk.getRank(), chunk.getIndex() + m, 1);
      });
      // One signal (and flush) still covers all the pieces: only the last
      // piece keeps it, the others are plain puts before it.
      if (m + 1 < count &&
          isa<PutWithSignalOp, PutWithSignalAndFlushOp>(piece)) {
        // The piece's first action is its put part.
        Action put = getActions(piece).front();
        PutOp::create(builder, piece->getLoc(), put.writes[0].via,
                      put.writes[0].chunk, put.reads[0].chunk);
        piece->erase();
      }
    }
    op.erase();
  }
}

void ReplicatePass::remap(Operation *root, int64_t instance) {
  // Many ops name the same chunks: map each attribute once.
  DenseMap<Attribute, Attribute> cache;
  auto map = [&](Attribute attr) -> Attribute {
    auto [it, inserted] = cache.try_emplace(attr, attr);
    if (!inserted)
      return it->second;
    if (auto chunk = dyn_cast<ChunkAttr>(attr)) {
      auto scratch = scratchChunks.find(chunk.getBuffer());
      int64_t index = scratch != scratchChunks.end()
                          ? instance * scratch->second + chunk.getIndex()
                          : chunk.getIndex() * factor + instance;
      it->second = ChunkAttr::get(chunk.getContext(), chunk.getBuffer(),
                                  chunk.getRank(), index, chunk.getCount());
    } else if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr)) {
      auto copies = channelCopies.find(ref.getValue());
      if (copies != channelCopies.end())
        it->second = copies->second[instance];
    }
    return it->second;
  };
  root->walk([&](Operation *op) {
    if (op != root)
      mapOperands(op, map);
  });
}

void ReplicatePass::runOnOperation() {
  ProgramOp program = getOperation();
  // One pass instance may run on several programs: start afresh.
  scratchChunks.clear();
  channelCopies.clear();
  factor = instances ? static_cast<int64_t>(instances)
                     : program.getInstancesAttr().getInt();
  if (factor < 1 || factor > 4096) {
    program.emitOpError() << "cannot replicate " << factor
                          << " times; instances must be in 1..4096";
    return signalPassFailure();
  }
  if (factor == 1) {
    markAllAnalysesPreserved();
    return;
  }

  Builder builder(&getContext());
  auto scale = [&](IntegerAttr attr) {
    return builder.getI64IntegerAttr(attr.getInt() * factor);
  };
  program.setChunksAttr(scale(program.getChunksAttr()));
  program.setInputChunksAttr(scale(program.getInputChunksAttr()));
  program.setOutputChunksAttr(scale(program.getOutputChunksAttr()));
  program.setInstancesAttr(builder.getI64IntegerAttr(1));
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>()) {
    if (buffer.getKind() == BufferKind::scratch)
      scratchChunks[buffer.getSymName()] = buffer.getChunksAttr().getInt();
    buffer.setChunksAttr(scale(buffer.getChunksAttr()));
  }
  replicateChannels(program);

  OpBuilder opBuilder(&getContext());
  for (auto rank : program.getBodyBlock().getOps<RankOp>()) {
    SmallVector<ThreadBlockOp> blocks(
        rank.getBody().front().getOps<ThreadBlockOp>());
    for (ThreadBlockOp block : blocks) {
      splitUserRanges(block.getBody().front());
      int64_t id = block.getIdAttr().getInt();
      int64_t group = block.getGroupAttr().getInt();
      opBuilder.setInsertionPointAfter(block);
      SmallVector<Operation *> copies{block};
      for (int64_t i = 1; i < factor; ++i) {
        copies.push_back(opBuilder.clone(*block));
        opBuilder.setInsertionPointAfter(copies.back());
      }
      for (auto [i, copy] : llvm::enumerate(copies)) {
        cast<ThreadBlockOp>(copy).setIdAttr(
            builder.getI64IntegerAttr(id * factor + i * group));
        remap(copy, i);
      }
    }
  }
}
