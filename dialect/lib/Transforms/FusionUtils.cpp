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

Residues ElementCounts::lastMoved(const OpAccesses &operands,
                                  int64_t step) const {
  Residues moved(layout.chunks(), /*all=*/true);
  for (llvm::ArrayRef<ChunkAccess> list : {llvm::ArrayRef(operands.reads),
                                           llvm::ArrayRef(operands.writes)})
    for (const ChunkAccess &access : list)
      moved &= layout.lastElement(!scratch.contains(access.chunk.getBuffer()),
                                  access.chunk.getIndex() + step);
  return moved;
}

bool ElementCounts::same(const OpAccesses &a, const OpAccesses &b) const {
  int64_t steps = 0;
  for (const OpAccesses *ops : {&a, &b})
    for (llvm::ArrayRef<ChunkAccess> list :
         {llvm::ArrayRef(ops->reads), llvm::ArrayRef(ops->writes)})
      for (const ChunkAccess &access : list)
        steps = std::max(steps, access.chunk.getCount());
  for (int64_t step = 0; step < steps; ++step)
    if (lastMoved(a, step) != lastMoved(b, step))
      return false;
  return true;
}
