//===- Model.cpp - Lowers an mscl.program to simulator steps -------------===//

#include "Model.h"

#include "mscl/IR/MsclLayout.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mscl;
using namespace mscclc::sim;

int64_t Layout::chunkOf(const BufferInfo &buffer, int64_t e) const {
  if (!buffer.isUser())
    return chunkSize() ? e / chunkSize() : 0;
  int64_t j = count ? e * k / count : 0;
  while (j > 0 && start(buffer, j) > e)
    --j;
  while (j + 1 < buffer.chunks && start(buffer, j + 1) <= e)
    ++j;
  return j;
}

namespace {

class ModelBuilder {
public:
  explicit ModelBuilder(Model &model) : model(model) {}

  LogicalResult declare(Operation &op);
  LogicalResult lowerOps(Block &body, int rank, BlockInfo &block);
  /// An operation on runs of R chunks is R chunk steps (mscl/IR/
  /// MsclLayout.h). Wherever the kernels go chunk by chunk (chunks of
  /// different sizes, scratch, packets, pipelines, groups: the backend's
  /// openRange), the step is split into R one-chunk steps; elsewhere one
  /// run moves the same elements.
  void splitRuns(BlockInfo &block) {
    mscl::ChunkLayout layout(model.chunks);
    std::vector<Step> split;
    bool inPipeline = false;
    for (Step &step : block.steps) {
      if (step.kind == StepKind::PipelineBegin)
        inPipeline = true;
      if (step.kind == StepKind::PipelineEnd)
        inPipeline = false;
      llvm::SmallVector<ChunkRef *, 8> operands;
      for (auto *list : std::initializer_list<llvm::SmallVectorImpl<ChunkRef> *>{
               &step.dsts, &step.srcs, &step.remotes})
        for (ChunkRef &c : *list)
          operands.push_back(&c);
      if (step.store)
        operands.push_back(&*step.store);
      int64_t runs = operands.empty() ? 0 : operands.front()->count;
      bool uniform = true, sameSizes = true, packets = false;
      for (ChunkRef *c : operands) {
        const BufferInfo &info = model.buffers[c->buffer];
        uniform &= c->count == runs;
        packets |= info.packet;
        // Scratch chunks lie a stride apart in the kernels' layout.
        sameSizes &= info.isUser() &&
                     layout.sameSizes(true, c->index, true,
                                      operands.front()->index, runs);
      }
      if (runs <= 1 || !uniform ||
          (sameSizes && !packets && !inPipeline && block.group == 1)) {
        split.push_back(std::move(step));
        continue;
      }
      for (int64_t k = 0; k < runs; ++k) {
        Step one = step;
        for (auto *list :
             std::initializer_list<llvm::SmallVectorImpl<ChunkRef> *>{
                 &one.dsts, &one.srcs, &one.remotes})
          for (ChunkRef &c : *list)
            c.index += k, c.count = 1;
        if (one.store)
          one.store->index += k, one.store->count = 1;
        split.push_back(std::move(one));
      }
    }
    // Pipeline steps name their partner by index.
    block.steps = std::move(split);
    std::vector<size_t> open;
    for (size_t i = 0; i < block.steps.size(); ++i) {
      if (block.steps[i].kind == StepKind::PipelineBegin)
        open.push_back(i);
      if (block.steps[i].kind == StepKind::PipelineEnd && !open.empty()) {
        block.steps[i].partner = open.back();
        block.steps[open.back()].partner = i;
        open.pop_back();
      }
    }
  }

private:
  ChunkRef chunk(Attribute attr) {
    auto c = cast<ChunkAttr>(attr);
    return {model.bufferIds.lookup(c.getBuffer()), static_cast<int>(c.getRank()),
            c.getIndex(), c.getCount()};
  }
  int channel(Attribute ref) {
    return model.channelIds.lookup(cast<FlatSymbolRefAttr>(ref).getValue());
  }
  Step make(StepKind kind, Operation *op) {
    Step step;
    step.kind = kind;
    step.op = op;
    return step;
  }
  void addSync(BlockInfo &block, StepKind kind, Operation *op,
               ArrayRef<FlatSymbolRefAttr> refs) {
    Step step = make(kind, op);
    for (FlatSymbolRefAttr ref : refs)
      step.channels.push_back(channel(ref));
    block.steps.push_back(std::move(step));
  }
  /// The step of one copy or reduce action; where its operands live picks
  /// the machine's kind (a copy into a peer is a put, a reduce reading peers
  /// a read_reduce, one writing them a reduce_put, ...).
  Step dataStep(const Action &action, Operation *op);
  /// The steps of `op`'s primitive actions (CommOpInterface).
  void lowerActions(Operation *op, BlockInfo &block);
  LogicalResult lowerPipeline(PipelineOp pipeline, int rank, BlockInfo &block);

  Model &model;
};

} // namespace

LogicalResult ModelBuilder::declare(Operation &op) {
  if (auto buffer = dyn_cast<BufferOp>(op)) {
    int id = model.buffers.size();
    model.buffers.push_back({buffer.getSymName().str(), buffer.getKind(),
                             static_cast<int64_t>(buffer.getChunks()),
                             buffer.getPacket()});
    model.bufferIds[buffer.getSymName()] = id;
    if (buffer.getKind() == BufferKind::input)
      model.input = id;
    if (buffer.getKind() == BufferKind::output)
      model.output = id;
    return success();
  }
  if (auto ch = dyn_cast<ChannelOp>(op)) {
    int id = model.channels.size();
    bool ll = ch.getProtocol() && *ch.getProtocol() == Protocol::LL;
    int src = ch.getSrc(), dst = ch.getDst();
    model.channels.push_back({ch.getSymName().str(), ch.getKind(), ll, src,
                              dst, -1,
                              src / model.gpusPerNode != dst / model.gpusPerNode,
                              &op});
    model.channelIds[ch.getSymName()] = id;
    return success();
  }
  if (auto sw = dyn_cast<SwitchChannelOp>(op)) {
    SwitchInfo info;
    info.name = sw.getSymName().str();
    for (int64_t r : sw.getRanks())
      info.ranks.push_back(static_cast<int>(r));
    model.switchIds[sw.getSymName()] = model.switches.size();
    model.switches.push_back(std::move(info));
    return success();
  }
  return success();
}

Step ModelBuilder::dataStep(const Action &action, Operation *op) {
  Step step = make(StepKind::Copy, op);
  bool peerReads = false, peerWrites = false, groupRead = false,
       groupWrite = false;
  for (const ActionOperand &read : action.reads) {
    switch (read.reach) {
    case Reach::Local:
      step.srcs.push_back(chunk(read.chunk));
      break;
    case Reach::Peer:
      peerReads = true;
      step.channels.push_back(channel(read.via));
      step.remotes.push_back(chunk(read.chunk));
      break;
    case Reach::Group:
      groupRead = true;
      step.switchId = model.switchIds.lookup(read.via.getValue());
      step.srcs.push_back(chunk(read.chunk));
      break;
    }
  }
  for (const ActionOperand &write : action.writes) {
    if (write.reach == Reach::Peer) {
      peerWrites = true;
      step.channels.push_back(channel(write.via));
      step.dsts.push_back(chunk(write.chunk));
    } else if (write.reach == Reach::Group) {
      groupWrite = true;
      step.switchId = model.switchIds.lookup(write.via.getValue());
      step.dsts.push_back(chunk(write.chunk));
    }
  }
  // Next to writes into peers, a local write is the reduce_put's store.
  for (const ActionOperand &write : action.writes)
    if (write.reach == Reach::Local) {
      if (peerWrites)
        step.store = chunk(write.chunk);
      else
        step.dsts.push_back(chunk(write.chunk));
    }
  bool reduce = action.kind == Action::Kind::Reduce;
  if (groupRead)
    step.kind = StepKind::SwitchReduce;
  else if (groupWrite)
    step.kind = StepKind::SwitchBroadcast;
  else if (peerWrites)
    step.kind = reduce ? StepKind::ReducePut : StepKind::Put;
  else if (peerReads)
    step.kind = reduce ? StepKind::ReadReduce : StepKind::Get;
  else
    step.kind = reduce ? StepKind::Reduce : StepKind::Copy;
  return step;
}

/// The machine's signal, wait and flush steps include the block barrier
/// that the execution model puts around them (the task's clock advances
/// there), so a barrier action next to one of them is part of that step;
/// only a barrier on its own (mscl.barrier) is a step of its own.
void ModelBuilder::lowerActions(Operation *op, BlockInfo &block) {
  SmallVector<Action, 4> actions = getActions(op);
  auto isSync = [&](size_t i) {
    if (i >= actions.size())
      return false;
    Action::Kind kind = actions[i].kind;
    return kind == Action::Kind::Signal || kind == Action::Kind::Wait ||
           kind == Action::Kind::Flush;
  };
  for (size_t i = 0, e = actions.size(); i < e; ++i) {
    const Action &action = actions[i];
    switch (action.kind) {
    case Action::Kind::Copy:
    case Action::Kind::Reduce:
      block.steps.push_back(dataStep(action, op));
      break;
    case Action::Kind::Signal:
      addSync(block, StepKind::Signal, op, action.channels);
      break;
    case Action::Kind::Wait:
      addSync(block, StepKind::Wait, op, action.channels);
      break;
    case Action::Kind::Flush:
      addSync(block, StepKind::Flush, op, action.channels);
      break;
    case Action::Kind::Barrier:
      if (!(i > 0 && isSync(i - 1)) && !isSync(i + 1))
        block.steps.push_back(make(StepKind::Barrier, op));
      break;
    }
  }
}

LogicalResult ModelBuilder::lowerPipeline(PipelineOp pipeline, int rank,
                                          BlockInfo &block) {
  int begin = block.steps.size();
  Step step = make(StepKind::PipelineBegin, pipeline);
  step.unit = pipeline.getUnit();
  block.steps.push_back(std::move(step));
  if (failed(lowerOps(pipeline.getBody().front(), rank, block)))
    return failure();
  for (int i = begin + 1, e = block.steps.size(); i < e; ++i)
    if (block.steps[i].kind == StepKind::PipelineBegin)
      return pipeline.emitOpError() << "pipelines do not nest";
  Step end = make(StepKind::PipelineEnd, pipeline);
  end.partner = begin;
  block.steps[begin].partner = block.steps.size();
  block.steps.push_back(std::move(end));
  return success();
}

LogicalResult ModelBuilder::lowerOps(Block &body, int rank, BlockInfo &block) {
  for (Operation &op : body) {
    // A pipeline performs no action of its own: it repeats its body.
    if (auto pipeline = dyn_cast<PipelineOp>(op)) {
      if (failed(lowerPipeline(pipeline, rank, block)))
        return failure();
      continue;
    }
    if (!isa<CommOpInterface>(op))
      return op.emitOpError()
             << "cannot be simulated: not an mscl thread-block op";
    lowerActions(&op, block);
  }
  return success();
}

FailureOr<Model> Model::build(ProgramOp program) {
  Model model;
  model.program = program;
  model.collective = program.getCollective();
  model.ranks = program.getRanks();
  model.gpusPerNode = program.getGpusPerNode();
  model.chunks = program.getChunks();
  model.inplace = program.getInplace();
  model.root = program.getRoot();
  ModelBuilder builder(model);
  for (Operation &op : program.getBodyBlock())
    if (failed(builder.declare(op)))
      return failure();
  if (model.input < 0 && model.output < 0)
    return program.emitOpError() << "declares neither @input nor @output";
  if (model.inplace) {
    if (model.input < 0)
      model.input = model.output;
    if (model.output < 0)
      model.output = model.input;
  } else if (model.input < 0 || model.output < 0) {
    return program.emitOpError()
           << "an out-of-place program declares both @input and @output";
  }

  // Pair every channel with its other end (same kind, protocol and id).
  std::map<std::tuple<int, bool, int, int, int64_t>, int> byEnds;
  for (auto [i, ch] : llvm::enumerate(model.channels))
    byEnds[{static_cast<int>(ch.kind), ch.ll, ch.src, ch.dst,
            static_cast<int64_t>(cast<ChannelOp>(ch.op).getId())}] = i;
  model.channelsInto.resize(model.ranks);
  model.channelsFrom.resize(model.ranks);
  for (auto [i, ch] : llvm::enumerate(model.channels)) {
    auto it = byEnds.find({static_cast<int>(ch.kind), ch.ll, ch.dst, ch.src,
                           static_cast<int64_t>(cast<ChannelOp>(ch.op).getId())});
    if (it != byEnds.end())
      ch.peer = it->second;
    model.channelsInto[ch.dst].push_back(i);
    model.channelsFrom[ch.src].push_back(i);
  }

  for (auto rankOp : program.getBodyBlock().getOps<RankOp>()) {
    for (auto tb : rankOp.getBody().front().getOps<ThreadBlockOp>()) {
      BlockInfo block;
      block.rank = rankOp.getRank();
      block.id = tb.getId();
      block.group = tb.getGroup();
      block.op = tb;
      if (failed(builder.lowerOps(tb.getBody().front(), block.rank, block)))
        return failure();
      builder.splitRuns(block);
      for (const Step &step : block.steps)
        for (int c : step.channels) {
          model.channels[c].owner = model.blocks.size();
          model.channels[c].group = block.group;
        }
      model.blocks.push_back(std::move(block));
    }
  }
  return model;
}
