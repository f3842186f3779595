//===- Operands.cpp - Pointer and size expressions of chunk operands -----===//
//
// Ranges, as docs/execution-model.md ("Elements") and mscl/IR/MsclLayout.h
// define them: an operation on runs of R chunks is R chunk steps, step k
// taking chunk (index + k) of every operand and moving, from the first
// element of each, as many elements as the smallest of them holds. The
// kernel does that literally (a loop over k) unless one contiguous run
// moves the same elements (user-buffer runs whose chunks have equal sizes
// at every count, ChunkLayout::sameSizes), which needs no loop. Then:
//  - pipelines: iteration t takes elements [t*pu, (t+1)*pu) of each chunk;
//  - thread-block groups: block g takes the stripes of the chunk it owns
//    (mscclc_group_stripe in mscclc/device/Layout.h), the same in every
//    operation of the group; an empty range, once, by the block owning
//    its position (an LL operation still touches its first packet).
//
// User buffers are cut into chunks by ub(j) (uneven when the count does not
// divide); scratch chunk j holds ce elements from j * cs, its stride in the
// scratch's layout (the same at every count that fits the scratch), and a
// packet chunk ppc packets. Every builder records the kernel-wide names it
// writes in `uses`.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <cassert>
#include <set>

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {

std::string KernelEmitter::chunkIndex(const Operand &o, int64_t plus) const {
  int64_t i = o.chunk.getIndex() + plus;
  if (!perChunk)
    return std::to_string(i);
  return i == 0 ? "k" : "k + " + std::to_string(i);
}

/// `expr` as a factor of a product.
static std::string factor(const std::string &expr) {
  return expr.find(' ') == std::string::npos ? expr : "(" + expr + ")";
}

std::string KernelEmitter::sizeExpr(const Operand &o) {
  int64_t i = o.chunk.getIndex(), c = o.chunk.getCount();
  if (perChunk) {
    if (!o.isUser()) {
      uses.chunkElems = true;
      return "ce";
    }
    uses.userBounds = true;
    return "(ub(" + chunkIndex(o, 1) + ") - ub(" + chunkIndex(o) + "))";
  }
  if (o.isUser()) {
    uses.userBounds = true;
    return i == 0 ? "ub(" + std::to_string(c) + ")"
                  : "(ub(" + std::to_string(i + c) + ") - ub(" +
                        std::to_string(i) + "))";
  }
  // A scratch run longer than a chunk goes chunk by chunk (openRange).
  assert(c == 1 && "one scratch chunk at a time");
  uses.chunkElems = true;
  return "ce";
}

std::string KernelEmitter::startExpr(const Operand &o) {
  int64_t i = o.chunk.getIndex();
  if (i == 0 && !perChunk)
    return "0";
  if (o.isUser()) {
    uses.userBounds = true;
    return "ub(" + chunkIndex(o) + ")";
  }
  uses.chunkStride = true;
  return factor(chunkIndex(o)) + " * cs";
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
  // Packet operands always go chunk by chunk (openRange): the pointer is
  // the chunk's first packet plus the range's start.
  std::string chunkTerm;
  if (perChunk || o.chunk.getIndex() != 0) {
    uses.packetsPerChunk = true;
    chunkTerm = " + " + factor(chunkIndex(o)) + " * ppc";
  }
  return base + chunkTerm + " + r.begin * sizeof(T) / MSCCLC_LL_DATA_BYTES";
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
  // Whether one contiguous run moves what the chunk steps move.
  int64_t run = 1;
  bool packets = false;
  for (const Operand &o : operands) {
    run = std::max<int64_t>(run, o.chunk.getCount());
    packets |= o.isPacket();
  }
  // Scratch chunks lie a stride apart that is larger than their size at
  // smaller counts (docs/kernel-abi.md): a scratch run is never one run of
  // elements.
  bool contiguous = run == 1;
  if (!contiguous && !packets && !inPipeline && groupSize == 1) {
    contiguous = true;
    for (const Operand &o : operands)
      contiguous &= o.isUser() &&
                    info.layout.sameSizes(true, o.chunk.getIndex(), true,
                                          operands.front().chunk.getIndex(),
                                          run);
  }
  int opened = 0;
  perChunk = !contiguous;
  if (perChunk) {
    body.open("for (u64 k = 0; k < " + std::to_string(run) + "; ++k)",
              "chunk by chunk");
    ++opened;
  }
  std::string n;
  std::set<std::string> seen;
  for (const Operand &o : operands) {
    std::string size = sizeExpr(o);
    if (!seen.insert(size).second)
      continue;
    n = n.empty() ? size : "umin(" + n + ", " + size + ")";
  }
  body.line() << "const u64 n = " << n << ";\n";
  std::string range = inPipeline ? "pipelineSlice(n, t, pu)" : "{0, n}";
  const std::string name = groupSize == 1 ? "r" : "whole";
  body.line() << "const Range " << name << " = " << range << ";\n";
  // An operation on LL packets that moves nothing still writes or waits for
  // the packet at its position, which is position 0 in the first iteration
  // and the end of what it moves in a later one. A put that moves as much
  // but outside a pipeline never writes that packet, so a later empty
  // iteration touches none (docs/execution-model.md, "Pipelines").
  if (inPipeline && packets) {
    body.open("if (" + name + ".size() != 0 || t == 0)",
              "a later empty iteration touches no packet");
    ++opened;
  }
  if (groupSize == 1)
    return opened;
  // The stripes of the range this block of the group owns.
  std::string parts = std::to_string(groupSize);
  body.open("for (Range r = groupFirst(whole, g, " + parts +
                ", gs); !r.done(); r = groupNext(whole, r, " + parts +
                ", gs))",
            "this block's stripes");
  return opened + 1;
}

void KernelEmitter::closeRange(int opened) {
  for (int i = 0; i < opened; ++i)
    body.close();
  perChunk = false;
}

} // namespace backend
} // namespace mscclc
