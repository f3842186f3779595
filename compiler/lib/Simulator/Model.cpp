//===- Model.cpp - Lowers an mscl.program to simulator steps -------------===//

#include "Model.h"

#include "llvm/ADT/TypeSwitch.h"

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
               ArrayAttr refs) {
    Step step = make(kind, op);
    for (Attribute ref : refs)
      step.channels.push_back(channel(ref));
    block.steps.push_back(std::move(step));
  }
  void addPut(BlockInfo &block, Operation *op, FlatSymbolRefAttr ref,
              ChunkAttr dst, ChunkAttr src, int signals) {
    Step put = make(StepKind::Put, op);
    put.channels.push_back(channel(ref));
    put.dsts.push_back(chunk(dst));
    put.srcs.push_back(chunk(src));
    block.steps.push_back(std::move(put));
    ArrayAttr refs = ArrayAttr::get(op->getContext(), {ref});
    if (signals >= 1)
      addSync(block, StepKind::Signal, op, refs);
    if (signals >= 2)
      addSync(block, StepKind::Flush, op, refs);
  }

  /// Inside a pipeline the generated code does an operation on a run of R
  /// chunks one chunk at a time, so iteration t takes slice t of every
  /// chunk (docs/backend.md): split such steps into R one-chunk steps.
  void splitRuns(BlockInfo &block, size_t from) {
    std::vector<Step> split;
    for (size_t i = from; i < block.steps.size(); ++i) {
      Step &step = block.steps[i];
      int64_t runs = 0;
      bool uniform = true;
      auto visit = [&](const ChunkRef &c) {
        if (!runs)
          runs = c.count;
        uniform &= c.count == runs;
      };
      for (auto *list : std::initializer_list<llvm::SmallVectorImpl<ChunkRef> *>{
               &step.dsts, &step.srcs, &step.remotes})
        for (const ChunkRef &c : *list)
          visit(c);
      if (step.store)
        visit(*step.store);
      if (runs <= 1 || !uniform) {
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
    block.steps.resize(from);
    for (Step &step : split)
      block.steps.push_back(std::move(step));
  }

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

LogicalResult ModelBuilder::lowerOps(Block &body, int rank, BlockInfo &block) {
  for (Operation &opRef : body) {
    Operation *op = &opRef;
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<PutOp>([&](PutOp put) {
              addPut(block, op, put.getChannelAttr(), put.getDst(),
                     put.getSrc(), 0);
              return success();
            })
            .Case<PutWithSignalOp>([&](PutWithSignalOp put) {
              addPut(block, op, put.getChannelAttr(), put.getDst(),
                     put.getSrc(), 1);
              return success();
            })
            .Case<PutWithSignalAndFlushOp>([&](PutWithSignalAndFlushOp put) {
              addPut(block, op, put.getChannelAttr(), put.getDst(),
                     put.getSrc(), 2);
              return success();
            })
            .Case<GetOp>([&](GetOp get) {
              Step step = make(StepKind::Get, op);
              step.channels.push_back(channel(get.getChannelAttr()));
              step.dsts.push_back(chunk(get.getDst()));
              step.remotes.push_back(chunk(get.getSrc()));
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<SignalOp>([&](SignalOp s) {
              addSync(block, StepKind::Signal, op, s.getChannels());
              return success();
            })
            .Case<WaitOp>([&](WaitOp w) {
              addSync(block, StepKind::Wait, op, w.getChannels());
              return success();
            })
            .Case<FlushOp>([&](FlushOp f) {
              addSync(block, StepKind::Flush, op, f.getChannels());
              return success();
            })
            .Case<CopyOp>([&](CopyOp copy) {
              Step step = make(StepKind::Copy, op);
              step.dsts.push_back(chunk(copy.getDst()));
              step.srcs.push_back(chunk(copy.getSrc()));
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<ReduceOp>([&](ReduceOp reduce) {
              Step step = make(StepKind::Reduce, op);
              step.dsts.push_back(chunk(reduce.getDst()));
              for (Attribute src : reduce.getSrcs())
                step.srcs.push_back(chunk(src));
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<ReadReduceOp>([&](ReadReduceOp reduce) {
              Step step = make(StepKind::ReadReduce, op);
              step.dsts.push_back(chunk(reduce.getDst()));
              for (Attribute src : reduce.getSrcs())
                step.srcs.push_back(chunk(src));
              for (auto [ref, remote] :
                   llvm::zip(reduce.getChannels(), reduce.getRemotes())) {
                step.channels.push_back(channel(ref));
                step.remotes.push_back(chunk(remote));
              }
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<ReducePutOp>([&](ReducePutOp reducePut) {
              Step step = make(StepKind::ReducePut, op);
              for (auto [ref, dst] : llvm::zip(reducePut.getChannels(),
                                               reducePut.getDsts())) {
                step.channels.push_back(channel(ref));
                step.dsts.push_back(chunk(dst));
              }
              for (Attribute src : reducePut.getSrcs())
                step.srcs.push_back(chunk(src));
              if (auto store = reducePut.getStoreAttr())
                step.store = chunk(store);
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<SwitchReduceOp, SwitchBroadcastOp>([&](auto sw) {
              Step step = make(isa<SwitchReduceOp>(op) ? StepKind::SwitchReduce
                                                       : StepKind::SwitchBroadcast,
                               op);
              step.switchId = model.switchIds.lookup(sw.getChannel());
              step.dsts.push_back(chunk(sw.getDst()));
              step.srcs.push_back(chunk(sw.getSrc()));
              block.steps.push_back(std::move(step));
              return success();
            })
            .Case<BarrierOp>([&](BarrierOp) {
              block.steps.push_back(make(StepKind::Barrier, op));
              return success();
            })
            .Case<PipelineOp>([&](PipelineOp pipeline) -> LogicalResult {
              int begin = block.steps.size();
              Step step = make(StepKind::PipelineBegin, op);
              step.unit = pipeline.getUnit();
              block.steps.push_back(std::move(step));
              if (failed(lowerOps(pipeline.getBody().front(), rank, block)))
                return failure();
              splitRuns(block, begin + 1);
              int64_t maxRun = 0;
              for (int i = begin + 1, e = block.steps.size(); i < e; ++i) {
                Step &inner = block.steps[i];
                if (inner.kind == StepKind::PipelineBegin)
                  return pipeline.emitOpError() << "pipelines do not nest";
                for (auto *list : std::initializer_list<llvm::SmallVectorImpl<ChunkRef> *>{
                         &inner.dsts, &inner.srcs, &inner.remotes})
                  for (const ChunkRef &c : *list)
                    maxRun = std::max(maxRun, c.count);
                if (inner.store)
                  maxRun = std::max(maxRun, inner.store->count);
              }
              Step end = make(StepKind::PipelineEnd, op);
              end.partner = begin;
              block.steps[begin].partner = block.steps.size();
              block.steps[begin].maxRunChunks = maxRun;
              block.steps.push_back(std::move(end));
              return success();
            })
            .Default([](Operation *other) {
              return other->emitOpError()
                     << "cannot be simulated: not an mscl thread-block op";
            });
    if (failed(result))
      return failure();
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
