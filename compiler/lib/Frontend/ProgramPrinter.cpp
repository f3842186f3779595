//===- ProgramPrinter.cpp - Text form of an evaluated Program -------------===//
//
// One line per declaration and per operation, operands written the way the
// source writes chunk references (`recv@1[0..4]`), so tests can FileCheck
// what meta-evaluation produced without going through MLIR.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Frontend.h"

#include "llvm/Support/raw_ostream.h"

using namespace mscclc;

llvm::StringRef mscclc::stringifyCollective(Collective kind) {
  return collectiveName(kind);
}

llvm::StringRef mscclc::stringifyOpKind(OpKind kind) {
  switch (kind) {
  case OpKind::Put:
    return "put";
  case OpKind::PutSignal:
    return "put_signal";
  case OpKind::PutSignalFlush:
    return "put_signal_flush";
  case OpKind::Get:
    return "get";
  case OpKind::Signal:
    return "signal";
  case OpKind::Wait:
    return "wait";
  case OpKind::Flush:
    return "flush";
  case OpKind::ReadReduce:
    return "read_reduce";
  case OpKind::ReducePut:
    return "reduce_put";
  case OpKind::Copy:
    return "copy";
  case OpKind::Reduce:
    return "reduce";
  case OpKind::SwitchReduce:
    return "switch_reduce";
  case OpKind::SwitchBroadcast:
    return "switch_broadcast";
  case OpKind::Barrier:
    return "barrier";
  case OpKind::Pipeline:
    return "pipeline";
  }
  return "?";
}

namespace {

void printChunk(const ChunkRef &c, llvm::raw_ostream &os) {
  os << c.buffer << "@" << c.rank << "[" << c.index;
  if (c.count != 1)
    os << ".." << c.index + c.count;
  os << "]";
}

void printOps(const std::vector<Operation> &ops, unsigned indent,
              llvm::raw_ostream &os) {
  for (const Operation &op : ops) {
    os.indent(indent) << stringifyOpKind(op.kind);
    if (op.kind == OpKind::Pipeline) {
      os << " unit=" << op.unitBytes << "\n";
      printOps(op.body, indent + 2, os);
      continue;
    }
    if (!op.channel.empty())
      os << " " << op.channel;
    if (op.dst) {
      os << " ";
      printChunk(*op.dst, os);
    }
    if (!op.srcs.empty()) {
      os << " <-";
      llvm::interleave(
          op.srcs, os,
          [&](const ChunkRef &c) {
            os << " ";
            printChunk(c, os);
          },
          ",");
    }
    os << "\n";
  }
}

} // namespace

void mscclc::printProgram(const Program &p, llvm::raw_ostream &os) {
  os << "program " << p.name << " : " << stringifyCollective(p.collective)
     << " ranks=" << p.ranks << " gpus_per_node=" << p.gpusPerNode
     << " instances=" << p.instances << " chunks=" << p.chunks
     << " input=" << p.inputChunks << " output=" << p.outputChunks;
  if (p.inPlace)
    os << " inplace";
  if (p.collective == Collective::Broadcast ||
      p.collective == Collective::Reduce ||
      p.collective == Collective::Gather ||
      p.collective == Collective::Scatter)
    os << " root=" << p.root;
  os << "\n";
  for (const ScratchBuffer &s : p.scratch)
    os << "scratch " << s.name << "[" << s.chunks << "]"
       << (s.packet ? " packet" : "") << "\n";
  for (const Channel &c : p.channels) {
    os << "channel " << c.name << " ";
    switch (c.kind) {
    case ChannelKind::Memory:
      os << "memory " << (c.protocol == Protocol::LL ? "LL" : "HB") << " "
         << c.src << " -> " << c.dst;
      break;
    case ChannelKind::Port:
      os << "port " << c.src << " -> " << c.dst;
      break;
    case ChannelKind::Switch:
      os << "switch";
      for (int64_t r : c.ranks)
        os << " " << r;
      break;
    }
    if (c.id)
      os << " id=" << c.id;
    os << "\n";
  }
  for (const RankProgram &rp : p.rankPrograms) {
    os << "rank " << rp.rank << "\n";
    for (const ThreadBlock &tb : rp.threadBlocks) {
      if (tb.groupSize == 1)
        os << "  tb " << tb.id << "\n";
      else
        os << "  tbs " << tb.id << ".." << tb.id + tb.groupSize << "\n";
      printOps(tb.ops, 4, os);
    }
  }
}
