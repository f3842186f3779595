//===- MsclVerifier.cpp - Program-wide checks of an mscl.program ---------===//
//
// One pass over the program checks everything that relates operations to
// the program's declarations: buffers and channels exist, chunks are in
// bounds, channel operations run on their channel's source rank and touch
// the right ranks, LL packets go to packet buffers and only there. What an
// operation touches, and through which channel, comes from its primitive
// actions (CommOpInterface), so the checks are stated per kind of operand,
// not per operation. Building the symbol maps once keeps this linear in the
// program size.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

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

  /// The channel through which `operand` reaches the peer, which must be a
  /// memory channel for a read.
  FailureOr<ChannelOp> checkPeerChannel(Operation *op,
                                        const ActionOperand &operand,
                                        bool read, int64_t rank);
  /// Every channel the actions name: declared, of the right kind for what
  /// the action does through it, used on its source rank by one block.
  LogicalResult checkChannels(Operation *op, llvm::ArrayRef<Action> actions,
                              int64_t rank);
  /// Every chunk of a data action: in bounds, on the rank that reaches it
  /// (this one, or the channel's peer), in a packet buffer exactly when an
  /// LL put writes it.
  LogicalResult checkOperands(Operation *op, const Action &action,
                              int64_t rank);

  ProgramOp program;
  llvm::StringMap<BufferOp> buffers;
  llvm::StringMap<ChannelOp> channels;
  llvm::StringMap<SwitchChannelOp> switches;
  /// The thread block (first id) that uses each channel on its source rank.
  llvm::StringMap<std::pair<int64_t, Operation *>> channelUser;
  /// Signals and waits on LL channels, by channel: a signal and the wait
  /// on its other end are one mistake, reported once, at the signal.
  llvm::StringMap<Operation *> llSignals, llWaits;
  void collectLLSync();
  /// The LL channel from `channel`'s destination back to its source with
  /// the same id, if declared.
  ChannelOp otherEnd(ChannelOp channel) const;
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

static bool isSignalOrWait(const Action &action) {
  return action.kind == Action::Kind::Signal ||
         action.kind == Action::Kind::Wait;
}

FailureOr<ChannelOp>
ProgramChecker::checkPeerChannel(Operation *op, const ActionOperand &operand,
                                 bool read, int64_t rank) {
  FailureOr<ChannelOp> channel = lookupChannel(op, operand.via, rank);
  if (failed(channel))
    return failure();
  // A peer's chunk is loaded through its mapped memory, which only memory
  // channels provide.
  if (read && channel->getKind() != ChannelKind::memory) {
    op->emitOpError() << "reads need a memory channel";
    return failure();
  }
  return channel;
}

/// The channel a copy goes through and a switch group decide where the
/// operands live, so they come first; a reduction's peers are checked one
/// by one with their chunks, after its local operands (checkOperands).
LogicalResult ProgramChecker::checkChannels(Operation *op,
                                            ArrayRef<Action> actions,
                                            int64_t rank) {
  bool moves = llvm::any_of(actions, [](const Action &a) { return a.isData(); });
  for (const Action &action : actions) {
    for (bool read : {true, false}) {
      for (const ActionOperand &operand :
           read ? ArrayRef<ActionOperand>(action.reads)
                : ArrayRef<ActionOperand>(action.writes)) {
        if (operand.reach == Reach::Group &&
            failed(lookupSwitch(op, operand.via, rank)))
          return failure();
        if (operand.reach == Reach::Peer &&
            action.kind != Action::Kind::Reduce &&
            failed(checkPeerChannel(op, operand, read, rank)))
          return failure();
      }
    }
    for (FlatSymbolRefAttr ref : action.channels) {
      FailureOr<ChannelOp> channel = lookupChannel(op, ref, rank);
      if (failed(channel))
        return failure();
      if (!isSignalOrWait(action) || !isLL(*channel))
        continue;
      ChannelOp other = otherEnd(*channel);
      if (action.kind == Action::Kind::Wait && other &&
          llSignals.count(other.getSymName()))
        return failure(); // reported at the signal, with a note here
      InFlightDiagnostic diag = op->emitOpError();
      if (moves)
        diag << "signals on LL channel @" << ref.getValue()
             << "; LL packets carry their own flags";
      else
        diag << "on LL channel " << ref
             << ": LL data carries its own flags; synchronise over an HB "
                "or port channel";
      if (action.kind == Action::Kind::Signal && other)
        if (Operation *wait = llWaits.lookup(other.getSymName()))
          diag.attachNote(wait->getLoc())
              << "the wait on its other end @" << other.getSymName()
              << " is on an LL channel too";
      return diag;
    }
  }
  return success();
}

LogicalResult ProgramChecker::checkOperands(Operation *op,
                                            const Action &action,
                                            int64_t rank) {
  auto hasReach = [](ArrayRef<ActionOperand> operands, Reach reach) {
    return llvm::any_of(operands, [&](const ActionOperand &o) {
      return o.reach == reach;
    });
  };
  // The switch reads and writes plain memory; only the block's own loads
  // spin on packet flags.
  bool viaSwitch = hasReach(action.reads, Reach::Group) ||
                   hasReach(action.writes, Reach::Group);
  // Next to writes into peers, a local write is the reduce_put's store.
  bool writesPeers = hasReach(action.writes, Reach::Peer);
  auto isStore = [&](const ActionOperand &o) {
    return o.reach == Reach::Local && writesPeers;
  };
  // The executing rank's chunks first (destinations, sources, the store),
  // then the peers'. Only LL puts write packet buffers.
  for (const ActionOperand &write : action.writes)
    if (write.reach != Reach::Peer && !isStore(write) &&
        failed(checkChunkPacket(op, write.chunk, rank, "destination", false)))
      return failure();
  for (const ActionOperand &read : action.reads) {
    if (read.reach == Reach::Peer)
      continue;
    if (failed(viaSwitch ? checkChunkPacket(op, read.chunk, rank, "source",
                                            false)
                         : checkChunk(op, read.chunk, rank, "source")))
      return failure();
  }
  for (const ActionOperand &write : action.writes)
    if (isStore(write) &&
        failed(checkChunkPacket(op, write.chunk, rank, "local store", false)))
      return failure();
  bool reduce = action.kind == Action::Kind::Reduce;
  auto checkPeer = [&](const ActionOperand &operand, bool read) {
    ChannelOp channel = channels.lookup(operand.via.getValue());
    if (reduce) {
      FailureOr<ChannelOp> checked = checkPeerChannel(op, operand, read, rank);
      if (failed(checked))
        return failure();
      channel = *checked;
      // The block's threads reduce and store the result into the peer's
      // mapped memory themselves; a port channel's proxy only copies.
      if (!read && channel.getKind() != ChannelKind::memory)
        return LogicalResult(op->emitOpError()
               << "reduces into the peer through port channel @"
               << channel.getSymName()
               << "; a reduction's result is stored through a memory "
                  "channel, a port channel only copies");
    }
    if (read)
      return checkChunkPacket(op, operand.chunk, channel.getDst(),
                              reduce ? "remote source" : "source", false);
    return checkChunkPacket(op, operand.chunk, channel.getDst(),
                            "destination", isLL(channel));
  };
  for (const ActionOperand &read : action.reads)
    if (read.reach == Reach::Peer && failed(checkPeer(read, true)))
      return failure();
  for (const ActionOperand &write : action.writes)
    if (write.reach == Reach::Peer && failed(checkPeer(write, false)))
      return failure();
  return success();
}

LogicalResult ProgramChecker::checkOp(Operation *op, int64_t rank) {
  if (auto pipeline = dyn_cast<PipelineOp>(op)) {
    if (pipeline->getParentOfType<PipelineOp>())
      return op->emitOpError() << "pipelines do not nest";
    for (Operation &inner : pipeline.getBody().front())
      if (failed(checkOp(&inner, rank)))
        return failure();
    return success();
  }
  if (!isa<CommOpInterface>(op))
    return op->emitOpError() << "is not an mscl thread-block operation";
  SmallVector<Action, 4> actions = getActions(op);
  if (failed(checkChannels(op, actions, rank)))
    return failure();
  for (const Action &action : actions)
    if (action.isData() && failed(checkOperands(op, action, rank)))
      return failure();
  return success();
}

ChannelOp ProgramChecker::otherEnd(ChannelOp channel) const {
  for (const auto &entry : channels) {
    ChannelOp c = entry.getValue();
    if (c.getSrc() == channel.getDst() && c.getDst() == channel.getSrc() &&
        c.getId() == channel.getId() && c.getKind() == channel.getKind() &&
        isLL(c))
      return c;
  }
  return ChannelOp();
}

void ProgramChecker::collectLLSync() {
  program.walk([&](Operation *op) {
    if (!isa<CommOpInterface>(op))
      return;
    for (const Action &action : getActions(op)) {
      if (!isSignalOrWait(action))
        continue;
      for (FlatSymbolRefAttr ref : action.channels) {
        ChannelOp channel = channels.lookup(ref.getValue());
        if (channel && isLL(channel))
          (action.kind == Action::Kind::Signal ? llSignals : llWaits)
              .try_emplace(ref.getValue(), op);
      }
    }
  });
}

LogicalResult ProgramChecker::run() {
  if (failed(collectDeclarations()))
    return failure();
  collectLLSync();
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
