//===- KernelEmitter.cpp - A rank's kernel: prologue and thread blocks ---===//

#include "KernelEmitter.h"

#include <algorithm>

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {

KernelEmitter::KernelEmitter(const ProgramInfo &info, AsmState &asmState,
                             int64_t rank, Target target)
    : info(info), asmState(asmState), rank(rank), target(target),
      rankInfo(info.rankInfos[rank]) {}

void KernelEmitter::comment(Operation *op) {
  std::string file;
  unsigned lineNo = sourceLine(op->getLoc(), &file);
  std::string text;
  llvm::raw_string_ostream textOs(text);
  // One AsmState for the whole program: printing an op on its own would
  // verify and number the entire module each time.
  op->print(textOs, asmState);
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (lineNo)
    body.line() << "// " << file << ":" << lineNo << ": " << text << "\n";
  else
    body.line() << "// " << text << "\n";
}

std::string KernelEmitter::site(Operation *op, const char *kind, int channel,
                                const char *opcode) const {
  return "Site{" + std::to_string(sourceLine(op->getLoc())) + ", " + kind +
         ", " + std::to_string(channel) + ", " + opcode + "}";
}

/// Name of the register that holds a channel's expected semaphore value.
std::string waitVar(const ChannelInfo &c) {
  return (c.isPort ? "wp" : "wm") + std::to_string(c.index);
}

bool KernelEmitter::emitBlock(ThreadBlockOp tb) {
  int64_t first = static_cast<int64_t>(tb.getId());
  groupSize = static_cast<int64_t>(tb.getGroup());
  if (groupSize == 1) {
    body.open("case " + std::to_string(first) + ":");
  } else {
    std::string labels = "case " + std::to_string(first);
    for (int64_t b = first + 1; b < first + groupSize; ++b)
      labels += ": case " + std::to_string(b);
    body.open(labels + ":",
              "thread-block group of " + std::to_string(groupSize));
    body.line() << "const u32 g = blockIdx.x - " << first
                << "; // this block's stripes of every chunk\n";
    // Stripes of an iteration's unit when the group runs pipelines (the
    // smallest unit), else of a whole chunk: Layout.h.
    std::optional<uint64_t> unit;
    tb.walk([&](PipelineOp p) {
      unit = std::min<uint64_t>(unit.value_or(UINT64_MAX), p.getUnit());
    });
    uses.chunkElems = true;
    body.line() << "const u64 gs = mscclc_group_stripe(ce, "
                << (unit ? "pipelineUnitElems(" + std::to_string(*unit) + ")"
                         : std::string("0"))
                << ", " << groupSize << ", sizeof(T));\n";
  }
  // Expected semaphore values of the channels this block waits on.
  SmallVector<const ChannelInfo *> waited;
  for (auto *list : {&rankInfo.memory, &rankInfo.port})
    for (const ChannelInfo *c : *list)
      if (c->waits && c->block == first)
        waited.push_back(c);
  std::string slotSuffix = groupSize > 1 ? " + g" : "";
  for (const ChannelInfo *c : waited)
    body.line() << "u64 " << waitVar(*c) << " = loadWaitCounter(args, "
                << c->waitSlot << slotSuffix << "); // @" << c->name << "\n";
  bool ok = true;
  for (Operation &op : tb.getBody().front())
    ok &= emitOp(&op);
  body.line() << "endBlock(ctx, args);\n";
  for (const ChannelInfo *c : waited)
    body.line() << "storeWaitCounter(args, " << c->waitSlot << slotSuffix
                << ", " << waitVar(*c) << ");\n";
  body.line() << "return;\n";
  body.close();
  groupSize = 1;
  return ok;
}

void KernelEmitter::emitPrologue(llvm::raw_ostream &os) const {
  int64_t blocks = std::max<int64_t>(1, rankInfo.blocks);
  std::string k = std::to_string(info.chunks);
  // HIP passes kernel arguments in a constant segment already and has no
  // __grid_constant__.
  os << "extern \"C\" __global__ void __launch_bounds__(1024)\n"
     << kernelName(info, rank) << "(const "
     << (target == Target::CUDA ? "__grid_constant__ " : "")
     << "MscclcKernelArgs args) {\n";
  os << "  if (!checkArgs(args, " << rank << ", " << info.ranks << ", "
     << blocks << "))\n    return;\n";
  os << "  Ctx ctx(args, " << rank << ");\n";
  os << "  beginBlock(ctx, args);\n";
  os << "  const u64 count = args.count;\n";
  // Scratch offsets are a chain (each after the previous buffer), so the
  // last one used needs all before it.
  int lastOffset = -1;
  for (const std::set<int> *used :
       {&uses.scratchOffsets, &uses.scratchPlain, &uses.scratchPackets})
    if (!used->empty())
      lastOffset = std::max(lastOffset, *used->rbegin());
  bool anyPacket = !uses.scratchPackets.empty();
  // Sizes come from the count, places in scratch from the count the
  // scratch is laid out for, the same at every count that fits it.
  bool scratchLayout = uses.chunkStride || uses.packetsPerChunk || anyPacket ||
                       lastOffset > 0;
  if (scratchLayout)
    os << "  const u64 sc = args.scratchCount; // the scratch's layout\n";
  if (uses.chunkElems)
    os << "  const u64 ce = mscclc_scratch_chunk_elems(count, " << k
       << "); // scratch chunk elements\n";
  if (uses.chunkStride)
    os << "  const u64 cs = mscclc_scratch_chunk_elems(sc, " << k
       << "); // scratch chunk stride\n";
  if (uses.packetsPerChunk || anyPacket)
    os << "  const u64 ppc = mscclc_packets_per_chunk(sc, " << k
       << ", sizeof(T)); // LL packets per chunk (stride)\n";
  if (uses.parity || anyPacket)
    os << "  const u64 par = packetParity(ctx); // packet buffer half\n";
  if (uses.userBounds)
    os << "  auto ub = [count](u64 j) { return mscclc_chunk_begin(j, count, "
       << k << "); };\n";
  if (uses.input)
    os << "  T *const in = static_cast<T *>(args.input);\n";
  if (uses.output)
    os << "  T *const out = static_cast<T *>(args.output);\n";
  for (int i = 0; i <= lastOffset; ++i) {
    const BufferInfo *s = info.scratch[i];
    os << "  const u64 off_" << sanitize(s->name) << " = ";
    if (i == 0) {
      os << "0;";
    } else {
      const BufferInfo *prev = info.scratch[i - 1];
      os << "mscclc_align_scratch(off_" << sanitize(prev->name)
         << " + mscclc_scratch_buffer_bytes(" << prev->chunks << ", "
         << (prev->packet ? 1 : 0) << ", sc, " << k << ", sizeof(T)));";
    }
    os << " // scratch " << s->name << "[" << s->chunks << "]"
       << (s->packet ? " packet" : "") << "\n";
  }
  for (const BufferInfo *s : info.scratch) {
    std::string name = sanitize(s->name);
    if (uses.scratchPlain.count(s->scratchIndex))
      os << "  T *const s_" << name << " = at(args.scratch, off_" << name
         << ");\n";
    if (uses.scratchPackets.count(s->scratchIndex))
      os << "  LLPacket *const pk_" << name << " = packetsAt(args.scratch, off_"
         << name << ") + par * " << s->chunks << " * ppc;\n";
  }
}

bool KernelEmitter::emit(llvm::raw_ostream &os) {
  bool ok = true;
  if (RankOp rankOp = info.rankOps[rank])
    for (Operation &op : rankOp.getBody().front())
      if (auto tb = dyn_cast<ThreadBlockOp>(op))
        ok &= emitBlock(tb);
  if (!ok)
    return false;
  // The body is complete, so the prologue knows what it refers to.
  emitPrologue(os);
  os << "  switch (blockIdx.x) {\n";
  os << body.text();
  os << "  default:\n    break;\n  }\n";
  os << "  endBlock(ctx, args);\n";
  os << "}\n";
  return true;
}

} // namespace backend
} // namespace mscclc
