//===- MsclSemantics.cpp - The primitive actions of each mscl operation --===//
//
// CommOpInterface::getActions for every thread-block operation: the one
// place where an operation's meaning is spelled out (execution-model.md);
// next to it, mapChunksAndChannels rewrites the same operands.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclOps.h"

using namespace mlir;
using namespace mscl;

#include "mscl/IR/MsclInterfaces.cpp.inc"

namespace {

using Kind = Action::Kind;

ActionOperand local(ChunkAttr chunk) { return {chunk, Reach::Local, {}}; }

ActionOperand peer(ChunkAttr chunk, Attribute channel) {
  return {chunk, Reach::Peer, cast<FlatSymbolRefAttr>(channel)};
}

ActionOperand group(ChunkAttr chunk, FlatSymbolRefAttr channel) {
  return {chunk, Reach::Group, channel};
}

Action data(Kind kind, ArrayRef<ActionOperand> reads,
            ArrayRef<ActionOperand> writes) {
  Action a{kind, {}, {}, {}};
  a.reads.assign(reads.begin(), reads.end());
  a.writes.assign(writes.begin(), writes.end());
  return a;
}

Action sync(Kind kind, ArrayRef<FlatSymbolRefAttr> channels) {
  Action a{kind, {}, {}, {}};
  a.channels.assign(channels.begin(), channels.end());
  return a;
}

Action sync(Kind kind, ArrayAttr channels) {
  Action a{kind, {}, {}, {}};
  for (Attribute c : channels)
    a.channels.push_back(cast<FlatSymbolRefAttr>(c));
  return a;
}

Action barrier() { return Action{Kind::Barrier, {}, {}, {}}; }

void appendLocals(SmallVectorImpl<ActionOperand> &out, ArrayAttr chunks) {
  for (Attribute c : chunks)
    out.push_back(local(cast<ChunkAttr>(c)));
}

void appendPeers(SmallVectorImpl<ActionOperand> &out, ArrayAttr channels,
                 ArrayAttr chunks) {
  for (auto [channel, chunk] : llvm::zip(channels, chunks))
    out.push_back(peer(cast<ChunkAttr>(chunk), channel));
}

} // namespace

SmallVector<Action, 4> mscl::getActions(Operation *op) {
  SmallVector<Action, 4> actions;
  if (auto comm = dyn_cast<CommOpInterface>(op))
    comm.getActions(actions);
  return actions;
}

void PutOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(
      data(Kind::Copy, {local(getSrc())}, {peer(getDst(), getChannelAttr())}));
}

// The barrier makes every thread's part of the put this block's history
// before one thread signals (execution-model.md).
void PutWithSignalOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(
      data(Kind::Copy, {local(getSrc())}, {peer(getDst(), getChannelAttr())}));
  actions.push_back(barrier());
  actions.push_back(sync(Kind::Signal, {getChannelAttr()}));
}

void PutWithSignalAndFlushOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(
      data(Kind::Copy, {local(getSrc())}, {peer(getDst(), getChannelAttr())}));
  actions.push_back(barrier());
  actions.push_back(sync(Kind::Signal, {getChannelAttr()}));
  actions.push_back(sync(Kind::Flush, {getChannelAttr()}));
  actions.push_back(barrier());
}

void GetOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(
      data(Kind::Copy, {peer(getSrc(), getChannelAttr())}, {local(getDst())}));
}

// A signal covers the puts of every thread of the block: it starts with a
// barrier. A wait and a flush end with one, so that every thread may use
// what they guarantee.
void SignalOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(barrier());
  actions.push_back(sync(Kind::Signal, getChannels()));
}

void WaitOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(sync(Kind::Wait, getChannels()));
  actions.push_back(barrier());
}

void FlushOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(sync(Kind::Flush, getChannels()));
  actions.push_back(barrier());
}

void CopyOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(data(Kind::Copy, {local(getSrc())}, {local(getDst())}));
}

void ReduceOp::getActions(SmallVectorImpl<Action> &actions) {
  Action a = data(Kind::Reduce, {}, {local(getDst())});
  appendLocals(a.reads, getSrcs());
  actions.push_back(std::move(a));
}

void ReadReduceOp::getActions(SmallVectorImpl<Action> &actions) {
  Action a = data(Kind::Reduce, {}, {local(getDst())});
  appendLocals(a.reads, getSrcs());
  appendPeers(a.reads, getChannels(), getRemotes());
  actions.push_back(std::move(a));
}

void ReducePutOp::getActions(SmallVectorImpl<Action> &actions) {
  Action a = data(Kind::Reduce, {}, {});
  appendLocals(a.reads, getSrcs());
  appendPeers(a.writes, getChannels(), getDsts());
  if (ChunkAttr store = getStoreAttr())
    a.writes.push_back(local(store));
  actions.push_back(std::move(a));
}

void SwitchReduceOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(data(Kind::Reduce, {group(getSrc(), getChannelAttr())},
                         {local(getDst())}));
}

void SwitchBroadcastOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(data(Kind::Copy, {local(getSrc())},
                         {group(getDst(), getChannelAttr())}));
}

void BarrierOp::getActions(SmallVectorImpl<Action> &actions) {
  actions.push_back(barrier());
}

// The body's operations act; the pipeline only repeats them.
void PipelineOp::getActions(SmallVectorImpl<Action> &) {}

//===----------------------------------------------------------------------===//
// mapChunksAndChannels: the operands of getActions, rewritten in place
//===----------------------------------------------------------------------===//

namespace {

using AttrMap = function_ref<Attribute(Attribute)>;

ChunkAttr mapChunk(ChunkAttr chunk, AttrMap fn) {
  return cast<ChunkAttr>(fn(chunk));
}

FlatSymbolRefAttr mapChannel(FlatSymbolRefAttr channel, AttrMap fn) {
  return cast<FlatSymbolRefAttr>(fn(channel));
}

ArrayAttr mapArray(ArrayAttr array, AttrMap fn) {
  SmallVector<Attribute> elements;
  for (Attribute element : array)
    elements.push_back(fn(element));
  return ArrayAttr::get(array.getContext(), elements);
}

/// put, put_with_signal(_and_flush), get and the switch operations.
template <typename OpT>
void mapChannelDstSrc(OpT op, AttrMap fn) {
  op.setChannelAttr(mapChannel(op.getChannelAttr(), fn));
  op.setDstAttr(mapChunk(op.getDst(), fn));
  op.setSrcAttr(mapChunk(op.getSrc(), fn));
}

} // namespace

void PutOp::mapChunksAndChannels(AttrMap fn) { mapChannelDstSrc(*this, fn); }
void PutWithSignalOp::mapChunksAndChannels(AttrMap fn) {
  mapChannelDstSrc(*this, fn);
}
void PutWithSignalAndFlushOp::mapChunksAndChannels(AttrMap fn) {
  mapChannelDstSrc(*this, fn);
}
void GetOp::mapChunksAndChannels(AttrMap fn) { mapChannelDstSrc(*this, fn); }
void SwitchReduceOp::mapChunksAndChannels(AttrMap fn) {
  mapChannelDstSrc(*this, fn);
}
void SwitchBroadcastOp::mapChunksAndChannels(AttrMap fn) {
  mapChannelDstSrc(*this, fn);
}

void SignalOp::mapChunksAndChannels(AttrMap fn) {
  setChannelsAttr(mapArray(getChannels(), fn));
}
void WaitOp::mapChunksAndChannels(AttrMap fn) {
  setChannelsAttr(mapArray(getChannels(), fn));
}
void FlushOp::mapChunksAndChannels(AttrMap fn) {
  setChannelsAttr(mapArray(getChannels(), fn));
}

void CopyOp::mapChunksAndChannels(AttrMap fn) {
  setDstAttr(mapChunk(getDst(), fn));
  setSrcAttr(mapChunk(getSrc(), fn));
}

void ReduceOp::mapChunksAndChannels(AttrMap fn) {
  setDstAttr(mapChunk(getDst(), fn));
  setSrcsAttr(mapArray(getSrcs(), fn));
}

void ReadReduceOp::mapChunksAndChannels(AttrMap fn) {
  setDstAttr(mapChunk(getDst(), fn));
  setSrcsAttr(mapArray(getSrcs(), fn));
  setChannelsAttr(mapArray(getChannels(), fn));
  setRemotesAttr(mapArray(getRemotes(), fn));
}

void ReducePutOp::mapChunksAndChannels(AttrMap fn) {
  setChannelsAttr(mapArray(getChannels(), fn));
  setDstsAttr(mapArray(getDsts(), fn));
  setSrcsAttr(mapArray(getSrcs(), fn));
  if (ChunkAttr store = getStoreAttr())
    setStoreAttr(mapChunk(store, fn));
}

void BarrierOp::mapChunksAndChannels(AttrMap) {}
void PipelineOp::mapChunksAndChannels(AttrMap) {}
