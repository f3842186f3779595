//===- FuseReducePut.cpp - reduce + puts of its result -> reduce_put -----===//
//
// `reduce to D from S` followed by `put @c_i to R_i from D` on memory
// channels computes the reduction in registers and writes it straight to
// every peer: `reduce_put [@c_1 R_1, ...] from S store D`. The reduce and
// the earlier puts move down to the last put, so every op between them
// must let them pass (FusionUtils.h) and not touch their chunks. `store D`
// stays unless D is a scratch chunk that no other operation of the program
// reads (the reduce itself may: `reduce to D from [D, X]`) and, where the
// reduce does not read D, none writes: a race between two writers of D then
// stays in the program the proofs check (one that reads D races with the
// same writers through that read). A reduce_put with a
// store takes later puts of its stored chunk the same way. Puts of one source
// to several peers become a one-source reduce_put without a store, which
// loads the source once for all of them. Port channels are left alone: their
// proxy copies from memory. A put fuses only where the reduce_put moves as
// many elements as the reduce did at every count, and, on an LL channel or
// from a source no reduce wrote, as many as the put did (keepsCounts).
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLFUSEREDUCEPUT
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

using ChunkKey = std::tuple<unsigned, int64_t, int64_t>;

struct FuseReducePutPass final
    : mscl::impl::MsclFuseReducePutBase<FuseReducePutPass> {
  void runOnOperation() override;

private:
  Operation *tryFuse(Operation *op, OpBuilder &builder);
  bool isFusablePut(PutOp put, ChunkAttr value, ArrayRef<Attribute> channels,
                    ArrayRef<Attribute> dsts) const;
  bool keepsCounts(MovedElements &moved, PutOp put, bool readOnly);
  bool needsStore(ChunkAttr value, bool readsValue,
                  const llvm::SmallPtrSetImpl<Operation *> &puts);
  void indexUsers();

  std::optional<ChannelTable> channelTable;
  std::optional<PacketBuffers> packets;
  std::optional<ElementCounts> counts;
  SwitchGroups groups;
  llvm::StringSet<> scratchBuffers;
  /// How many puts of the current block send each chunk.
  DenseMap<Attribute, int64_t> putSources;
  /// Every op that reads, and every op that writes, each chunk (buffer,
  /// rank, index), program-wide. Only compared by identity; filled before
  /// the first rewrite that asks.
  DenseMap<ChunkKey, SmallVector<Operation *, 2>> readers, writers;
  llvm::StringMap<unsigned> bufferIds;
  ChunkKey key(ChunkAttr chunk, int64_t index) {
    unsigned id = bufferIds.try_emplace(chunk.getBuffer(), bufferIds.size())
                      .first->second;
    return {id, chunk.getRank(), index};
  }
  bool indexed = false;
};

void FuseReducePutPass::indexUsers() {
  getOperation().walk([&](Operation *op) {
    OpAccesses accesses = getAccesses(op, &groups);
    for (auto [list, index] :
         {std::pair(llvm::ArrayRef(accesses.reads), &readers),
          std::pair(llvm::ArrayRef(accesses.writes), &writers)})
      for (const ChunkAccess &access : list)
        for (int64_t i = access.chunk.getIndex(); i < access.chunk.getEnd();
             ++i)
          (*index)[key(access.chunk, i)].push_back(op);
  });
}

bool FuseReducePutPass::isFusablePut(PutOp put, ChunkAttr value,
                                     ArrayRef<Attribute> channels,
                                     ArrayRef<Attribute> dsts) const {
  if (put.getSrc() != value)
    return false;
  ChannelOp channel = channelTable->lookup(put.getChannelAttr());
  if (!channel || channel.getKind() != ChannelKind::memory ||
      llvm::is_contained(channels, put.getChannelAttr()))
    return false;
  return llvm::none_of(dsts, [&](Attribute dst) {
    return cast<ChunkAttr>(dst).overlaps(put.getDst());
  });
}

/// Whether the reduce_put that also sends `put` moves what the reduce (or
/// the first put of the source) moved, and what `put` moved, at every count.
/// The reduce's own count must stay: it is what the store and the sent
/// value hold. A put may send more of the reduced chunk than the reduce
/// wrote (a scratch chunk after a reduce of user chunks): what lies beyond
/// is stale, and an HB put may leave it behind, but an LL put must send
/// every packet its reader spins on, and a put of a source no reduce wrote
/// sends data.
bool FuseReducePutPass::keepsCounts(MovedElements &moved, PutOp put,
                                    bool readOnly) {
  if (!moved.keptWith(put.getDst()))
    return false;
  ChannelOp channel = channelTable->lookup(put.getChannelAttr());
  bool ll = channel.getProtocol() && *channel.getProtocol() == Protocol::LL;
  return !(ll || readOnly) ||
         moved.sameWith(put.getDst(), getAccesses(put, &groups));
}

bool FuseReducePutPass::needsStore(
    ChunkAttr value, bool readsValue,
    const llvm::SmallPtrSetImpl<Operation *> &puts) {
  if (!scratchBuffers.contains(value.getBuffer()))
    return true;
  assert(indexed && "users are indexed before any rewrite");
  auto othersUse = [&](const DenseMap<ChunkKey, SmallVector<Operation *, 2>>
                           &index) {
    for (int64_t i = value.getIndex(); i < value.getEnd(); ++i) {
      auto it = index.find(key(value, i));
      if (it != index.end() &&
          llvm::any_of(it->second,
                       [&](Operation *user) { return !puts.contains(user); }))
        return true;
    }
    return false;
  };
  return othersUse(readers) || (!readsValue && othersUse(writers));
}

Operation *FuseReducePutPass::tryFuse(Operation *op, OpBuilder &builder) {
  ChunkAttr value;
  ArrayAttr srcs;
  SmallVector<Attribute> channels, dsts;
  bool keepStore = false;
  bool readOnly = false; // op is a put: nothing to store
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    value = reduce.getDst();
    srcs = reduce.getSrcs();
  } else if (auto put = dyn_cast<PutOp>(op)) {
    // The first of several puts of one source: `value` is only read.
    value = put.getSrc();
    if (!isFusablePut(put, value, channels, dsts))
      return nullptr;
    srcs = builder.getArrayAttr({value});
    channels.push_back(put.getChannelAttr());
    dsts.push_back(put.getDst());
    readOnly = true;
  } else if (auto reducePut = dyn_cast<ReducePutOp>(op)) {
    value = reducePut.getStoreAttr();
    if (!value)
      return nullptr;
    srcs = reducePut.getSrcs();
    channels = chunkList(reducePut.getChannels());
    dsts = chunkList(reducePut.getDsts());
    keepStore = true;
  } else {
    return nullptr;
  }

  // Only scan when a put of the value can follow.
  if (putSources.lookup(value) < (readOnly ? 2 : 1))
    return nullptr;
  OpAccesses moving = getAccesses(op, &groups);
  MovedElements moved(*counts, moving);
  SmallVector<Operation *> puts;
  llvm::SmallPtrSet<Operation *, 8> putSet;
  unsigned scanned = 0;
  for (Operation *next = op->getNextNode(); next && scanned < kFusionWindow;
       next = next->getNextNode(), ++scanned) {
    auto put = dyn_cast<PutOp>(next);
    if (put && isFusablePut(put, value, channels, dsts) &&
        keepsCounts(moved, put, readOnly)) {
      channels.push_back(put.getChannelAttr());
      dsts.push_back(put.getDst());
      moving.writes.push_back({put.getDst(), true});
      moved.add(put.getDst());
      puts.push_back(put);
      putSet.insert(put);
      continue;
    }
    if (!canSinkPast(next, *packets) ||
        accessesConflict(moving, getAccesses(next, &groups)))
      break;
  }
  if (puts.empty())
    return nullptr;

  // The reduce itself (which may read its destination) is no other user.
  putSet.insert(op);
  bool readsValue = llvm::is_contained(srcs.getValue(), Attribute(value));
  bool store =
      !readOnly && (keepStore || needsStore(value, readsValue, putSet));
  SmallVector<Location> locs{op->getLoc()};
  for (Operation *put : puts)
    locs.push_back(put->getLoc());
  builder.setInsertionPoint(puts.back());
  auto fused = ReducePutOp::create(
      builder, builder.getFusedLoc(locs), builder.getArrayAttr(channels),
      builder.getArrayAttr(dsts), srcs, store ? value : ChunkAttr());
  putSources[value] -= puts.size() + (readOnly ? 1 : 0);
  for (Operation *put : puts)
    put->erase();
  op->erase();
  return fused;
}

void FuseReducePutPass::runOnOperation() {
  ProgramOp program = getOperation();
  // One pass instance may run on several programs: start afresh.
  scratchBuffers.clear();
  readers.clear();
  writers.clear();
  bufferIds.clear();
  indexed = false;
  channelTable.emplace(program);
  packets.emplace(program);
  counts.emplace(program);
  groups = SwitchGroups(program);
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>())
    if (buffer.getKind() == BufferKind::scratch)
      scratchBuffers.insert(buffer.getSymName());
  // Only a scratch destination can lose its store: index the users then.
  program.walk([&](ReduceOp reduce) {
    if (!indexed && scratchBuffers.contains(reduce.getDst().getBuffer())) {
      indexUsers();
      indexed = true;
    }
  });

  bool changed = false;
  OpBuilder builder(&getContext());
  forEachOpList(program, [&](Block &block) {
    putSources.clear();
    for (auto put : block.getOps<PutOp>())
      ++putSources[put.getSrc()];
    Operation *op = block.empty() ? nullptr : &block.front();
    while (op) {
      // Resume right after the fused producer: ops it moved past may fuse
      // with later ones too.
      Operation *prev = op->getPrevNode();
      if (tryFuse(op, builder)) {
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

} // namespace
