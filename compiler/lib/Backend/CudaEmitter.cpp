//===- CudaEmitter.cpp - mscl.program to CUDA C++, one kernel per rank ---===//
//
// Every rank becomes an `extern "C" __global__` kernel whose body is a
// `switch (blockIdx.x)` over the rank's thread blocks; each case is the
// block's operations as straight-line calls into the device library
// (runtime/include/mscclc/device), with every chunk offset an expression of
// the run-time element count. Nothing is interpreted at run time.
//
// Ranges. An operation moves n = min(operand sizes) elements. Three things
// cut that range, in this order:
//  - segments: when an operand is a run of several packet chunks, or a run
//    inside a pipeline, the operation is done one chunk (ce elements) at a
//    time, so packet pointers always start at a chunk's first packet and a
//    pipeline slices every chunk it names (execution-model.md);
//  - pipelines: iteration t takes elements [t*pu, (t+1)*pu) of the segment;
//  - thread-block groups: block g of G takes slice g, cut at 16 bytes.
//
//===----------------------------------------------------------------------===//

#include "ProgramInfo.h"
#include "mscclc/Backend/Backend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cctype>
#include <set>

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {
namespace {

/// Above this many data operations in one kernel, the generated code asks
/// for out-of-line data loops (MSCCLC_OUTLINE_OPS): inlined, each operation
/// costs ptxas tens of milliseconds (2PA-HB with 32 instances: 16 s of
/// NVRTC on the GPU host, 1.8 s outlined), while a call costs about a
/// microsecond of latency in small kernels, where inlining stays.
constexpr int64_t kOutlineDataOps = 8;

/// The .mscl line of a location (0 when unknown).
unsigned locationLine(Location loc, std::string *file = nullptr) {
  unsigned line = 0;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      line = fileLoc.getLine();
      if (file)
        *file = llvm::sys::path::filename(fileLoc.getFilename().getValue()).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return line;
}

/// One chunk operand, ready to be turned into pointer expressions.
struct Operand {
  const BufferInfo *buffer = nullptr;
  ChunkAttr chunk;
  /// How the operand is reached: locally, through memory channel `index`
  /// (peer buffers) or through switch channel `index` (multimem address).
  enum class Via { Local, Memory, Switch } via = Via::Local;
  int index = 0;

  bool isPacket() const { return buffer->packet; }
  bool isUser() const { return buffer->kind != BufferKind::scratch; }
};

class KernelEmitter {
public:
  KernelEmitter(const ProgramInfo &info, const CudaOptions &options,
                int64_t rank)
      : info(info), options(options), rank(rank),
        rankInfo(info.rankInfos[rank]) {}

  /// Emits the kernel of `rank` to `os`; false after an error.
  bool emit(llvm::raw_ostream &os);

  /// Elementwise operations in the emitted kernel.
  int64_t dataOps() const { return dataOpCount; }

private:
  // Output helpers.
  llvm::raw_ostream &line() {
    body.indent(indent);
    return body;
  }
  void comment(Operation *op);

  bool emitBlock(ThreadBlockOp tb);
  bool emitOp(Operation *op);
  bool emitPipeline(PipelineOp pipeline);
  bool emitElementwise(Operation *op, ArrayRef<Operand> srcs,
                       ArrayRef<Operand> dsts);
  bool emitPortPut(Operation *op, const ChannelInfo &channel, ChunkAttr dst,
                   ChunkAttr src, bool signal, bool flush);
  bool emitSwitch(Operation *op, bool reduce, const SwitchInfo &sw,
                  ChunkAttr dst, ChunkAttr src);
  bool emitSignal(Operation *op, ArrayAttr channels);
  bool emitWait(Operation *op, ArrayAttr channels);
  bool emitFlush(Operation *op, ArrayAttr channels);

  /// Resolves a chunk (local, or remote through a channel) to an operand.
  std::optional<Operand> local(Operation *op, ChunkAttr chunk);
  std::optional<Operand> remote(Operation *op, const ChannelInfo &channel,
                                ChunkAttr chunk);
  const ChannelInfo *channel(Operation *op, Attribute ref);

  // Expressions.
  std::string sizeExpr(const Operand &o) const;
  std::string startExpr(const Operand &o) const; ///< first element of the run
  std::string baseExpr(const Operand &o) const;  ///< T* of element 0
  std::string plainPtr(const Operand &o) const;  ///< T* at r.begin
  std::string packetPtr(const Operand &o) const; ///< LL16Packet* at r.begin
  std::string byteOffset(const Operand &o) const; ///< of r.begin in buffer
  std::string site(Operation *op, const char *kind, int channel,
                   const char *opc) const;
  /// Opens the range scope of an operation over `operands`; returns the
  /// number of braces to close.
  int openRange(ArrayRef<Operand> operands);
  void closeRange(int opened);

  const ProgramInfo &info;
  const CudaOptions &options;
  int64_t rank;
  const RankInfo &rankInfo;

  std::string bodyText;
  llvm::raw_string_ostream body{bodyText};
  unsigned indent = 0;

  // State of the block being emitted.
  int64_t groupSize = 1;
  bool inPipeline = false;
  bool segmented = false;
  std::vector<std::string> waitVars; ///< declared wait counter variables
  int64_t dataOpCount = 0;
};

void KernelEmitter::comment(Operation *op) {
  std::string file;
  unsigned lineNo = locationLine(op->getLoc(), &file);
  std::string text;
  llvm::raw_string_ostream textOs(text);
  op->print(textOs, OpPrintingFlags().skipRegions().elideLargeElementsAttrs());
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (lineNo)
    line() << "// " << file << ":" << lineNo << ": " << text << "\n";
  else
    line() << "// " << text << "\n";
}

std::string KernelEmitter::site(Operation *op, const char *kind, int channel,
                                const char *opc) const {
  return "Site{" + std::to_string(locationLine(op->getLoc())) + ", " + kind +
         ", " + std::to_string(channel) + ", " + opc + "}";
}

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

std::string KernelEmitter::sizeExpr(const Operand &o) const {
  int64_t i = o.chunk.getIndex(), c = o.chunk.getCount();
  if (o.isUser())
    return i == 0 ? "ub(" + std::to_string(c) + ")"
                  : "(ub(" + std::to_string(i + c) + ") - ub(" +
                        std::to_string(i) + "))";
  return c == 1 ? "ce" : std::to_string(c) + " * ce";
}

std::string KernelEmitter::startExpr(const Operand &o) const {
  int64_t i = o.chunk.getIndex();
  if (i == 0)
    return "0";
  if (o.isUser())
    return "ub(" + std::to_string(i) + ")";
  return std::to_string(i) + " * ce";
}

std::string KernelEmitter::baseExpr(const Operand &o) const {
  std::string idx = std::to_string(o.index);
  std::string name = sanitize(o.buffer->name);
  switch (o.via) {
  case Operand::Via::Local:
    if (o.buffer->kind == BufferKind::input)
      return "in";
    if (o.buffer->kind == BufferKind::output)
      return "out";
    return "s_" + name;
  case Operand::Via::Memory: {
    std::string ch = "args.memoryChannels[" + idx + "]";
    if (o.buffer->kind == BufferKind::input)
      return "static_cast<T *>(" + ch + ".peerInput)";
    if (o.buffer->kind == BufferKind::output)
      return "static_cast<T *>(" + ch + ".peerOutput)";
    return "at(" + ch + ".peerScratch, off_" + name + ")";
  }
  case Operand::Via::Switch: {
    std::string ch = "args.switchChannels[" + idx + "]";
    if (o.buffer->kind == BufferKind::input)
      return "static_cast<T *>(" + ch + ".mcInput)";
    if (o.buffer->kind == BufferKind::output)
      return "static_cast<T *>(" + ch + ".mcOutput)";
    return "at(" + ch + ".mcScratch, off_" + name + ")";
  }
  }
  return "";
}

std::string KernelEmitter::plainPtr(const Operand &o) const {
  std::string start = startExpr(o);
  return baseExpr(o) + (start == "0" ? "" : " + " + start) + " + r.begin";
}

std::string KernelEmitter::packetPtr(const Operand &o) const {
  std::string name = sanitize(o.buffer->name);
  std::string base =
      o.via == Operand::Via::Local
          ? "pk_" + name
          : "packetsAt(args.memoryChannels[" + std::to_string(o.index) +
                "].peerScratch, off_" + name + ") + par * " +
                std::to_string(o.buffer->chunks) + " * ppc";
  int64_t index = o.chunk.getIndex();
  std::string chunk = std::to_string(index);
  if (segmented)
    chunk = index == 0 ? "k" : "(" + chunk + " + k)";
  std::string rel = segmented ? "(r.begin - lo)" : "r.begin";
  std::string chunkTerm =
      !segmented && index == 0 ? "" : " + " + chunk + " * ppc";
  return base + chunkTerm + " + " + rel + " * sizeof(T) / 8";
}

std::string KernelEmitter::byteOffset(const Operand &o) const {
  std::string start = startExpr(o);
  std::string elems = start == "0" ? "r.begin" : "(" + start + " + r.begin)";
  std::string bytes = elems + " * sizeof(T)";
  if (!o.isUser())
    bytes = "off_" + sanitize(o.buffer->name) + " + " + bytes;
  return bytes;
}

int KernelEmitter::openRange(ArrayRef<Operand> operands) {
  std::string n;
  std::set<std::string> seen;
  for (const Operand &o : operands) {
    std::string size = sizeExpr(o);
    if (!seen.insert(size).second)
      continue;
    n = n.empty() ? size : "umin(" + n + ", " + size + ")";
  }
  line() << "const u64 n = " << n << ";\n";
  int64_t maxRun = 1;
  bool packetRun = false;
  for (const Operand &o : operands) {
    maxRun = std::max<int64_t>(maxRun, o.chunk.getCount());
    packetRun |= o.isPacket() && o.chunk.getCount() > 1;
  }
  int opened = 0;
  segmented = packetRun || (inPipeline && maxRun > 1);
  if (segmented) {
    line() << "for (u64 k = 0; k < " << maxRun
           << "; ++k) { // one chunk at a time\n";
    indent += 2;
    ++opened;
    line() << "const u64 lo = umin(n, k * ce), hi = umin(n, lo + ce);\n";
    if (inPipeline)
      line() << "Range r = {umin(hi, lo + t * pu), umin(hi, lo + (t + 1) * "
                "pu)};\n";
    else
      line() << "Range r = {lo, hi};\n";
  } else if (inPipeline) {
    line() << "Range r = pipelineSlice(n, t, pu);\n";
  } else {
    line() << "Range r = {0, n};\n";
  }
  if (groupSize > 1)
    line() << "r = groupSlice(r, g, " << groupSize << ");\n";
  return opened;
}

void KernelEmitter::closeRange(int opened) {
  for (int i = 0; i < opened; ++i) {
    indent -= 2;
    line() << "}\n";
  }
  segmented = false;
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
  SmallVector<Operand> all(srcs.begin(), srcs.end());
  all.append(dsts.begin(), dsts.end());
  line() << "{\n";
  indent += 2;
  int opened = openRange(all);
  SmallVector<std::string> plainSrc, packetSrc, plainDst, packetDst;
  for (const Operand &s : srcs)
    (s.isPacket() ? packetSrc : plainSrc).push_back(s.isPacket() ? packetPtr(s)
                                                                 : plainPtr(s));
  for (const Operand &d : dsts)
    (d.isPacket() ? packetDst : plainDst).push_back(d.isPacket() ? packetPtr(d)
                                                                 : plainPtr(d));
  auto list = [](ArrayRef<std::string> items) {
    return "{" + llvm::join(items, ", ") + "}";
  };
  line() << "const Operands<" << plainSrc.size() << ", " << packetSrc.size()
         << ", " << plainDst.size() << ", " << packetDst.size() << "> o = {\n";
  line() << "    " << list(plainSrc) << ",\n";
  line() << "    " << list(packetSrc) << ",\n";
  line() << "    " << list(plainDst) << ",\n";
  line() << "    " << list(packetDst) << "};\n";
  ++dataOpCount;
  line() << "elementwise(ctx, "
         << site(op, "MSCCLC_CHAN_NONE", 0,
                   packetSrc.empty() ? "MSCCLC_OPC_NONE" : "MSCCLC_OPC_LL_READ")
         << ", o, r.size());\n";
  closeRange(opened);
  indent -= 2;
  line() << "}\n";
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
  line() << "{\n";
  indent += 2;
  int opened = openRange({*src, *dst});
  // A segmented put (one chunk at a time) signals and flushes once, after
  // its last segment.
  bool split = segmented && (signal || flush);
  if (signal && !split)
    line() << "__syncthreads(); // the signal covers the block's writes\n";
  std::string idx = std::to_string(c.index);
  line() << "if (threadIdx.x == 0) {\n";
  line() << "  const u64 last = portPut(ctx, "
         << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FIFO_PUSH")
         << ", args.fifo,\n";
  line() << "      args.portChannels[" << idx << "].proxyId, "
         << (split ? "0" : extra) << ",\n";
  line() << "      " << bufferId(*dst) << ", " << byteOffset(*dst) << ",\n";
  line() << "      " << bufferId(*src) << ", " << byteOffset(*src) << ",\n";
  line() << "      r.size() * sizeof(T));\n";
  if (flush && !split)
    line() << "  fifoSync(ctx, "
           << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FLUSH")
           << ", args.fifo, last);\n";
  else
    line() << "  (void)last;\n";
  line() << "}\n";
  if (flush && !split)
    line() << "__syncthreads();\n";
  closeRange(opened);
  if (split && signal) {
    line() << "__syncthreads(); // the signal covers the block's writes\n";
    line() << "if (threadIdx.x == 0) portSignal(ctx, "
           << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FIFO_PUSH")
           << ", args.fifo, args.portChannels[" << idx << "].proxyId);\n";
  }
  if (split && flush) {
    line() << "if (threadIdx.x == 0) portFlush(ctx, "
           << site(op, "MSCCLC_CHAN_PORT", c.index, "MSCCLC_OPC_FLUSH")
           << ", args.fifo, args.portChannels[" << idx << "].proxyId);\n";
    line() << "__syncthreads();\n";
  }
  indent -= 2;
  line() << "}\n";
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
  line() << "{\n";
  indent += 2;
  int opened = openRange({*src, *dst});
  line() << (reduce ? "switchReduce(ctx, " : "switchBroadcast(ctx, ")
         << site(op, "MSCCLC_CHAN_SWITCH", it->second, "MSCCLC_OPC_NONE")
         << ", " << plainPtr(*dst) << ", " << plainPtr(*src)
         << ", r.size());\n";
  closeRange(opened);
  indent -= 2;
  line() << "}\n";
  return true;
}

/// Name of the register that holds a channel's expected semaphore value.
static std::string waitVar(const ChannelInfo &c) {
  return (c.isPort ? "wp" : "wm") + std::to_string(c.index);
}

bool KernelEmitter::emitSignal(Operation *op, ArrayAttr channels) {
  line() << "__syncthreads(); // signal covers every thread's puts\n";
  unsigned lane = 0;
  for (Attribute ref : channels) {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return false;
    std::string idx = std::to_string(c->index);
    if (c->isLL) {
      line() << "// @" << c->name << " is LL: packets carry their flags\n";
      continue;
    }
    line() << "if (threadIdx.x == " << (lane++ % 32) << ") ";
    if (c->isPort)
      body << "portSignal(ctx, "
           << site(op, "MSCCLC_CHAN_PORT", c->index, "MSCCLC_OPC_FIFO_PUSH")
           << ", args.fifo, args.portChannels[" << idx << "].proxyId);\n";
    else
      body << "signalSemaphore(args.memoryChannels[" << idx
           << "].peerSemaphore);\n";
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
      line() << "// @" << c->name << " is LL: packets carry their flags\n";
      continue;
    }
    std::string var = waitVar(*c);
    std::string idx = std::to_string(c->index);
    line() << var << " += " << c->peerGroup << ";\n";
    line() << "if (threadIdx.x == " << (lane++ % 32) << ")\n";
    line() << "  waitSemaphore(ctx, "
           << site(op, c->isPort ? "MSCCLC_CHAN_PORT" : "MSCCLC_CHAN_MEMORY",
                   c->index, "MSCCLC_OPC_WAIT")
           << ", " << (c->isPort ? "args.portChannels[" : "args.memoryChannels[")
           << idx << "].semaphore, " << var << ");\n";
  }
  line() << "__syncthreads();\n";
  return true;
}

bool KernelEmitter::emitFlush(Operation *op, ArrayAttr channels) {
  unsigned lane = 0;
  for (Attribute ref : channels) {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return false;
    if (!c->isPort) {
      line() << "// @" << c->name << ": memory channel puts are complete\n";
      continue;
    }
    line() << "if (threadIdx.x == " << (lane++ % 32) << ") portFlush(ctx, "
           << site(op, "MSCCLC_CHAN_PORT", c->index, "MSCCLC_OPC_FLUSH")
           << ", args.fifo, args.portChannels[" << c->index << "].proxyId);\n";
  }
  line() << "__syncthreads();\n";
  return true;
}

bool KernelEmitter::emitPipeline(PipelineOp pipeline) {
  if (inPipeline) {
    pipeline.emitOpError() << "nested pipelines are not supported by the "
                              "CUDA backend";
    return false;
  }
  line() << "{\n";
  indent += 2;
  line() << "const u64 pu = pipelineUnitElems(" << pipeline.getUnit()
         << "); // elements per iteration and chunk\n";
  line() << "const u64 trips = (ce + pu - 1) / pu;\n";
  line() << "for (u64 t = 0; t < trips; ++t) {\n";
  indent += 2;
  inPipeline = true;
  bool ok = true;
  for (Operation &inner : pipeline.getBody().front())
    ok &= emitOp(&inner);
  inPipeline = false;
  indent -= 2;
  line() << "}\n";
  indent -= 2;
  line() << "}\n";
  return ok;
}

bool KernelEmitter::emitOp(Operation *op) {
  comment(op);
  // Put-like operations through memory channels.
  auto memoryPut = [&](const ChannelInfo &c, ChunkAttr dstChunk,
                       ChunkAttr srcChunk, bool signal) -> bool {
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
      line() << "__syncthreads();\n";
      line() << "if (threadIdx.x == 0) signalSemaphore(args.memoryChannels["
             << c.index << "].peerSemaphore);\n";
    }
    return true;
  };
  auto putLike = [&](auto put, bool signal, bool flush) -> bool {
    const ChannelInfo *c = channel(op, put.getChannelAttr());
    if (!c)
      return false;
    if (c->isPort)
      return emitPortPut(op, *c, put.getDst(), put.getSrc(), signal, flush);
    if (!memoryPut(*c, put.getDst(), put.getSrc(), signal))
      return false;
    if (flush)
      line() << "__syncthreads(); // flush: memory puts are complete\n";
    return true;
  };
  auto hbRemote = [&](Attribute ref, ChunkAttr chunk) -> std::optional<Operand> {
    const ChannelInfo *c = channel(op, ref);
    if (!c)
      return std::nullopt;
    if (c->isPort || c->isLL) {
      op->emitOpError() << "reads peer memory through @" << c->name
                        << ", which needs an HB memory channel";
      return std::nullopt;
    }
    return remote(op, *c, chunk);
  };

  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<PutOp>([&](PutOp put) { return putLike(put, false, false); })
      .Case<PutWithSignalOp>(
          [&](PutWithSignalOp put) { return putLike(put, true, false); })
      .Case<PutWithSignalAndFlushOp>([&](PutWithSignalAndFlushOp put) {
        return putLike(put, true, true);
      })
      .Case<GetOp>([&](GetOp get) {
        auto src = hbRemote(get.getChannelAttr(), get.getSrc());
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
        SmallVector<Operand> srcs;
        for (Attribute a : reduce.getSrcs()) {
          auto s = local(op, cast<ChunkAttr>(a));
          if (!s)
            return false;
          srcs.push_back(*s);
        }
        auto dst = local(op, reduce.getDst());
        return dst && emitElementwise(op, srcs, {*dst});
      })
      .Case<ReadReduceOp>([&](ReadReduceOp rr) {
        SmallVector<Operand> srcs;
        for (Attribute a : rr.getSrcs()) {
          auto s = local(op, cast<ChunkAttr>(a));
          if (!s)
            return false;
          srcs.push_back(*s);
        }
        for (auto [ref, chunk] : llvm::zip(rr.getChannels(), rr.getRemotes())) {
          auto s = hbRemote(ref, cast<ChunkAttr>(chunk));
          if (!s)
            return false;
          srcs.push_back(*s);
        }
        auto dst = local(op, rr.getDst());
        return dst && emitElementwise(op, srcs, {*dst});
      })
      .Case<ReducePutOp>([&](ReducePutOp rp) {
        SmallVector<Operand> srcs, dsts;
        for (Attribute a : rp.getSrcs()) {
          auto s = local(op, cast<ChunkAttr>(a));
          if (!s)
            return false;
          srcs.push_back(*s);
        }
        for (auto [ref, chunk] : llvm::zip(rp.getChannels(), rp.getDsts())) {
          const ChannelInfo *c = channel(op, ref);
          if (!c)
            return false;
          if (c->isPort) {
            op->emitOpError() << "reduce_put needs memory channels; @"
                              << c->name << " is a port channel";
            return false;
          }
          auto d = remote(op, *c, cast<ChunkAttr>(chunk));
          if (!d)
            return false;
          if (c->isLL != d->isPacket()) {
            op->emitOpError() << "@" << c->name
                              << (c->isLL ? " (LL) must write a packet buffer"
                                          : " (HB) must not write a packet "
                                            "buffer");
            return false;
          }
          dsts.push_back(*d);
        }
        if (auto store = rp.getStore()) {
          auto d = local(op, *store);
          if (!d)
            return false;
          dsts.push_back(*d);
        }
        return emitElementwise(op, srcs, dsts);
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
        line() << "__syncthreads();\n";
        return true;
      })
      .Case<PipelineOp>([&](PipelineOp p) { return emitPipeline(p); })
      .Default([&](Operation *other) {
        other->emitOpError() << "is not supported by the CUDA backend";
        return false;
      });
}

bool KernelEmitter::emitBlock(ThreadBlockOp tb) {
  int64_t first = static_cast<int64_t>(tb.getId());
  groupSize = static_cast<int64_t>(tb.getGroup());
  if (groupSize == 1) {
    line() << "case " << first << ": {\n";
  } else {
    line() << "case " << first;
    for (int64_t b = first + 1; b < first + groupSize; ++b)
      body << ": case " << b;
    body << ": { // thread-block group of " << groupSize << "\n";
  }
  indent += 2;
  if (groupSize > 1)
    line() << "const u32 g = blockIdx.x - " << first
           << "; // slice of every operation\n";
  // Expected semaphore values of the channels this block waits on.
  SmallVector<const ChannelInfo *> waited;
  for (auto *list : {&rankInfo.memory, &rankInfo.port})
    for (const ChannelInfo *c : *list)
      if (c->waits && c->block == first)
        waited.push_back(c);
  std::string slotSuffix = groupSize > 1 ? " + g" : "";
  for (const ChannelInfo *c : waited)
    line() << "u64 " << waitVar(*c) << " = loadWaitCounter(args, "
           << c->waitSlot << slotSuffix << "); // @" << c->name << "\n";
  bool ok = true;
  for (Operation &op : tb.getBody().front())
    ok &= emitOp(&op);
  line() << "endBlock(ctx, args);\n";
  for (const ChannelInfo *c : waited)
    line() << "storeWaitCounter(args, " << c->waitSlot << slotSuffix << ", "
           << waitVar(*c) << ");\n";
  line() << "return;\n";
  indent -= 2;
  line() << "}\n";
  groupSize = 1;
  return ok;
}

bool KernelEmitter::emit(llvm::raw_ostream &os) {
  RankOp rankOp;
  ProgramOp program = info.program;
  for (Operation &op : program.getBodyBlock())
    if (auto r = dyn_cast<RankOp>(op))
      if (static_cast<int64_t>(r.getRank()) == rank)
        rankOp = r;

  indent = 2;
  bool ok = true;
  if (rankOp)
    for (Operation &op : rankOp.getBody().front())
      if (auto tb = dyn_cast<ThreadBlockOp>(op))
        ok &= emitBlock(tb);
  if (!ok)
    return false;

  // Declare only what the blocks use, so the source compiles warning-free.
  auto uses = [&](StringRef word) {
    size_t pos = 0;
    while ((pos = bodyText.find(word.str(), pos)) != std::string::npos) {
      size_t end = pos + word.size();
      bool startOk = pos == 0 || !(std::isalnum(static_cast<unsigned char>(
                                       bodyText[pos - 1])) ||
                                   bodyText[pos - 1] == '_');
      bool endOk = end >= bodyText.size() ||
                   !(std::isalnum(static_cast<unsigned char>(bodyText[end])) ||
                     bodyText[end] == '_');
      if (startOk && endOk)
        return true;
      pos = end;
    }
    return false;
  };
  int64_t blocks = std::max<int64_t>(1, rankInfo.blocks);
  std::string k = std::to_string(info.chunks);
  os << "extern \"C\" __global__ void __launch_bounds__(1024)\n"
     << kernelName(info, rank)
     << "(const __grid_constant__ MscclcKernelArgs args) {\n";
  os << "  if (!checkArgs(args, " << rank << ", " << info.ranks << ", "
     << blocks << "))\n    return;\n";
  os << "  Ctx ctx(args, " << rank << ");\n";
  os << "  beginBlock(ctx, args);\n";
  os << "  const u64 count = args.count;\n";
  int lastOffset = -1;
  bool anyPacket = false;
  for (const BufferInfo *s : info.scratch) {
    std::string name = sanitize(s->name);
    if (uses("off_" + name) || uses("s_" + name) || uses("pk_" + name))
      lastOffset = s->scratchIndex;
    anyPacket |= uses("pk_" + name);
  }
  if (uses("ce"))
    os << "  const u64 ce = mscclc_scratch_chunk_elems(count, " << k
       << "); // scratch chunk elements\n";
  if (uses("ppc") || anyPacket)
    os << "  const u64 ppc = mscclc_packets_per_chunk(count, " << k
       << ", sizeof(T)); // LL16 packets per chunk\n";
  if (uses("par") || anyPacket)
    os << "  const u64 par = packetParity(ctx); // packet buffer half\n";
  if (uses("ub"))
    os << "  auto ub = [count](u64 j) { return mscclc_chunk_begin(j, count, "
       << k << "); };\n";
  if (uses("in"))
    os << "  T *const in = static_cast<T *>(args.input);\n";
  if (uses("out"))
    os << "  T *const out = static_cast<T *>(args.output);\n";
  for (int i = 0; i <= lastOffset; ++i) {
    const BufferInfo *s = info.scratch[i];
    std::string name = sanitize(s->name);
    os << "  const u64 off_" << name << " = ";
    if (i == 0)
      os << "0;";
    else {
      const BufferInfo *prev = info.scratch[i - 1];
      os << "mscclc_align_scratch(off_" << sanitize(prev->name)
         << " + mscclc_scratch_buffer_bytes(" << prev->chunks << ", "
         << (prev->packet ? 1 : 0) << ", count, " << k << ", sizeof(T)));";
    }
    os << " // scratch " << s->name << "[" << s->chunks << "]"
       << (s->packet ? " packet" : "") << "\n";
  }
  for (const BufferInfo *s : info.scratch) {
    std::string name = sanitize(s->name);
    if (uses("s_" + name))
      os << "  T *const s_" << name << " = at(args.scratch, off_" << name
         << ");\n";
    if (uses("pk_" + name))
      os << "  LL16Packet *const pk_" << name
         << " = packetsAt(args.scratch, off_" << name << ") + par * "
         << s->chunks << " * ppc;\n";
  }
  os << "  switch (blockIdx.x) {\n";
  os << bodyText;
  os << "  default:\n    break;\n  }\n";
  os << "  endBlock(ctx, args);\n";
  os << "}\n";
  return true;
}

/// Inserts the device headers' text in dependency order (each once).
void embedHeader(llvm::StringRef name, llvm::raw_ostream &os,
                 std::set<std::string> &done) {
  if (!done.insert(name.str()).second)
    return;
  for (const EmbeddedHeader &h : getDeviceHeaders()) {
    if (name != h.name)
      continue;
    llvm::StringRef text(h.text);
    llvm::SmallVector<llvm::StringRef> lines;
    text.split(lines, '\n');
    for (llvm::StringRef l : lines) {
      llvm::StringRef trimmed = l.trim();
      if (trimmed.starts_with("#include \"")) {
        llvm::StringRef inc = trimmed.drop_front(10).take_until(
            [](char c) { return c == '"'; });
        embedHeader(inc, os, done);
        continue;
      }
      os << l << "\n";
    }
  }
}

} // namespace
} // namespace backend

mscl::ProgramOp getSingleProgram(ModuleOp module) {
  mscl::ProgramOp found;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto program = dyn_cast<mscl::ProgramOp>(op)) {
      if (found) {
        program.emitError() << "the CUDA backend compiles one mscl.program "
                               "per module";
        return {};
      }
      found = program;
    }
  }
  if (!found)
    emitError(module.getLoc()) << "no mscl.program to compile";
  return found;
}

LogicalResult emitCuda(mscl::ProgramOp program, llvm::raw_ostream &out,
                       const CudaOptions &options) {
  using namespace backend;
  // Nothing is written unless every kernel compiled.
  std::string buffer;
  llvm::raw_string_ostream os(buffer);
  std::optional<ProgramInfo> info = ProgramInfo::build(program);
  if (!info)
    return failure();
  std::string file;
  locationLine(program.getLoc(), &file);
  os << "// Generated by mscclc from " << (file.empty() ? "<unknown>" : file)
     << ": algorithm " << info->name << ", "
     << stringifyCollectiveKind(program.getCollective()) << ", "
     << info->ranks << " ranks, " << info->chunks << " chunks.\n"
     << "// One kernel per rank; element type MSCCLC_DTYPE and reduction "
        "MSCCLC_REDOP\n"
     << "// are chosen when compiling (docs/kernel-abi.md).\n";
  // Every kernel first: the prelude depends on their size.
  bool ok = true;
  int64_t maxDataOps = 0;
  std::string kernels;
  llvm::raw_string_ostream ks(kernels);
  for (int64_t r = 0; r < info->ranks; ++r) {
    std::string text;
    llvm::raw_string_ostream kernel(text);
    KernelEmitter emitter(*info, options, r);
    if (!emitter.emit(kernel)) {
      ok = false;
      continue;
    }
    maxDataOps = std::max(maxDataOps, emitter.dataOps());
    // -DMSCCLC_RANK=r compiles only rank r's kernel (faster JIT).
    ks << "#if !defined(MSCCLC_RANK) || MSCCLC_RANK == " << r << "\n"
       << text << "#endif // rank " << r << "\n\n";
  }
  if (!ok)
    return failure();
  if (maxDataOps > kOutlineDataOps)
    os << "// " << maxDataOps << " data operations in a kernel: data loops "
       << "out of line, for compile time.\n"
       << "#ifndef MSCCLC_OUTLINE_OPS\n#define MSCCLC_OUTLINE_OPS 1\n#endif\n";
  if (options.embedHeaders) {
    std::set<std::string> done;
    embedHeader("mscclc/device/Device.h", os, done);
  } else {
    os << "#include \"mscclc/device/Device.h\"\n";
  }
  if (info->usesSwitch)
    os << "\n#if !MSCCLC_SWITCH_SUPPORTED\n"
       << "#error \"this program uses a SwitchChannel: MSCCLC_DTYPE must be "
          "f32, f16 or bf16 and MSCCLC_REDOP sum\"\n"
       << "#endif\n"
       << "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n"
       << "#error \"SwitchChannel (multimem) needs sm_90 or newer\"\n"
       << "#endif\n";
  os << "\nusing namespace mscclc::dev;\n\n" << kernels;
  os << "/// avg = sum, then this over the output with factor 1/nranks.\n"
     << "extern \"C\" __global__ void " << scaleKernelName(*info)
     << "(void *buf, unsigned long long n, double factor) {\n"
     << "  scaleBuffer(buf, n, factor);\n}\n";
  out << buffer;
  return success();
}

} // namespace mscclc
