//===- Operands.cpp - Pointer and size expressions of chunk operands -----===//
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
// User buffers are cut into chunks by ub(j) (uneven when the count does not
// divide); scratch chunks are ce elements each. Every builder records the
// kernel-wide names it writes in `uses`.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <set>

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {

std::string KernelEmitter::sizeExpr(const Operand &o) {
  int64_t i = o.chunk.getIndex(), c = o.chunk.getCount();
  if (o.isUser()) {
    uses.userBounds = true;
    return i == 0 ? "ub(" + std::to_string(c) + ")"
                  : "(ub(" + std::to_string(i + c) + ") - ub(" +
                        std::to_string(i) + "))";
  }
  uses.chunkElems = true;
  return c == 1 ? "ce" : std::to_string(c) + " * ce";
}

std::string KernelEmitter::startExpr(const Operand &o) {
  int64_t i = o.chunk.getIndex();
  if (i == 0)
    return "0";
  if (o.isUser()) {
    uses.userBounds = true;
    return "ub(" + std::to_string(i) + ")";
  }
  uses.chunkElems = true;
  return std::to_string(i) + " * ce";
}

std::string KernelEmitter::baseExpr(const Operand &o) {
  std::string idx = std::to_string(o.index);
  std::string name = sanitize(o.buffer->name);
  BufferKind kind = o.buffer->kind;
  switch (o.via) {
  case Operand::Via::Local:
    if (kind == BufferKind::input) {
      uses.input = true;
      return "in";
    }
    if (kind == BufferKind::output) {
      uses.output = true;
      return "out";
    }
    uses.scratchPlain.insert(o.buffer->scratchIndex);
    return "s_" + name;
  case Operand::Via::Memory:
  case Operand::Via::Switch: {
    // A peer's buffers through a memory channel, or the buffers' multimem
    // addresses through a switch channel.
    bool viaSwitch = o.via == Operand::Via::Switch;
    std::string ch = std::string(viaSwitch ? "args.switchChannels["
                                           : "args.memoryChannels[") +
                     idx + "]" + (viaSwitch ? ".mc" : ".peer");
    if (kind == BufferKind::input)
      return "static_cast<T *>(" + ch + "Input)";
    if (kind == BufferKind::output)
      return "static_cast<T *>(" + ch + "Output)";
    uses.scratchOffsets.insert(o.buffer->scratchIndex);
    return "at(" + ch + "Scratch, off_" + name + ")";
  }
  }
  llvm_unreachable("unknown operand access");
}

std::string KernelEmitter::plainPtr(const Operand &o) {
  std::string start = startExpr(o);
  return baseExpr(o) + (start == "0" ? "" : " + " + start) + " + r.begin";
}

std::string KernelEmitter::packetPtr(const Operand &o) {
  std::string name = sanitize(o.buffer->name);
  std::string base;
  if (o.via == Operand::Via::Local) {
    uses.scratchPackets.insert(o.buffer->scratchIndex);
    base = "pk_" + name;
  } else {
    uses.scratchOffsets.insert(o.buffer->scratchIndex);
    uses.parity = uses.packetsPerChunk = true;
    base = "packetsAt(args.memoryChannels[" + std::to_string(o.index) +
           "].peerScratch, off_" + name + ") + par * " +
           std::to_string(o.buffer->chunks) + " * ppc";
  }
  int64_t index = o.chunk.getIndex();
  std::string chunk = std::to_string(index);
  if (segmented)
    chunk = index == 0 ? "k" : "(" + chunk + " + k)";
  std::string rel = segmented ? "(r.begin - lo)" : "r.begin";
  std::string chunkTerm;
  if (segmented || index != 0) {
    uses.packetsPerChunk = true;
    chunkTerm = " + " + chunk + " * ppc";
  }
  return base + chunkTerm + " + " + rel + " * sizeof(T) / MSCCLC_LL_DATA_BYTES";
}

std::string KernelEmitter::byteOffset(const Operand &o) {
  std::string start = startExpr(o);
  std::string elems = start == "0" ? "r.begin" : "(" + start + " + r.begin)";
  std::string bytes = elems + " * sizeof(T)";
  if (!o.isUser()) {
    uses.scratchOffsets.insert(o.buffer->scratchIndex);
    bytes = "off_" + sanitize(o.buffer->name) + " + " + bytes;
  }
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
  body.line() << "const u64 n = " << n << ";\n";
  int64_t maxRun = 1;
  bool packetRun = false;
  for (const Operand &o : operands) {
    maxRun = std::max<int64_t>(maxRun, o.chunk.getCount());
    packetRun |= o.isPacket() && o.chunk.getCount() > 1;
  }
  int opened = 0;
  segmented = packetRun || (inPipeline && maxRun > 1);
  if (segmented) {
    uses.chunkElems = true;
    body.open("for (u64 k = 0; k < " + std::to_string(maxRun) + "; ++k)",
              "one chunk at a time");
    ++opened;
    body.line() << "const u64 lo = umin(n, k * ce), hi = umin(n, lo + ce);\n";
    if (inPipeline)
      body.line() << "Range r = {umin(hi, lo + t * pu), umin(hi, lo + (t + 1) "
                     "* pu)};\n";
    else
      body.line() << "Range r = {lo, hi};\n";
  } else if (inPipeline) {
    body.line() << "Range r = pipelineSlice(n, t, pu);\n";
  } else {
    body.line() << "Range r = {0, n};\n";
  }
  if (groupSize > 1)
    body.line() << "r = groupSlice(r, g, " << groupSize << ");\n";
  return opened;
}

void KernelEmitter::closeRange(int opened) {
  for (int i = 0; i < opened; ++i)
    body.close();
  segmented = false;
}

} // namespace backend
} // namespace mscclc
