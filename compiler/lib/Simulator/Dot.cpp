//===- Dot.cpp - The data flow of a program as a Graphviz graph ----------===//
//
// A cluster per rank holding a cluster per thread block, a node per
// operation in program order, blue edges from each signal to the wait it
// releases (k-th signal on a channel to the k-th wait on its other end),
// and black edges from every operation that writes a chunk to every
// operation that reads an overlapping chunk (later in the same block, or in
// any other block).
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "mscclc/Simulator/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mscclc::sim;

namespace {
struct Node {
  Operation *op;
  int block;
  int order;
  llvm::SmallVector<ChunkRef, 4> reads, writes;
};
} // namespace

static std::string label(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (isa<mscl::PipelineOp>(op->getParentOp()))
    os << "[pipeline] ";
  OpPrintingFlags flags;
  flags.skipRegions();
  op->print(os, flags);
  std::string escaped;
  llvm::StringRef body = llvm::StringRef(text).ltrim();
  body.consume_front("mscl.");
  for (char c : body) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  return escaped;
}

static bool overlaps(const ChunkRef &a, const ChunkRef &b) {
  return a.buffer == b.buffer && a.rank == b.rank &&
         a.index < b.index + b.count && b.index < a.index + a.count;
}

void mscclc::sim::emitDot(mscl::ProgramOp program, llvm::raw_ostream &os) {
  FailureOr<Model> built = Model::build(program);
  os << "digraph \"" << program.getSymName() << "\" {\n"
     << "  compound=true;\n  node [shape=box, fontname=\"monospace\", "
        "fontsize=10];\n";
  if (failed(built)) {
    os << "}\n";
    return;
  }
  const Model &model = *built;
  std::vector<Node> nodes;
  llvm::DenseMap<Operation *, int> nodeOf;
  // channel -> signal nodes in order; channel -> wait nodes in order.
  std::vector<std::vector<int>> signals(model.channels.size()),
      waits(model.channels.size());
  for (auto [b, block] : llvm::enumerate(model.blocks)) {
    int order = 0;
    for (const Step &step : block.steps) {
      if (step.kind == StepKind::PipelineBegin ||
          step.kind == StepKind::PipelineEnd)
        continue;
      auto [it, inserted] = nodeOf.try_emplace(step.op, nodes.size());
      if (inserted)
        nodes.push_back({step.op, static_cast<int>(b), order++, {}, {}});
      Node &node = nodes[it->second];
      auto addAll = [](auto &into, const auto &list) {
        into.append(list.begin(), list.end());
      };
      switch (step.kind) {
      case StepKind::Signal:
        for (int c : step.channels)
          signals[c].push_back(it->second);
        break;
      case StepKind::Wait:
        for (int c : step.channels)
          waits[c].push_back(it->second);
        break;
      case StepKind::SwitchReduce:
        for (int r : model.switches[step.switchId].ranks) {
          ChunkRef c = step.srcs[0];
          c.rank = r;
          node.reads.push_back(c);
        }
        node.writes.push_back(step.dsts[0]);
        break;
      case StepKind::SwitchBroadcast:
        for (int r : model.switches[step.switchId].ranks) {
          ChunkRef c = step.dsts[0];
          c.rank = r;
          node.writes.push_back(c);
        }
        node.reads.push_back(step.srcs[0]);
        break;
      default:
        addAll(node.reads, step.srcs);
        addAll(node.reads, step.remotes);
        addAll(node.writes, step.dsts);
        if (step.store)
          node.writes.push_back(*step.store);
        break;
      }
    }
  }

  int lastRank = -1;
  for (auto [b, block] : llvm::enumerate(model.blocks)) {
    if (block.rank != lastRank) {
      if (lastRank >= 0)
        os << "  }\n";
      os << "  subgraph cluster_rank" << block.rank << " {\n    label=\"rank "
         << block.rank << "\";\n";
      lastRank = block.rank;
    }
    os << "    subgraph cluster_r" << block.rank << "_tb" << block.id
       << " {\n      label=\"tb " << block.id;
    if (block.group > 1)
      os << ".." << block.id + block.group - 1;
    os << "\";\n";
    int previous = -1;
    for (auto [i, node] : llvm::enumerate(nodes)) {
      if (node.block != static_cast<int>(b))
        continue;
      os << "      n" << i << " [label=\"" << label(node.op) << "\"];\n";
      if (previous >= 0)
        os << "      n" << previous << " -> n" << i
           << " [color=gray, style=dashed];\n";
      previous = i;
    }
    os << "    }\n";
  }
  if (lastRank >= 0)
    os << "  }\n";

  for (auto [c, ch] : llvm::enumerate(model.channels)) {
    if (ch.peer < 0)
      continue;
    const std::vector<int> &from = signals[c], &to = waits[ch.peer];
    for (size_t k = 0; k < from.size() && k < to.size(); ++k)
      os << "  n" << from[k] << " -> n" << to[k]
         << " [color=blue, label=\"@" << ch.name << "\", fontsize=8];\n";
  }
  for (auto [w, writer] : llvm::enumerate(nodes))
    for (auto [r, reader] : llvm::enumerate(nodes)) {
      if (w == r || (writer.block == reader.block && reader.order < writer.order))
        continue;
      bool linked = false;
      for (const ChunkRef &a : writer.writes)
        for (const ChunkRef &b : reader.reads)
          linked |= overlaps(a, b);
      if (linked)
        os << "  n" << w << " -> n" << r << ";\n";
    }
  os << "}\n";
}
