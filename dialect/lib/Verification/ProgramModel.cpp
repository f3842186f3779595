//===- ProgramModel.cpp - Flat, indexed view of an mscl.program -----------===//

#include "ProgramModel.h"

#include "mscl/IR/MsclLaunches.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

ProgramModel::ProgramModel(ProgramOp program, int pipelineCopies,
                           int launches)
    : program(program), launches(std::max(1, launches)) {
  ranks = static_cast<int64_t>(program.getRanks());
  chunks = std::max<int64_t>(1, static_cast<int64_t>(program.getChunks()));
  layout = ChunkLayout(chunks);
  // Buffers first: slots of one rank are laid out buffer after buffer.
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>()) {
    BufferInfo info;
    info.name = buffer.getSymName().str();
    info.chunks = static_cast<int64_t>(buffer.getChunks());
    info.packet = buffer.getPacket();
    info.user = buffer.getKind() != BufferKind::scratch;
    info.input = info.user && (program.getInplace() ||
                               buffer.getKind() == BufferKind::input);
    info.output = info.user && (program.getInplace() ||
                                buffer.getKind() == BufferKind::output);
    info.offset = slotsPerRank;
    slotsPerRank += info.chunks;
    bufferIndex[info.name] = static_cast<int>(buffers.size());
    buffers.push_back(std::move(info));
  }
  if (this->launches > 1)
    for (int b = 0, e = static_cast<int>(buffers.size()); b < e; ++b) {
      if (launchCopies(buffers[b].packet, this->launches) < 2)
        continue;
      BufferInfo twin = buffers[b];
      twin.offset = slotsPerRank;
      slotsPerRank += twin.chunks;
      buffers[b].parityTwin = static_cast<int>(buffers.size());
      buffers.push_back(std::move(twin));
    }
  // Channels, and the other end of each: same kind, protocol and id,
  // reversed direction.
  // (kind, protocol, src, dst, id) -> channel index.
  std::map<std::tuple<int, int, int64_t, int64_t, int64_t>, int> byEnds;
  auto channelOps = program.getBodyBlock().getOps<ChannelOp>();
  channels.reserve(std::distance(channelOps.begin(), channelOps.end()));
  for (auto channel : channelOps) {
    ChannelInfo info;
    info.op = channel;
    info.name = channel.getSymName().str();
    info.src = static_cast<int64_t>(channel.getSrc());
    info.dst = static_cast<int64_t>(channel.getDst());
    info.port = channel.getKind() == ChannelKind::port;
    info.ll = channel.getProtocol() && *channel.getProtocol() == Protocol::LL;
    int protocol =
        channel.getProtocol() ? static_cast<int>(*channel.getProtocol()) : -1;
    int index = static_cast<int>(channels.size());
    byEnds[{static_cast<int>(channel.getKind()), protocol, info.src, info.dst,
            static_cast<int64_t>(channel.getId())}] = index;
    channelIndex[info.name] = index;
    channels.push_back(std::move(info));
  }
  for (auto group : program.getBodyBlock().getOps<SwitchChannelOp>())
    switchGroups[group.getSymName()].assign(group.getRanks().begin(),
                                            group.getRanks().end());
  for (ChannelInfo &info : channels) {
    ChannelOp op = info.op;
    int protocol = op.getProtocol() ? static_cast<int>(*op.getProtocol()) : -1;
    auto it = byEnds.find({static_cast<int>(op.getKind()), protocol, info.dst,
                           info.src, static_cast<int64_t>(op.getId())});
    if (it != byEnds.end())
      info.otherEnd = it->second;
  }
  for (auto rankOp : program.getBodyBlock().getOps<RankOp>()) {
    int64_t rank = static_cast<int64_t>(rankOp.getRank());
    for (auto tb : rankOp.getBody().front().getOps<ThreadBlockOp>()) {
      Block block;
      block.rank = rank;
      block.id = static_cast<int64_t>(tb.getId());
      block.group = static_cast<int64_t>(tb.getGroup());
      block.op = tb;
      size_t count = 0;
      for (Operation &op : tb.getBody().front())
        count += isa<PipelineOp>(op) ? pipelineCopies * cast<PipelineOp>(op)
                                                          .getBody()
                                                          .front()
                                                          .getOperations()
                                                          .size()
                                     : 1;
      block.steps.reserve(count);
      for (Operation &op : tb.getBody().front()) {
        if (auto pipeline = dyn_cast<PipelineOp>(op)) {
          for (int copy = 0; copy < pipelineCopies; ++copy)
            for (Operation &inner : pipeline.getBody().front())
              decode(&inner, pipeline, block.steps);
          continue;
        }
        decode(&op, nullptr, block.steps);
      }
      block.launchStarts.push_back(0);
      blocks.push_back(std::move(block));
    }
  }
  repeatLaunches();
  for (int b = 0, be = static_cast<int>(blocks.size()); b < be; ++b) {
    const std::vector<Step> &steps = blocks[b].steps;
    for (int s = 0, e = static_cast<int>(steps.size()); s < e; ++s) {
      const Step &step = steps[s];
      // The verifier lets one block use each channel; a get or read_reduce
      // uses it as much as a put does.
      for (int c : step.channels)
        if (channels[c].owner < 0)
          channels[c].owner = b;
      for (int c : step.waits)
        channels[c].waitSteps.push_back(s);
      for (int c : step.signals)
        channels[c].signalSteps.push_back(s);
    }
  }
}

void ProgramModel::repeatLaunches() {
  auto toOddHalf = [&](Range &range) {
    if (int twin = buffers[range.buffer].parityTwin; twin >= 0)
      range.buffer = twin;
  };
  for (Block &block : blocks) {
    size_t perLaunch = block.steps.size();
    block.steps.reserve(perLaunch * launches);
    for (int launch = 1; launch < launches; ++launch) {
      block.launchStarts.push_back(static_cast<int>(block.steps.size()));
      for (size_t s = 0; s < perLaunch; ++s) {
        Step step = block.steps[s];
        step.launch = launch;
        if (launchCopy(/*packet=*/true, launch) == 1)
          for (Move &move : step.moves) {
            toOddHalf(move.dst);
            if (llvm::any_of(move.sources(),
                             [&](const Range &r) { return isPacket(r); })) {
              auto odd = std::make_shared<SmallVector<Range, 2>>(*move.srcs);
              for (Range &src : *odd)
                toOddHalf(src);
              move.srcs = std::move(odd);
            }
          }
        block.steps.push_back(std::move(step));
      }
    }
  }
}

Range ProgramModel::toRange(ChunkAttr chunk) const {
  Range range;
  range.rank = chunk.getRank();
  // A handful of buffers: comparing names beats hashing one per operand
  // (parity twins, of the same name, come after the buffers).
  StringRef name = chunk.getBuffer();
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].name == name) {
      range.buffer = static_cast<int>(b);
      break;
    }
  range.index = chunk.getIndex();
  range.count = chunk.getCount();
  return range;
}

std::pair<int, int64_t> ProgramModel::chunkOfSlot(int64_t slot) const {
  int64_t offset = slot % slotsPerRank;
  // Buffers lie one after the other, by offset (parity twins last).
  auto after = llvm::upper_bound(buffers, offset,
                                 [](int64_t o, const BufferInfo &buffer) {
                                   return o < buffer.offset;
                                 });
  int buffer = static_cast<int>(after - buffers.begin()) - 1;
  return {buffer, offset - buffers[size_t(buffer)].offset};
}

int ProgramModel::channelOf(Attribute ref) const {
  auto cached = channelOfRef.find(ref);
  if (cached != channelOfRef.end())
    return cached->second;
  auto it = channelIndex.find(cast<FlatSymbolRefAttr>(ref).getValue());
  int index = it == channelIndex.end() ? -1 : it->second;
  channelOfRef[ref] = index;
  return index;
}

/// Marks every move whose sources are the previous move's.
static void markSharedSources(Step &step) {
  for (size_t m = 1; m < step.moves.size(); ++m)
    step.moves[m].sharesSources =
        step.moves[m].srcs == step.moves[m - 1].srcs;
}

void ProgramModel::appendRanges(const ActionOperand &operand,
                                SmallVectorImpl<Range> &out) const {
  Range range = toRange(operand.chunk);
  if (operand.reach != Reach::Group) {
    out.push_back(range);
    return;
  }
  // The switch reaches the same chunk on every rank of the group.
  for (int64_t member : switchGroups.lookup(operand.via.getValue())) {
    range.rank = member;
    out.push_back(range);
  }
}

void ProgramModel::addData(Step &step, const Action &action) {
  SmallVector<Range, 4> reads;
  for (const ActionOperand &read : action.reads)
    appendRanges(read, reads);
  // One move per written chunk, all from the same sources; an operation
  // moves as many chunks as its smallest operand holds.
  Sources shared;
  for (const ActionOperand &write : action.writes) {
    SmallVector<Range, 1> dsts;
    appendRanges(write, dsts);
    for (const Range &dst : dsts) {
      Move move;
      move.dst = dst;
      int64_t count = dst.count;
      for (const Range &src : reads)
        count = std::min(count, src.count);
      move.dst.count = count;
      if (!shared || (!shared->empty() && shared->front().count != count)) {
        auto srcs = std::make_shared<SmallVector<Range, 2>>(reads.begin(),
                                                            reads.end());
        for (Range &src : *srcs)
          src.count = count;
        shared = std::move(srcs);
      }
      move.srcs = shared;
      // Only a write into the peer travels on the channel; reads through a
      // channel (get, read_reduce) and switch operands are the block's own
      // loads and stores.
      if (write.reach == Reach::Peer) {
        move.channel = channelOf(write.via);
        // The port proxy reads a put's source after the operation returned;
        // a reduce_put's threads read theirs themselves.
        move.asyncSource = action.kind == Action::Kind::Copy &&
                           move.channel >= 0 && channels[move.channel].port;
      }
      move.switchReduce =
          action.kind == Action::Kind::Reduce &&
          llvm::any_of(action.reads, [](const ActionOperand &read) {
            return read.reach == Reach::Group;
          });
      step.moves.push_back(std::move(move));
    }
  }
}

void ProgramModel::decode(Operation *op, Operation *pipeline,
                          std::vector<Step> &steps) {
  SmallVector<Action, 4> actions = getActions(op);
  // Barriers order threads inside the block only; the block's program order
  // already covers them at this level, so an operation that only orders
  // threads (mscl.barrier) is no step.
  if (!actions.empty() && llvm::all_of(actions, [](const Action &a) {
        return a.kind == Action::Kind::Barrier;
      }))
    return;
  Step step;
  step.op = op;
  step.pipeline = pipeline;
  auto channelList = [&](ArrayRef<FlatSymbolRefAttr> refs,
                         SmallVectorImpl<int> &out) {
    for (FlatSymbolRefAttr ref : refs)
      if (int c = channelOf(ref); c >= 0)
        out.push_back(c);
  };
  // The step's fields fix the order inside one operation (waits, packet
  // reads, moves, signals, flushes), so the actions need no order here.
  for (const Action &action : actions) {
    switch (action.kind) {
    case Action::Kind::Copy:
    case Action::Kind::Reduce:
      addData(step, action);
      break;
    case Action::Kind::Signal:
      channelList(action.channels, step.signals);
      break;
    case Action::Kind::Wait:
      channelList(action.channels, step.waits);
      break;
    case Action::Kind::Flush:
      channelList(action.channels, step.flushes);
      break;
    case Action::Kind::Barrier:
      break;
    }
  }
  markSharedSources(step);
  for (const Action &action : actions) {
    for (FlatSymbolRefAttr ref : action.channels)
      if (int c = channelOf(ref); c >= 0)
        step.channels.push_back(c);
    for (ArrayRef<ActionOperand> operands :
         {ArrayRef<ActionOperand>(action.reads),
          ArrayRef<ActionOperand>(action.writes)})
      for (const ActionOperand &operand : operands)
        if (operand.reach == Reach::Peer)
          if (int c = channelOf(operand.via); c >= 0)
            step.channels.push_back(c);
  }
  for (const Move &move : step.moves)
    for (const Range &src : move.sources())
      step.readsPackets |= isPacket(src);
  if (step.waits.size() > 1) {
    llvm::SmallDenseSet<int, 8> seen;
    for (int c : step.waits)
      step.waitsRepeat |= !seen.insert(c).second;
  }
  steps.push_back(std::move(step));
}

Residues ProgramModel::movesLast(const Move &move, int64_t j) const {
  auto last = [&](const Range &range) -> const Residues & {
    return layout.lastElement(buffers[range.buffer].user, range.index + j);
  };
  Residues moved = last(move.dst);
  for (const Range &src : move.sources())
    moved &= last(src);
  return moved;
}

std::string ProgramModel::blockName(int block) const {
  const Block &b = blocks[block];
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "rank " << b.rank << " thread block " << b.id;
  if (b.group > 1)
    os << " (group of " << b.group << ")";
  return name;
}

std::string ProgramModel::slotName(int64_t slot) const {
  int64_t rank = slot / slotsPerRank;
  int64_t rest = slot % slotsPerRank;
  int buffer = 0;
  while (buffer + 1 < static_cast<int>(buffers.size()) &&
         buffers[buffer + 1].offset <= rest)
    ++buffer;
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "<rank " << rank << ", " << buffers[buffer].name << "["
     << rest - buffers[buffer].offset << "]>";
  return name;
}
