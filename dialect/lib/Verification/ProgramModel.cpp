//===- ProgramModel.cpp - Flat, indexed view of an mscl.program -----------===//

#include "ProgramModel.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

ProgramModel::ProgramModel(ProgramOp program) : program(program) {
  ranks = static_cast<int64_t>(program.getRanks());
  // Buffers first: slots of one rank are laid out buffer after buffer.
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>()) {
    BufferInfo info;
    info.name = buffer.getSymName().str();
    info.chunks = static_cast<int64_t>(buffer.getChunks());
    info.packet = buffer.getPacket();
    info.offset = slotsPerRank;
    slotsPerRank += info.chunks;
    bufferIndex[info.name] = static_cast<int>(buffers.size());
    buffers.push_back(std::move(info));
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
        count +=
            isa<PipelineOp>(op)
                ? cast<PipelineOp>(op).getBody().front().getOperations().size()
                : 1;
      block.steps.reserve(count);
      for (Operation &op : tb.getBody().front()) {
        if (auto pipeline = dyn_cast<PipelineOp>(op)) {
          for (Operation &inner : pipeline.getBody().front())
            decode(&inner, pipeline, rank, block.steps);
          continue;
        }
        decode(&op, nullptr, rank, block.steps);
      }
      int blockIndex = static_cast<int>(blocks.size());
      for (int s = 0, e = static_cast<int>(block.steps.size()); s < e; ++s) {
        const Step &step = block.steps[s];
        auto use = [&](int channel) {
          if (channels[channel].owner < 0)
            channels[channel].owner = blockIndex;
        };
        for (int c : step.waits) {
          use(c);
          channels[c].waitSteps.push_back(s);
        }
        for (const Move &move : step.moves)
          if (move.channel >= 0)
            use(move.channel);
        for (int c : step.signals) {
          use(c);
          channels[c].signalSteps.push_back(s);
        }
        for (int c : step.flushes)
          use(c);
      }
      blocks.push_back(std::move(block));
    }
  }
}

Range ProgramModel::toRange(ChunkAttr chunk) const {
  Range range;
  range.rank = chunk.getRank();
  range.buffer = bufferIndex.lookup(chunk.getBuffer());
  range.index = chunk.getIndex();
  range.count = chunk.getCount();
  return range;
}

int ProgramModel::channelOf(Attribute ref) const {
  auto it = channelIndex.find(cast<FlatSymbolRefAttr>(ref).getValue());
  return it == channelIndex.end() ? -1 : it->second;
}

/// An operation moves as many elements as its smallest operand holds; at
/// chunk granularity that is the smallest chunk count.
static void truncate(Move &move) {
  int64_t count = move.dst.count;
  for (const Range &src : move.srcs)
    count = std::min(count, src.count);
  move.dst.count = count;
  for (Range &src : move.srcs)
    src.count = count;
}

void ProgramModel::addPut(Step &step, Attribute channelRef, ChunkAttr dst,
                          ArrayRef<Range> srcs, bool putOp) {
  Move move;
  move.dst = toRange(dst);
  move.srcs.assign(srcs.begin(), srcs.end());
  move.channel = channelOf(channelRef);
  move.asyncSource = putOp && move.channel >= 0 && channels[move.channel].port;
  truncate(move);
  step.moves.push_back(std::move(move));
}

/// Marks every move whose sources equal the previous move's.
static void markSharedSources(Step &step) {
  for (size_t m = 1; m < step.moves.size(); ++m) {
    const Move &prev = step.moves[m - 1];
    Move &move = step.moves[m];
    move.sharesSources =
        move.srcs.size() == prev.srcs.size() &&
        llvm::all_of(llvm::zip(move.srcs, prev.srcs), [](auto pair) {
          const Range &a = std::get<0>(pair), &b = std::get<1>(pair);
          return a.rank == b.rank && a.buffer == b.buffer &&
                 a.index == b.index && a.count == b.count;
        });
  }
}

void ProgramModel::decode(Operation *op, Operation *pipeline, int64_t rank,
                          std::vector<Step> &steps) {
  Step step;
  step.op = op;
  step.pipeline = pipeline;
  auto channelList = [&](ArrayAttr refs, SmallVectorImpl<int> &out) {
    for (Attribute ref : refs)
      if (int c = channelOf(ref); c >= 0)
        out.push_back(c);
  };
  auto local = [&](ChunkAttr dst, ArrayRef<Range> srcs) {
    Move move;
    move.dst = toRange(dst);
    move.srcs.assign(srcs.begin(), srcs.end());
    truncate(move);
    step.moves.push_back(std::move(move));
  };
  auto ranges = [&](ArrayAttr chunks) {
    SmallVector<Range, 4> out;
    for (Attribute chunk : chunks)
      out.push_back(toRange(cast<ChunkAttr>(chunk)));
    return out;
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<PutOp>([&](PutOp put) {
        addPut(step, put.getChannelAttr(), put.getDst(), toRange(put.getSrc()),
               true);
      })
      .Case<PutWithSignalOp>([&](PutWithSignalOp put) {
        addPut(step, put.getChannelAttr(), put.getDst(), toRange(put.getSrc()),
               true);
        if (int c = channelOf(put.getChannelAttr()); c >= 0)
          step.signals.push_back(c);
      })
      .Case<PutWithSignalAndFlushOp>([&](PutWithSignalAndFlushOp put) {
        addPut(step, put.getChannelAttr(), put.getDst(), toRange(put.getSrc()),
               true);
        if (int c = channelOf(put.getChannelAttr()); c >= 0) {
          step.signals.push_back(c);
          step.flushes.push_back(c);
        }
      })
      .Case<GetOp>(
          [&](GetOp get) { local(get.getDst(), toRange(get.getSrc())); })
      .Case<SignalOp>([&](SignalOp signal) {
        channelList(signal.getChannels(), step.signals);
      })
      .Case<WaitOp>(
          [&](WaitOp wait) { channelList(wait.getChannels(), step.waits); })
      .Case<FlushOp>([&](FlushOp flush) {
        channelList(flush.getChannels(), step.flushes);
      })
      .Case<CopyOp>(
          [&](CopyOp copy) { local(copy.getDst(), toRange(copy.getSrc())); })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        local(reduce.getDst(), ranges(reduce.getSrcs()));
      })
      .Case<ReadReduceOp>([&](ReadReduceOp reduce) {
        SmallVector<Range, 4> srcs = ranges(reduce.getSrcs());
        srcs.append(ranges(reduce.getRemotes()));
        local(reduce.getDst(), srcs);
      })
      .Case<ReducePutOp>([&](ReducePutOp reducePut) {
        SmallVector<Range, 4> srcs = ranges(reducePut.getSrcs());
        for (auto [ref, dst] :
             llvm::zip(reducePut.getChannels(), reducePut.getDsts()))
          addPut(step, ref, cast<ChunkAttr>(dst), srcs, false);
        if (ChunkAttr store = reducePut.getStoreAttr())
          local(store, srcs);
        markSharedSources(step);
      })
      .Case<SwitchReduceOp>([&](SwitchReduceOp sw) {
        // The switch reads the same chunk on every rank of the group.
        Range src = toRange(sw.getSrc());
        SmallVector<Range, 8> srcs;
        for (int64_t member : switchGroups.lookup(sw.getChannel())) {
          src.rank = member;
          srcs.push_back(src);
        }
        local(sw.getDst(), srcs);
      })
      .Case<SwitchBroadcastOp>([&](SwitchBroadcastOp sw) {
        Range src = toRange(sw.getSrc());
        for (int64_t member : switchGroups.lookup(sw.getChannel())) {
          Move move;
          move.dst = toRange(sw.getDst());
          move.dst.rank = member;
          move.srcs.push_back(src);
          truncate(move);
          step.moves.push_back(std::move(move));
        }
        markSharedSources(step);
      })
      .Default([](Operation *) {});
  // Barriers order threads inside the block only; the block's program order
  // already covers them at this level.
  if (isa<BarrierOp>(op))
    return;
  for (const Move &move : step.moves)
    for (const Range &src : move.srcs)
      step.readsPackets |= isPacket(src);
  (void)rank;
  steps.push_back(std::move(step));
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
