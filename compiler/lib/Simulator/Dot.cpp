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

#include "mlir/IR/AsmState.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <tuple>

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

/// The node text of `op`: the op without its regions, printed through the
/// program's one AsmState (printing an op on its own would verify and
/// number the whole module each time).
static std::string label(Operation *op, AsmState &asmState) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (isa<mscl::PipelineOp>(op->getParentOp()))
    os << "[pipeline] ";
  op->print(os, asmState);
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

/// One chunk of one buffer on one rank: where readers are indexed.
using ChunkSlot = std::tuple<int, int, int64_t>;

/// The data edges: from every node that writes a chunk to every node that
/// reads it (later in the same block, or in any other block), each pair
/// once, ordered by writer then reader. Readers are indexed by the chunks
/// they read, so the work is proportional to the chunks touched, not to the
/// square of the node count.
static void emitDataEdges(ArrayRef<Node> nodes, llvm::raw_ostream &os) {
  std::map<ChunkSlot, SmallVector<int, 4>> readersOf;
  for (auto [r, reader] : llvm::enumerate(nodes))
    for (const ChunkRef &c : reader.reads)
      for (int64_t i = c.index; i < c.index + c.count; ++i) {
        SmallVector<int, 4> &list = readersOf[{c.buffer, c.rank, i}];
        if (list.empty() || list.back() != static_cast<int>(r))
          list.push_back(static_cast<int>(r));
      }
  for (auto [w, writer] : llvm::enumerate(nodes)) {
    std::set<int> targets;
    for (const ChunkRef &c : writer.writes)
      for (int64_t i = c.index; i < c.index + c.count; ++i) {
        auto it = readersOf.find({c.buffer, c.rank, i});
        if (it == readersOf.end())
          continue;
        for (int r : it->second) {
          const Node &reader = nodes[r];
          if (r == static_cast<int>(w) ||
              (writer.block == reader.block && reader.order < writer.order))
            continue;
          targets.insert(r);
        }
      }
    for (int r : targets)
      os << "  n" << w << " -> n" << r << ";\n";
  }
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
  Operation *top = program;
  while (Operation *parent = top->getParentOp())
    top = parent;
  AsmState asmState(top, OpPrintingFlags().skipRegions().assumeVerified());
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

  std::vector<SmallVector<int>> nodesOfBlock(model.blocks.size());
  for (auto [i, node] : llvm::enumerate(nodes))
    nodesOfBlock[node.block].push_back(static_cast<int>(i));
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
    for (int i : nodesOfBlock[b]) {
      os << "      n" << i << " [label=\"" << label(nodes[i].op, asmState)
         << "\"];\n";
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
  emitDataEdges(nodes, os);
  os << "}\n";
}
