//===- FusionUtils.cpp - Helpers shared by the fusion passes -------------===//

#include "FusionUtils.h"

#include "mscl/IR/MsclSemantics.h"

using namespace mlir;
using namespace mscl;

static bool anyOverlap(ArrayRef<ChunkAccess> a, ArrayRef<ChunkAccess> b) {
  for (const ChunkAccess &x : a)
    for (const ChunkAccess &y : b)
      if (x.chunk.overlaps(y.chunk))
        return true;
  return false;
}

bool mscl::accessesConflict(const OpAccesses &a, const OpAccesses &b) {
  return anyOverlap(a.writes, b.writes) || anyOverlap(a.writes, b.reads) ||
         anyOverlap(a.reads, b.writes);
}

PacketBuffers::PacketBuffers(ProgramOp program) {
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>())
    if (buffer.getPacket())
      names.insert(buffer.getSymName());
}

bool PacketBuffers::readsPackets(Operation *op) const {
  if (names.empty())
    return false;
  for (const Action &action : getActions(op))
    for (const ActionOperand &read : action.reads)
      if (read.reach == Reach::Local && names.contains(read.chunk.getBuffer()))
        return true;
  return false;
}

bool mscl::canSinkPast(Operation *op, const PacketBuffers &packets) {
  if (isa<PutWithSignalOp, PutWithSignalAndFlushOp>(op))
    return false;
  return (isDataOp(op) || isa<BarrierOp>(op)) && !packets.readsPackets(op);
}

void mscl::forEachOpList(ProgramOp program, function_ref<void(Block &)> fn) {
  for (auto rank : program.getBodyBlock().getOps<RankOp>())
    for (auto block : rank.getBody().front().getOps<ThreadBlockOp>()) {
      Block &body = block.getBody().front();
      for (auto pipeline : body.getOps<PipelineOp>())
        fn(pipeline.getBody().front());
      fn(body);
    }
}

ChannelTable::ChannelTable(ProgramOp program) {
  for (auto channel : program.getBodyBlock().getOps<ChannelOp>())
    channels[channel.getSymName()] = channel;
}

ChannelOp ChannelTable::lookup(Attribute ref) const {
  auto [it, fresh] = byRef.try_emplace(ref);
  if (fresh)
    if (auto symbol = dyn_cast<FlatSymbolRefAttr>(ref))
      it->second = channels.lookup(symbol.getValue());
  return it->second;
}

SmallVector<Attribute> mscl::chunkList(ArrayAttr array) {
  return SmallVector<Attribute>(array.begin(), array.end());
}

ElementCounts::ElementCounts(ProgramOp program)
    : layout(program.getChunks()) {
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>())
    if (buffer.getKind() == BufferKind::scratch)
      scratch.insert(buffer.getSymName());
}

MovedElements::MovedElements(const ElementCounts &counts,
                             const OpAccesses &operands)
    : counts(counts) {
  for (llvm::ArrayRef<ChunkAccess> list : {llvm::ArrayRef(operands.reads),
                                           llvm::ArrayRef(operands.writes)})
    for (const ChunkAccess &access : list)
      add(access.chunk);
}

const Residues &MovedElements::lastMoved(int64_t step) {
  while (int64_t(steps.size()) <= step) {
    int64_t next = int64_t(steps.size());
    Residues moved(counts.chunks(), /*all=*/true);
    for (int64_t chunk : chunks)
      moved &= counts.lastElement({chunk % 2 == 1, chunk / 2 + next});
    steps.push_back(std::move(moved));
  }
  return steps[size_t(step)];
}

void MovedElements::add(ChunkAttr chunk) {
  longest = std::max(longest, chunk.getCount());
  auto [user, index] = counts.at(chunk, 0);
  if (!chunks.insert(key({user, index})).second)
    return;
  for (size_t step = 0; step < steps.size(); ++step)
    steps[step] &= counts.lastElement({user, index + int64_t(step)});
}

bool MovedElements::keptWith(ChunkAttr chunk) {
  // The same chunks at every step: the same elements.
  if (chunks.contains(key(counts.at(chunk, 0))))
    return true;
  int64_t last = std::max(longest, chunk.getCount());
  for (int64_t step = 0; step < last; ++step) {
    const Residues &before = lastMoved(step);
    Residues after = before;
    after &= counts.lastElement(counts.at(chunk, step));
    if (after != before)
      return false;
  }
  return true;
}

bool MovedElements::sameWith(ChunkAttr chunk, const OpAccesses &other) {
  int64_t last = std::max(longest, chunk.getCount());
  for (llvm::ArrayRef<ChunkAccess> list :
       {llvm::ArrayRef(other.reads), llvm::ArrayRef(other.writes)})
    for (const ChunkAccess &access : list)
      last = std::max(last, access.chunk.getCount());
  for (int64_t step = 0; step < last; ++step) {
    Residues mine = lastMoved(step);
    mine &= counts.lastElement(counts.at(chunk, step));
    Residues theirs(counts.chunks(), /*all=*/true);
    for (llvm::ArrayRef<ChunkAccess> list :
         {llvm::ArrayRef(other.reads), llvm::ArrayRef(other.writes)})
      for (const ChunkAccess &access : list)
        theirs &= counts.lastElement(counts.at(access.chunk, step));
    if (mine != theirs)
      return false;
  }
  return true;
}
