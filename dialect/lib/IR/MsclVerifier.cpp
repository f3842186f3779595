//===- MsclVerifier.cpp - Program-wide checks of an mscl.program ---------===//
//
// One pass over the program checks everything that relates operations to
// the program's declarations: buffers and channels exist, chunks are in
// bounds, channel operations run on their channel's source rank and touch
// the right ranks, LL packets go to packet buffers and only there.
// Building the symbol maps once keeps this linear in the program size.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mscl;

namespace {

class ProgramChecker {
public:
  explicit ProgramChecker(ProgramOp program) : program(program) {}

  LogicalResult run();

private:
  LogicalResult collectDeclarations();
  LogicalResult checkOp(Operation *op, int64_t rank);

  /// `chunk` names a declared buffer, is in bounds and lives on `rank`.
  LogicalResult checkChunk(Operation *op, ChunkAttr chunk, int64_t rank,
                           StringRef role);
  /// Like checkChunk, and the buffer must (not) be a packet buffer.
  LogicalResult checkChunkPacket(Operation *op, ChunkAttr chunk, int64_t rank,
                                 StringRef role, bool wantPacket);
  FailureOr<ChannelOp> lookupChannel(Operation *op, Attribute ref,
                                     int64_t rank);
  FailureOr<SwitchChannelOp> lookupSwitch(Operation *op,
                                          FlatSymbolRefAttr ref, int64_t rank);

  LogicalResult checkPutLike(Operation *op, FlatSymbolRefAttr channel,
                             ChunkAttr dst, ChunkAttr src, int64_t rank,
                             bool withSignal);
  LogicalResult checkSync(Operation *op, ArrayAttr channels, int64_t rank,
                          bool isFlush);

  ProgramOp program;
  llvm::StringMap<BufferOp> buffers;
  llvm::StringMap<ChannelOp> channels;
  llvm::StringMap<SwitchChannelOp> switches;
  /// The thread block (first id) that uses each channel on its source rank.
  llvm::StringMap<std::pair<int64_t, Operation *>> channelUser;
  int64_t currentBlock = 0;
};

} // namespace

LogicalResult ProgramChecker::collectDeclarations() {
  for (Operation &op : program.getBodyBlock()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      buffers[buffer.getSymName()] = buffer;
    } else if (auto channel = dyn_cast<ChannelOp>(op)) {
      if (channel.getSrc() >= program.getRanks() ||
          channel.getDst() >= program.getRanks())
        return channel.emitOpError()
               << "connects ranks outside 0.." << program.getRanks() - 1;
      channels[channel.getSymName()] = channel;
    } else if (auto group = dyn_cast<SwitchChannelOp>(op)) {
      if (group.getRanks().back() >= static_cast<int64_t>(program.getRanks()))
        return group.emitOpError()
               << "group holds ranks outside 0.." << program.getRanks() - 1;
      switches[group.getSymName()] = group;
    } else if (!isa<RankOp>(op)) {
      return op.emitOpError() << "is not allowed at program level";
    }
  }
  // In-place collectives declare only the buffer that both names share.
  if (!buffers.count("input") && !buffers.count("output"))
    return program.emitOpError() << "declares neither @input nor @output";
  if (!program.getInplace() &&
      (!buffers.count("input") || !buffers.count("output")))
    return program.emitOpError()
           << "an out-of-place program declares both @input and @output";
  auto checkChunks = [&](StringRef name, int64_t expected) -> LogicalResult {
    auto it = buffers.find(name);
    if (it != buffers.end() &&
        static_cast<int64_t>(it->second.getChunks()) != expected)
      return it->second.emitOpError()
             << "has " << it->second.getChunks() << " chunks but the program"
             << " says " << name << "_chunks = " << expected;
    return success();
  };
  return failure(failed(checkChunks("input", program.getInputChunks())) ||
                 failed(checkChunks("output", program.getOutputChunks())));
}

LogicalResult ProgramChecker::checkChunk(Operation *op, ChunkAttr chunk,
                                         int64_t rank, StringRef role) {
  auto it = buffers.find(chunk.getBuffer());
  if (it == buffers.end())
    return op->emitOpError() << role << " names unknown buffer '"
                             << chunk.getBuffer() << "'";
  if (chunk.getRank() >= static_cast<int64_t>(program.getRanks()))
    return op->emitOpError() << role << " is on rank " << chunk.getRank()
                             << " but the program has " << program.getRanks()
                             << " ranks";
  int64_t size = it->second.getChunks();
  if (chunk.getEnd() > size)
    return op->emitOpError() << role << " reaches chunk " << chunk.getEnd() - 1
                             << " of '" << chunk.getBuffer() << "', which has "
                             << size << " chunks";
  if (rank >= 0 && chunk.getRank() != rank)
    return op->emitOpError() << role << " must be on rank " << rank
                             << ", not rank " << chunk.getRank();
  return success();
}

LogicalResult ProgramChecker::checkChunkPacket(Operation *op, ChunkAttr chunk,
                                               int64_t rank, StringRef role,
                                               bool wantPacket) {
  if (failed(checkChunk(op, chunk, rank, role)))
    return failure();
  bool isPacket = buffers[chunk.getBuffer()].getPacket();
  if (isPacket && !wantPacket)
    return op->emitOpError() << role << " is in packet buffer '"
                             << chunk.getBuffer()
                             << "', which only LL puts may write";
  if (!isPacket && wantPacket)
    return op->emitOpError() << role << " of an LL put must be a packet "
                             << "buffer, not '" << chunk.getBuffer() << "'";
  return success();
}

FailureOr<ChannelOp> ProgramChecker::lookupChannel(Operation *op,
                                                   Attribute ref,
                                                   int64_t rank) {
  StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
  auto it = channels.find(name);
  if (it == channels.end()) {
    if (switches.count(name))
      op->emitOpError() << "needs a memory or port channel, but @" << name
                        << " is a switch channel";
    else
      op->emitOpError() << "names unknown channel @" << name;
    return failure();
  }
  if (static_cast<int64_t>(it->second.getSrc()) != rank) {
    op->emitOpError() << "uses channel @" << name << " from rank "
                      << it->second.getSrc() << " on rank " << rank;
    return failure();
  }
  // A channel's semaphores count the signals and waits of one thread block;
  // two blocks sharing it would consume each other's signals.
  auto [user, inserted] = channelUser.try_emplace(name, currentBlock, op);
  if (!inserted && user->second.first != currentBlock) {
    op->emitOpError() << "uses channel @" << name << " in thread block "
                      << currentBlock << ", but thread block "
                      << user->second.first
                      << " uses it too; give each block its own channel (id)";
    return failure();
  }
  return it->second;
}

FailureOr<SwitchChannelOp>
ProgramChecker::lookupSwitch(Operation *op, FlatSymbolRefAttr ref,
                             int64_t rank) {
  auto it = switches.find(ref.getValue());
  if (it == switches.end()) {
    op->emitOpError() << "needs a switch channel, @" << ref.getValue()
                      << " is not one";
    return failure();
  }
  if (!llvm::is_contained(it->second.getRanks(), rank)) {
    op->emitOpError() << "runs on rank " << rank << ", outside the group of @"
                      << ref.getValue();
    return failure();
  }
  return it->second;
}

static bool isLL(ChannelOp channel) {
  return channel.getProtocol() && *channel.getProtocol() == Protocol::LL;
}

LogicalResult ProgramChecker::checkPutLike(Operation *op,
                                           FlatSymbolRefAttr channelRef,
                                           ChunkAttr dst, ChunkAttr src,
                                           int64_t rank, bool withSignal) {
  FailureOr<ChannelOp> channel = lookupChannel(op, channelRef, rank);
  if (failed(channel))
    return failure();
  if (withSignal && isLL(*channel))
    return op->emitOpError() << "signals on LL channel @" << channelRef.getValue()
                             << "; LL packets carry their own flags";
  if (failed(checkChunk(op, src, rank, "source")))
    return failure();
  return checkChunkPacket(op, dst, channel->getDst(), "destination",
                          isLL(*channel));
}

LogicalResult ProgramChecker::checkSync(Operation *op, ArrayAttr refs,
                                        int64_t rank, bool isFlush) {
  for (Attribute ref : refs) {
    FailureOr<ChannelOp> channel = lookupChannel(op, ref, rank);
    if (failed(channel))
      return failure();
    if (!isFlush && isLL(*channel))
      return op->emitOpError()
             << "on LL channel " << ref
             << ": LL data carries its own flags; synchronise over an HB "
                "or port channel";
  }
  return success();
}

LogicalResult ProgramChecker::checkOp(Operation *op, int64_t rank) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<PutOp>([&](PutOp put) {
        return checkPutLike(op, put.getChannelAttr(), put.getDst(),
                            put.getSrc(), rank, /*withSignal=*/false);
      })
      .Case<PutWithSignalOp, PutWithSignalAndFlushOp>([&](auto put) {
        return checkPutLike(op, put.getChannelAttr(), put.getDst(),
                            put.getSrc(), rank, /*withSignal=*/true);
      })
      .Case<GetOp>([&](GetOp get) -> LogicalResult {
        FailureOr<ChannelOp> channel =
            lookupChannel(op, get.getChannelAttr(), rank);
        if (failed(channel))
          return failure();
        if (channel->getKind() != ChannelKind::memory)
          return op->emitOpError() << "reads need a memory channel";
        return failure(
            failed(checkChunkPacket(op, get.getDst(), rank, "destination",
                                    false)) ||
            failed(checkChunkPacket(op, get.getSrc(), channel->getDst(),
                                    "source", false)));
      })
      .Case<SignalOp, WaitOp>([&](auto sync) {
        return checkSync(op, sync.getChannels(), rank, false);
      })
      .Case<FlushOp>([&](FlushOp flush) {
        return checkSync(op, flush.getChannels(), rank, true);
      })
      .Case<CopyOp>([&](CopyOp copy) {
        return failure(
            failed(checkChunkPacket(op, copy.getDst(), rank, "destination",
                                    false)) ||
            failed(checkChunk(op, copy.getSrc(), rank, "source")));
      })
      .Case<ReduceOp>([&](ReduceOp reduce) -> LogicalResult {
        if (failed(checkChunkPacket(op, reduce.getDst(), rank, "destination",
                                    false)))
          return failure();
        for (Attribute src : reduce.getSrcs())
          if (failed(checkChunk(op, cast<ChunkAttr>(src), rank, "source")))
            return failure();
        return success();
      })
      .Case<ReadReduceOp>([&](ReadReduceOp reduce) -> LogicalResult {
        if (failed(checkChunkPacket(op, reduce.getDst(), rank, "destination",
                                    false)))
          return failure();
        for (Attribute src : reduce.getSrcs())
          if (failed(checkChunk(op, cast<ChunkAttr>(src), rank, "source")))
            return failure();
        for (auto [ref, remote] :
             llvm::zip(reduce.getChannels(), reduce.getRemotes())) {
          FailureOr<ChannelOp> channel = lookupChannel(op, ref, rank);
          if (failed(channel))
            return failure();
          if (channel->getKind() != ChannelKind::memory)
            return op->emitOpError() << "reads need a memory channel";
          if (failed(checkChunkPacket(op, cast<ChunkAttr>(remote),
                                      channel->getDst(), "remote source",
                                      false)))
            return failure();
        }
        return success();
      })
      .Case<ReducePutOp>([&](ReducePutOp reducePut) -> LogicalResult {
        for (Attribute src : reducePut.getSrcs())
          if (failed(checkChunk(op, cast<ChunkAttr>(src), rank, "source")))
            return failure();
        if (auto store = reducePut.getStoreAttr())
          if (failed(checkChunkPacket(op, store, rank, "local store", false)))
            return failure();
        for (auto [ref, dst] :
             llvm::zip(reducePut.getChannels(), reducePut.getDsts())) {
          FailureOr<ChannelOp> channel = lookupChannel(op, ref, rank);
          if (failed(channel) ||
              failed(checkChunkPacket(op, cast<ChunkAttr>(dst),
                                      channel->getDst(), "destination",
                                      isLL(*channel))))
            return failure();
        }
        return success();
      })
      .Case<SwitchReduceOp, SwitchBroadcastOp>([&](auto sw) -> LogicalResult {
        if (failed(lookupSwitch(op, sw.getChannelAttr(), rank)))
          return failure();
        return failure(
            failed(checkChunkPacket(op, sw.getDst(), rank, "destination",
                                    false)) ||
            failed(checkChunkPacket(op, sw.getSrc(), rank, "source", false)));
      })
      .Case<BarrierOp>([](BarrierOp) { return success(); })
      .Case<PipelineOp>([&](PipelineOp pipeline) -> LogicalResult {
        if (pipeline->getParentOfType<PipelineOp>())
          return op->emitOpError() << "pipelines do not nest";
        for (Operation &inner : pipeline.getBody().front())
          if (failed(checkOp(&inner, rank)))
            return failure();
        return success();
      })
      .Default([](Operation *other) {
        return other->emitOpError() << "is not an mscl thread-block operation";
      });
}

LogicalResult ProgramChecker::run() {
  if (failed(collectDeclarations()))
    return failure();
  llvm::DenseSet<int64_t> seenRanks;
  bool ok = true;
  for (auto rankOp : program.getBodyBlock().getOps<RankOp>()) {
    int64_t rank = rankOp.getRank();
    if (rank >= static_cast<int64_t>(program.getRanks()))
      return rankOp.emitOpError() << "rank " << rank << " is outside 0.."
                                  << program.getRanks() - 1;
    if (!seenRanks.insert(rank).second)
      return rankOp.emitOpError() << "rank " << rank << " appears twice";
    for (auto tb : rankOp.getBody().front().getOps<ThreadBlockOp>()) {
      currentBlock = tb.getId();
      for (Operation &op : tb.getBody().front())
        ok &= succeeded(checkOp(&op, rank));
    }
  }
  return success(ok);
}

LogicalResult ProgramOp::verifyRegions() {
  return ProgramChecker(*this).run();
}
