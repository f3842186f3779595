//===- MLIRGen.cpp - Evaluated program to the mscl dialect ---------------===//
//
// A one-to-one translation: meta-evaluation already unrolled every loop and
// placed every operation, so each Program operation becomes one mscl op.
// Single-channel forms produced by the language (signal on one channel,
// read_reduce from one peer) are the degenerate cases of the multi-channel
// ops that the fusion passes build.
//
//===----------------------------------------------------------------------===//

#include "mscclc/MLIRGen/MLIRGen.h"

#include "mscl/IR/MsclOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mscclc {
namespace {

class Generator {
public:
  Generator(const Program &program, MLIRContext &ctx)
      : program(program), builder(&ctx) {}

  OwningOpRef<ModuleOp> run();

private:
  mscl::ChunkAttr chunk(const ChunkRef &ref) {
    return mscl::ChunkAttr::get(builder.getContext(), ref.buffer, ref.rank,
                                ref.index, ref.count);
  }
  ArrayAttr chunks(llvm::ArrayRef<ChunkRef> refs) {
    SmallVector<Attribute> list;
    for (const ChunkRef &ref : refs)
      list.push_back(chunk(ref));
    return builder.getArrayAttr(list);
  }
  FlatSymbolRefAttr channel(const Operation &op) {
    return FlatSymbolRefAttr::get(builder.getContext(), op.channel);
  }
  ArrayAttr channelList(const Operation &op) {
    return builder.getArrayAttr({channel(op)});
  }

  void declareBuffers();
  void declareChannels();
  LogicalResult emitOp(const Operation &op);

  const Program &program;
  OpBuilder builder;
  llvm::StringSet<> referencedBuffers;
};

/// Collects the buffers the operations touch (in-place programs name only
/// the buffer that input and output share).
void collectBuffers(const std::vector<Operation> &ops, llvm::StringSet<> &out) {
  for (const Operation &op : ops) {
    if (op.dst)
      out.insert(op.dst->buffer);
    for (const ChunkRef &src : op.srcs)
      out.insert(src.buffer);
    collectBuffers(op.body, out);
  }
}

void Generator::declareBuffers() {
  for (const RankProgram &rank : program.rankPrograms)
    for (const ThreadBlock &tb : rank.threadBlocks)
      collectBuffers(tb.ops, referencedBuffers);
  auto declare = [&](StringRef name, mscl::BufferKind kind, int64_t chunks,
                     bool packet, Location loc) {
    mscl::BufferOp::create(builder, loc, builder.getStringAttr(name),
                           mscl::BufferKindAttr::get(builder.getContext(), kind),
                           builder.getI64IntegerAttr(chunks),
                           packet ? builder.getUnitAttr() : UnitAttr());
  };
  // Out of place, both user buffers exist. In place, only the canonical one:
  // the larger buffer (input for reducescatter and scatter, output
  // otherwise), unless
  // the program never touches it and uses the other name throughout.
  bool wantInput = true, wantOutput = true;
  if (program.inPlace) {
    bool inputIsCanonical =
        collectiveInfo(program.collective).inPlace == InPlace::OutputInInput;
    if (referencedBuffers.count("input") && !referencedBuffers.count("output"))
      inputIsCanonical = true;
    else if (referencedBuffers.count("output") &&
             !referencedBuffers.count("input"))
      inputIsCanonical = false;
    wantInput = inputIsCanonical;
    wantOutput = !inputIsCanonical;
  }
  if (wantInput)
    declare("input", mscl::BufferKind::input, program.inputChunks, false,
            program.loc);
  if (wantOutput)
    declare("output", mscl::BufferKind::output, program.outputChunks, false,
            program.loc);
  // Scratch no operation references costs memory and nothing else.
  for (const ScratchBuffer &scratch : program.scratch)
    if (referencedBuffers.count(scratch.name))
      declare(scratch.name, mscl::BufferKind::scratch, scratch.chunks,
              scratch.packet, scratch.loc);
}

void Generator::declareChannels() {
  MLIRContext *ctx = builder.getContext();
  for (const Channel &ch : program.channels) {
    if (ch.kind == ChannelKind::Switch) {
      mscl::SwitchChannelOp::create(builder, ch.loc,
                                    builder.getStringAttr(ch.name),
                                    builder.getDenseI64ArrayAttr(ch.ranks),
                                    builder.getI64IntegerAttr(ch.id));
      continue;
    }
    mscl::ProtocolAttr protocol;
    if (ch.protocol != Protocol::None)
      protocol = mscl::ProtocolAttr::get(
          ctx, ch.protocol == Protocol::LL ? mscl::Protocol::LL
                                           : mscl::Protocol::HB);
    auto kind = ch.kind == ChannelKind::Memory ? mscl::ChannelKind::memory
                                               : mscl::ChannelKind::port;
    mscl::ChannelOp::create(builder, ch.loc, builder.getStringAttr(ch.name),
                            mscl::ChannelKindAttr::get(ctx, kind), protocol,
                            builder.getI64IntegerAttr(ch.src),
                            builder.getI64IntegerAttr(ch.dst),
                            builder.getI64IntegerAttr(ch.id));
  }
}

LogicalResult Generator::emitOp(const Operation &op) {
  Location loc = op.loc;
  auto needs = [&](bool hasDst, size_t minSrcs) -> LogicalResult {
    if ((hasDst && !op.dst) || op.srcs.size() < minSrcs)
      return emitError(loc) << "internal error: malformed operation";
    return success();
  };
  switch (op.kind) {
  case OpKind::Put:
  case OpKind::PutSignal:
  case OpKind::PutSignalFlush:
    if (failed(needs(true, 1)))
      return failure();
    if (op.kind == OpKind::Put)
      mscl::PutOp::create(builder, loc, channel(op), chunk(*op.dst),
                          chunk(op.srcs[0]));
    else if (op.kind == OpKind::PutSignal)
      mscl::PutWithSignalOp::create(builder, loc, channel(op), chunk(*op.dst),
                                    chunk(op.srcs[0]));
    else
      mscl::PutWithSignalAndFlushOp::create(builder, loc, channel(op),
                                            chunk(*op.dst), chunk(op.srcs[0]));
    return success();
  case OpKind::Get:
    if (failed(needs(true, 1)))
      return failure();
    mscl::GetOp::create(builder, loc, channel(op), chunk(*op.dst),
                        chunk(op.srcs[0]));
    return success();
  case OpKind::Signal:
    mscl::SignalOp::create(builder, loc, channelList(op));
    return success();
  case OpKind::Wait:
    mscl::WaitOp::create(builder, loc, channelList(op));
    return success();
  case OpKind::Flush:
    mscl::FlushOp::create(builder, loc, channelList(op));
    return success();
  case OpKind::ReadReduce:
    if (failed(needs(true, 1)))
      return failure();
    mscl::ReadReduceOp::create(builder, loc, chunk(*op.dst),
                               chunks({*op.dst}), channelList(op),
                               chunks({op.srcs[0]}));
    return success();
  case OpKind::ReducePut:
    if (failed(needs(true, 1)))
      return failure();
    mscl::ReducePutOp::create(builder, loc, channelList(op), chunks({*op.dst}),
                              chunks(op.srcs), mscl::ChunkAttr());
    return success();
  case OpKind::Copy:
    if (failed(needs(true, 1)))
      return failure();
    // In-place collectives turn copies such as `output[r] = input[0]` into
    // copies of a chunk onto itself: nothing to do.
    if (chunk(*op.dst) != chunk(op.srcs[0]))
      mscl::CopyOp::create(builder, loc, chunk(*op.dst), chunk(op.srcs[0]));
    return success();
  case OpKind::Reduce:
    if (failed(needs(true, 1)))
      return failure();
    if (op.srcs.size() == 1) {
      // A reduction over one chunk is a copy (or nothing, onto itself).
      mscl::ChunkAttr dst = chunk(*op.dst), src = chunk(op.srcs[0]);
      if (dst != src)
        mscl::CopyOp::create(builder, loc, dst, src);
      return success();
    }
    mscl::ReduceOp::create(builder, loc, chunk(*op.dst), chunks(op.srcs));
    return success();
  case OpKind::SwitchReduce:
  case OpKind::SwitchBroadcast:
    if (failed(needs(true, 1)))
      return failure();
    if (op.kind == OpKind::SwitchReduce)
      mscl::SwitchReduceOp::create(builder, loc, channel(op), chunk(*op.dst),
                                   chunk(op.srcs[0]));
    else
      mscl::SwitchBroadcastOp::create(builder, loc, channel(op),
                                      chunk(*op.dst), chunk(op.srcs[0]));
    return success();
  case OpKind::Barrier:
    mscl::BarrierOp::create(builder, loc);
    return success();
  case OpKind::Pipeline: {
    auto pipeline = mscl::PipelineOp::create(
        builder, loc, builder.getI64IntegerAttr(op.unitBytes));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());
    for (const Operation &inner : op.body)
      if (failed(emitOp(inner)))
        return failure();
    return success();
  }
  }
  return emitError(loc) << "internal error: unknown operation kind";
}

OwningOpRef<ModuleOp> Generator::run() {
  MLIRContext *ctx = builder.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(program.loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto programOp = mscl::ProgramOp::create(
      builder, program.loc, builder.getStringAttr(program.name),
      mscl::CollectiveKindAttr::get(ctx, mscl::fromFloor(program.collective)),
      builder.getI64IntegerAttr(program.ranks),
      builder.getI64IntegerAttr(program.gpusPerNode),
      builder.getI64IntegerAttr(program.instances),
      builder.getI64IntegerAttr(program.chunks),
      builder.getI64IntegerAttr(program.inputChunks),
      builder.getI64IntegerAttr(program.outputChunks),
      program.inPlace ? builder.getUnitAttr() : UnitAttr(),
      builder.getI64IntegerAttr(program.root));
  builder.setInsertionPointToStart(&programOp.getBody().emplaceBlock());
  declareBuffers();
  declareChannels();
  for (const RankProgram &rank : program.rankPrograms) {
    auto rankOp = mscl::RankOp::create(builder, program.loc,
                                       builder.getI64IntegerAttr(rank.rank));
    OpBuilder::InsertionGuard rankGuard(builder);
    builder.setInsertionPointToStart(&rankOp.getBody().emplaceBlock());
    for (const ThreadBlock &tb : rank.threadBlocks) {
      auto tbOp = mscl::ThreadBlockOp::create(
          builder, program.loc, builder.getI64IntegerAttr(tb.id),
          builder.getI64IntegerAttr(tb.groupSize));
      OpBuilder::InsertionGuard tbGuard(builder);
      builder.setInsertionPointToStart(&tbOp.getBody().emplaceBlock());
      for (const Operation &op : tb.ops)
        if (failed(emitOp(op)))
          return nullptr;
    }
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> generateMLIR(const Program &program, MLIRContext &ctx) {
  ctx.getOrLoadDialect<mscl::MsclDialect>();
  return Generator(program, ctx).run();
}

} // namespace mscclc
