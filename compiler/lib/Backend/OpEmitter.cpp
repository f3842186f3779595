//===- OpEmitter.cpp - One mscl operation as CUDA C++ ---------------------===//
//
// Data movement (copies, reductions, memory-channel puts and gets) becomes
// one call of the device library's `elementwise` over plain and packet
// operands; port-channel operations push FIFO triggers from thread 0;
// signals, waits and flushes touch one semaphore or FIFO per channel, each
// from its own lane.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {

const ChannelInfo *KernelEmitter::channel(Operation *op, Attribute ref) {
  StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
  const ChannelInfo *c = info.lookupChannel(name);
  if (!c || c->src != rank) {
    op->emitOpError() << "channel @" << name << " is not a channel of rank "
                      << rank;
    return nullptr;
  }
  return c;
}

std::optional<Operand> KernelEmitter::local(Operation *op, ChunkAttr chunk) {
  const BufferInfo *b = info.lookupBuffer(chunk.getBuffer());
  if (!b) {
    op->emitOpError() << "unknown buffer '" << chunk.getBuffer() << "'";
    return std::nullopt;
  }
  if (chunk.getRank() != rank) {
    op->emitOpError() << "chunk on rank " << chunk.getRank()
                      << " is not local to rank " << rank;
    return std::nullopt;
  }
  Operand o;
  o.buffer = b;
  o.chunk = chunk;
  return o;
}

std::optional<Operand> KernelEmitter::remote(Operation *op,
                                             const ChannelInfo &c,
                                             ChunkAttr chunk) {
  const BufferInfo *b = info.lookupBuffer(chunk.getBuffer());
  if (!b) {
    op->emitOpError() << "unknown buffer '" << chunk.getBuffer() << "'";
    return std::nullopt;
  }
  if (chunk.getRank() != c.dst) {
    op->emitOpError() << "chunk on rank " << chunk.getRank()
                      << " is not on the peer of @" << c.name;
    return std::nullopt;
  }
  Operand o;
  o.buffer = b;
  o.chunk = chunk;
  o.via = Operand::Via::Memory;
  o.index = c.index;
  return o;
}

std::optional<Operand> KernelEmitter::hbRemote(Operation *op, Attribute ref,
                                               ChunkAttr chunk) {
  const ChannelInfo *c = channel(op, ref);
  if (!c)
    return std::nullopt;
  if (c->isPort || c->isLL) {
    op->emitOpError() << "reads peer memory through @" << c->name
                      << ", which needs an HB memory channel";
    return std::nullopt;
  }
  return remote(op, *c, chunk);
}

bool KernelEmitter::emitElementwise(Operation *op, ArrayRef<Operand> srcs,
                                    ArrayRef<Operand> dsts) {
  for (const Operand &d : dsts)
    if (d.isPacket() && d.via == Operand::Via::Local) {
      op->emitOpError() << "writes the local packet buffer '"
                        << d.buffer->name
                        << "'; packet buffers are written by LL puts only";
      return false;
    }
  for (const Operand &s : srcs)
    if (s.isPacket() && s.via != Operand::Via::Local) {
      op->emitOpError() << "reads the peer's packet buffer '"
                        << s.buffer->name << "'; LL packets are read locally";
      return false;
    }
  // Sources are reduced in the order the op lists them. The device library
  // takes plain sources first unless told, a bit per source, where the
  // packets sit.
  uint64_t order = 0;
  unsigned packets = 0;
  for (auto [i, s] : llvm::enumerate(srcs)) {
    if (!s.isPacket())
      continue;
    if (srcs.size() > 64) {
      op->emitOpError() << "reduces " << srcs.size()
                        << " sources, some of them LL packets; at most 64 "
                           "are supported";
      return false;
    }
    order |= uint64_t(1) << i;
    ++packets;
  }
  const unsigned plain = unsigned(srcs.size()) - packets;
  const uint64_t plainFirst =
      packets == 0 ? 0
      : packets == 64 ? ~uint64_t(0)
                      : ((uint64_t(1) << packets) - 1) << plain;
  const std::string orderArg =
      order == plainFirst ? "" : ", 0x" + llvm::utohexstr(order) + "ull";
  SmallVector<Operand> all(srcs.begin(), srcs.end());
  all.append(dsts.begin(), dsts.end());
  body.open();
  int opened = openRange(all);
  SmallVector<std::string> plainSrc, packetSrc, plainDst, packetDst;
  for (const Operand &s : srcs)
    (s.isPacket() ? packetSrc : plainSrc)
        .push_back(s.isPacket() ? packetPtr(s) : plainPtr(s));
  for (const Operand &d : dsts)
    (d.isPacket() ? packetDst : plainDst)
        .push_back(d.isPacket() ? packetPtr(d) : plainPtr(d));
  auto list = [](ArrayRef<std::string> items) {
    return "{" + llvm::join(items, ", ") + "}";
  };
  body.line() << "const Operands<" << plainSrc.size() << ", "
              << packetSrc.size() << ", " << plainDst.size() << ", "
              << packetDst.size() << orderArg << "> o = {\n";
  body.line() << "    " << list(plainSrc) << ",\n";
  body.line() << "    " << list(packetSrc) << ",\n";
  body.line() << "    " << list(plainDst) << ",\n";
  body.line() << "    " << list(packetDst) << "};\n";
  ++dataOpCount;
  body.line() << "elementwise(ctx, "
              << site(op, "MSCCLC_CHAN_NONE", 0,
                      packetSrc.empty() ? "MSCCLC_OPC_NONE"
                                        : "MSCCLC_OPC_LL_READ")
              << ", o, r.size());\n";
  closeRange(opened);
  body.close();
  return true;
}

bool KernelEmitter::emitMemoryPut(Operation *op, const ChannelInfo &c,
                                  ChunkAttr dstChunk, ChunkAttr srcChunk,
                                  bool signal) {
  auto src = local(op, srcChunk);
  auto dst = remote(op, c, dstChunk);
  if (!src || !dst)
    return false;
  if (c.isLL != dst->isPacket()) {
    op->emitOpError() << (c.isLL ? "an LL put must write a packet buffer"
                                 : "an HB put must not write a packet "
                                   "buffer");
    return false;
  }
  if (!emitElementwise(op, {*src}, {*dst}))
    return false;
  if (signal && !c.isLL) {
    body.line() << "__syncthreads();\n";
    body.line() << "if (threadIdx.x == 0) signalSemaphore(args.memoryChannels["
                << c.index << "].peerSemaphore);\n";
  }
  return true;
}

bool KernelEmitter::emitPortPut(Operation *op, const ChannelInfo &c,
                                ChunkAttr dstChunk, ChunkAttr srcChunk,
                                bool signal, bool flush) {
  auto src = local(op, srcChunk);
  auto dst = remote(op, c, dstChunk);
  if (!src || !dst)
    return false;
  if (src->isPacket() || dst->isPacket()) {
    op->emitOpError() << "port channels move plain data, not LL packets";
    return false;
  }
  auto bufferId = [](const Operand &o) {
    switch (o.buffer->kind) {
    case BufferKind::input:
      return "MSCCLC_BUF_INPUT";
    case BufferKind::output:
      return "MSCCLC_BUF_OUTPUT";
    default:
      return "MSCCLC_BUF_SCRATCH";
    }
  };
  std::string extra = "0";
  if (signal && flush)
    extra = "MSCCLC_TRIGGER_SIGNAL | MSCCLC_TRIGGER_FLUSH";
  else if (signal)
    extra = "MSCCLC_TRIGGER_SIGNAL";
  body.open();
  int opened = openRange({*src, *dst});
  // A put done in pieces (chunk by chunk, or a group block's stripes)
  // signals and flushes once, after its last piece.
  bool split = opened > 0 && (signal || flush);
  if (signal && !split)
    body.line() << "__syncthreads(); // the signal covers the block's writes\n";
  std::string idx = std::to_string(c.index);
  body.open("if (threadIdx.x == 0)");
  syncOpCount += flush ? 2 : 1;
  body.line() << "const u64 last = portPut(ctx, "
              << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FIFO_PUSH")
              << ", args.fifo,\n";
  body.line() << "    args.portChannels[" << idx << "].proxyId, "
              << (split ? "0" : extra) << ",\n";
  body.line() << "    " << bufferId(*dst) << ", " << byteOffset(*dst)
              << ",\n";
  body.line() << "    " << bufferId(*src) << ", " << byteOffset(*src)
              << ",\n";
  body.line() << "    r.size() * sizeof(T));\n";
  if (flush && !split)
    body.line() << "fifoSync(ctx, "
                << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FLUSH")
                << ", args.fifo, last);\n";
  else
    body.line() << "(void)last;\n";
  body.close();
  if (flush && !split)
    body.line() << "__syncthreads();\n";
  closeRange(opened);
  if (split && signal) {
    ++syncOpCount;
    body.line() << "__syncthreads(); // the signal covers the block's writes\n";
    body.line() << "if (threadIdx.x == 0) portSignal(ctx, "
                << site(op, "MSCCLC_CHAN_PORT", c.index,
                        "MSCCLC_OPC_FIFO_PUSH")
                << ", args.fifo, args.portChannels[" << idx << "].proxyId);\n";
  }
  if (split && flush) {
    body.line() << "if (threadIdx.x == 0) portFlush(ctx, "
                << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FLUSH")
                << ", args.fifo, args.portChannels[" << idx << "].proxyId);\n";
    body.line() << "__syncthreads();\n";
  }
  body.close();
  return true;
}

bool KernelEmitter::emitSwitch(Operation *op, bool reduce,
                               const SwitchInfo &sw, ChunkAttr dstChunk,
                               ChunkAttr srcChunk) {
  auto it = sw.indexOnRank.find(rank);
  if (it == sw.indexOnRank.end()) {
    op->emitOpError() << "rank " << rank << " is not in the group of @"
                      << sw.name;
    return false;
  }
  // The multimem operand is written with the executing rank.
  auto src = local(op, srcChunk);
  auto dst = local(op, dstChunk);
  if (!src || !dst)
    return false;
  if (src->isPacket() || dst->isPacket()) {
    op->emitOpError() << "switch channels move plain data, not LL packets";
    return false;
  }
  Operand &mc = reduce ? *src : *dst;
  mc.via = Operand::Via::Switch;
  mc.index = it->second;
  body.open();
  int opened = openRange({*src, *dst});
  body.line() << (reduce ? "switchReduce(ctx, " : "switchBroadcast(ctx, ")
              << site(op, "MSCCLC_CHAN_SWITCH", it->second, "MSCCLC_OPC_NONE")
              << ", " << plainPtr(*dst) << ", " << plainPtr(*src)
              << ", r.size());\n";
  closeRange(opened);
  body.close();
  return true;
}

bool KernelEmitter::emitSignal(Operation *op, ArrayAttr channels) {
  body.line() << "__syncthreads(); // signal covers every thread's puts\n";
  unsigned lane = 0;
  for (Attribute ref : channels) {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return false;
    std::string idx = std::to_string(c->index);
    if (c->isLL) {
      body.line() << "// @" << c->name << " is LL: packets carry their flags\n";
      continue;
    }
    body.line() << "if (threadIdx.x == " << (lane++ % 32) << ") ";
    if (c->isPort) {
      ++syncOpCount;
      body.rest() << "portSignal(ctx, "
                  << site(op, "MSCCLC_CHAN_PORT", c->index,
                          "MSCCLC_OPC_FIFO_PUSH")
                  << ", args.fifo, args.portChannels[" << idx
                  << "].proxyId);\n";
    } else {
      body.rest() << "signalSemaphore(args.memoryChannels[" << idx
                  << "].peerSemaphore);\n";
    }
  }
  return true;
}

bool KernelEmitter::emitWait(Operation *op, ArrayAttr channels) {
  unsigned lane = 0;
  for (Attribute ref : channels) {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return false;
    if (c->isLL) {
      body.line() << "// @" << c->name << " is LL: packets carry their flags\n";
      continue;
    }
    std::string var = waitVar(*c);
    ++syncOpCount;
    body.line() << var << " += " << c->peerGroup << ";\n";
    body.line() << "if (threadIdx.x == " << (lane++ % 32) << ")\n";
    body.line() << "  waitSemaphore(ctx, "
                << site(op,
                        c->isPort ? "MSCCLC_CHAN_PORT" : "MSCCLC_CHAN_MEMORY",
                        c->index, "MSCCLC_OPC_WAIT")
                << ", "
                << (c->isPort ? "args.portChannels[" : "args.memoryChannels[")
                << c->index << "].semaphore, " << var << ");\n";
  }
  body.line() << "__syncthreads();\n";
  return true;
}

bool KernelEmitter::emitFlush(Operation *op, ArrayAttr channels) {
  unsigned lane = 0;
  for (Attribute ref : channels) {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return false;
    if (!c->isPort) {
      body.line() << "// @" << c->name
                  << ": memory channel puts are complete\n";
      continue;
    }
    ++syncOpCount;
    body.line() << "if (threadIdx.x == " << (lane++ % 32) << ") portFlush(ctx, "
                << site(op, "MSCCLC_CHAN_PORT", c->index, "MSCCLC_OPC_FLUSH")
                << ", args.fifo, args.portChannels[" << c->index
                << "].proxyId);\n";
  }
  body.line() << "__syncthreads();\n";
  return true;
}

bool KernelEmitter::emitPipeline(PipelineOp pipeline) {
  if (inPipeline) {
    pipeline.emitOpError() << "nested pipelines are not supported by the "
                              "CUDA backend";
    return false;
  }
  uses.chunkElems = true;
  body.open();
  body.line() << "const u64 pu = pipelineUnitElems(" << pipeline.getUnit()
              << "); // elements per iteration and chunk\n";
  body.line() << "const u64 trips = mscclc_pipeline_trips(ce, pu);\n";
  body.open("for (u64 t = 0; t < trips; ++t)");
  inPipeline = true;
  bool ok = true;
  for (Operation &inner : pipeline.getBody().front())
    ok &= emitOp(&inner);
  inPipeline = false;
  body.close();
  body.close();
  return ok;
}

bool KernelEmitter::emitOp(Operation *op) {
  comment(op);
  auto putLike = [&](auto put, bool signal, bool flush) -> bool {
    const ChannelInfo *c = channel(op, put.getChannelAttr());
    if (!c)
      return false;
    if (c->isPort)
      return emitPortPut(op, *c, put.getDst(), put.getSrc(), signal, flush);
    if (!emitMemoryPut(op, *c, put.getDst(), put.getSrc(), signal))
      return false;
    if (flush)
      body.line() << "__syncthreads(); // flush: memory puts are complete\n";
    return true;
  };
  // The local operands of `chunks`, or nullopt after an error.
  auto localAll =
      [&](ArrayAttr chunks) -> std::optional<SmallVector<Operand>> {
    SmallVector<Operand> out;
    for (Attribute a : chunks) {
      auto o = local(op, cast<ChunkAttr>(a));
      if (!o)
        return std::nullopt;
      out.push_back(*o);
    }
    return out;
  };

  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<PutOp>([&](PutOp put) { return putLike(put, false, false); })
      .Case<PutWithSignalOp>(
          [&](PutWithSignalOp put) { return putLike(put, true, false); })
      .Case<PutWithSignalAndFlushOp>([&](PutWithSignalAndFlushOp put) {
        return putLike(put, true, true);
      })
      .Case<GetOp>([&](GetOp get) {
        auto src = hbRemote(op, get.getChannelAttr(), get.getSrc());
        auto dst = local(op, get.getDst());
        return src && dst && emitElementwise(op, {*src}, {*dst});
      })
      .Case<SignalOp>(
          [&](SignalOp s) { return emitSignal(op, s.getChannels()); })
      .Case<WaitOp>([&](WaitOp w) { return emitWait(op, w.getChannels()); })
      .Case<FlushOp>([&](FlushOp f) { return emitFlush(op, f.getChannels()); })
      .Case<CopyOp>([&](CopyOp copy) {
        auto src = local(op, copy.getSrc());
        auto dst = local(op, copy.getDst());
        return src && dst && emitElementwise(op, {*src}, {*dst});
      })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        auto srcs = localAll(reduce.getSrcs());
        auto dst = local(op, reduce.getDst());
        return srcs && dst && emitElementwise(op, *srcs, {*dst});
      })
      .Case<ReadReduceOp>([&](ReadReduceOp rr) {
        auto srcs = localAll(rr.getSrcs());
        if (!srcs)
          return false;
        for (auto [ref, chunk] : llvm::zip(rr.getChannels(), rr.getRemotes())) {
          auto s = hbRemote(op, ref, cast<ChunkAttr>(chunk));
          if (!s)
            return false;
          srcs->push_back(*s);
        }
        auto dst = local(op, rr.getDst());
        return dst && emitElementwise(op, *srcs, {*dst});
      })
      .Case<ReducePutOp>([&](ReducePutOp rp) {
        auto srcs = localAll(rp.getSrcs());
        if (!srcs)
          return false;
        SmallVector<Operand> dsts;
        for (auto [ref, chunk] : llvm::zip(rp.getChannels(), rp.getDsts())) {
          const ChannelInfo *c = channel(op, ref);
          if (!c)
            return false;
          // The verifier admits memory channels only, LL ones into packet
          // buffers, HB ones into plain ones.
          auto d = remote(op, *c, cast<ChunkAttr>(chunk));
          if (!d)
            return false;
          dsts.push_back(*d);
        }
        if (auto store = rp.getStore()) {
          auto d = local(op, *store);
          if (!d)
            return false;
          dsts.push_back(*d);
        }
        return emitElementwise(op, *srcs, dsts);
      })
      .Case<SwitchReduceOp, SwitchBroadcastOp>([&](auto sw) {
        const SwitchInfo *s = info.lookupSwitch(sw.getChannel());
        if (!s) {
          op->emitOpError() << "unknown switch channel @" << sw.getChannel();
          return false;
        }
        return emitSwitch(op, isa<SwitchReduceOp>(op), *s, sw.getDst(),
                          sw.getSrc());
      })
      .Case<BarrierOp>([&](BarrierOp) {
        body.line() << "__syncthreads();\n";
        return true;
      })
      .Case<PipelineOp>([&](PipelineOp p) { return emitPipeline(p); })
      .Default([&](Operation *other) {
        other->emitOpError() << "is not supported by the CUDA backend";
        return false;
      });
}

} // namespace backend
} // namespace mscclc
