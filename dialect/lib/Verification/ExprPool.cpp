//===- ExprPool.cpp - Reduction expression trees, hash-consed -------------===//

#include "ExprPool.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include "llvm/ADT/STLExtras.h"

using namespace mscl::verify;

ExprPool::ExprPool() { nodes.push_back(Node{Kind::Uninitialised}); }

ExprId ExprPool::leaf(int64_t rank, int64_t chunk) {
  assert(rank >= 0 && chunk >= 0 && "leaves are input chunks of ranks");
  if (size_t(rank) >= leaves.size())
    leaves.resize(size_t(rank) + 1);
  std::vector<ExprId> &ofRank = leaves[size_t(rank)];
  if (size_t(chunk) >= ofRank.size())
    ofRank.resize(std::max(size_t(chunk) + 1, ofRank.size() * 2), kNoLeaf);
  ExprId &id = ofRank[size_t(chunk)];
  if (id == kNoLeaf) {
    id = ExprId(nodes.size());
    nodes.push_back(Node{Kind::Leaf, rank, chunk});
  }
  return id;
}

ExprId ExprPool::apply(ExprId a, ExprId b) {
  auto [it, fresh] = applies.try_emplace({a, b}, ExprId(nodes.size()));
  if (fresh)
    nodes.push_back(Node{Kind::Apply, a, b});
  return it->second;
}

ExprId ExprPool::reduce(llvm::ArrayRef<ExprId> sources) {
  assert(!sources.empty() && "a move has a source");
  ExprId acc = sources.front();
  for (ExprId next : sources.drop_front())
    acc = apply(acc, next);
  return acc;
}

ExprId ExprPool::switchReduce(llvm::ArrayRef<ExprId> sources) {
  std::vector<ExprId> sorted(sources.begin(), sources.end());
  std::sort(sorted.begin(), sorted.end());
  auto [it, fresh] = switches.try_emplace(sorted, ExprId(nodes.size()));
  if (fresh) {
    nodes.push_back(Node{Kind::Switch, int64_t(lists.size()),
                         int64_t(sorted.size())});
    lists.insert(lists.end(), sorted.begin(), sorted.end());
  }
  return it->second;
}

ExprId ExprPool::renumberChunks(ExprId id, int64_t factor, int64_t offset,
                                llvm::DenseMap<ExprId, ExprId> &memo) {
  // Post-order with an explicit stack: reduction chains are as deep as
  // the rank count.
  std::vector<std::pair<ExprId, bool>> stack{{id, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    if (memo.count(node)) {
      stack.pop_back();
      continue;
    }
    Node n = nodes[node];
    if (n.kind == Kind::Uninitialised || n.kind == Kind::Leaf) {
      memo[node] = n.kind == Kind::Leaf ? leaf(n.a, n.b * factor + offset)
                                        : node;
      stack.pop_back();
      continue;
    }
    llvm::SmallVector<ExprId, 8> children;
    if (n.kind == Kind::Apply)
      children = {ExprId(n.a), ExprId(n.b)};
    else
      children.assign(lists.begin() + n.a, lists.begin() + n.a + n.b);
    if (!expanded) {
      stack.back().second = true;
      for (ExprId child : children)
        if (!memo.count(child))
          stack.push_back({child, false});
      continue;
    }
    for (ExprId &child : children)
      child = memo.lookup(child);
    memo[node] = n.kind == Kind::Apply ? apply(children[0], children[1])
                                       : switchReduce(children);
    stack.pop_back();
  }
  return memo.lookup(id);
}

std::vector<std::pair<uint32_t, uint32_t>>
ExprPool::contributions(ExprId id, int64_t inputChunks) const {
  // The nodes `id` reaches, then multiplicities pushed down from the root
  // in decreasing id order (operands always have smaller ids).
  std::vector<ExprId> reached{id};
  llvm::DenseMap<ExprId, uint64_t> count;
  count[id] = 0;
  for (size_t i = 0; i < reached.size(); ++i) {
    auto visit = [&](ExprId child) {
      if (count.try_emplace(child, 0).second)
        reached.push_back(child);
    };
    const Node &node = nodes[reached[i]];
    if (node.kind == Kind::Apply) {
      visit(ExprId(node.a));
      visit(ExprId(node.b));
    } else if (node.kind == Kind::Switch) {
      for (ExprId child : children(reached[i]))
        visit(child);
    }
  }
  llvm::sort(reached, std::greater<ExprId>());
  constexpr uint64_t kSaturated = uint64_t(1) << 31;
  count[id] = 1;
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (ExprId at : reached) {
    uint64_t times = std::min(count[at], kSaturated);
    const Node &node = nodes[at];
    auto add = [&](ExprId child) {
      count[child] = std::min(count[child] + times, kSaturated);
    };
    switch (node.kind) {
    case Kind::Uninitialised:
      out.push_back({UINT32_MAX, 1});
      break;
    case Kind::Leaf:
      out.push_back({uint32_t(node.a * inputChunks + node.b), uint32_t(times)});
      break;
    case Kind::Apply:
      add(ExprId(node.a));
      add(ExprId(node.b));
      break;
    case Kind::Switch:
      for (ExprId child : children(at))
        add(child);
      break;
    }
  }
  llvm::sort(out);
  return out;
}

void ExprPool::printNode(llvm::raw_ostream &os, ExprId id, int &budget) const {
  const Node &node = nodes[id];
  if (budget <= 0) {
    os << "...";
    return;
  }
  switch (node.kind) {
  case Kind::Uninitialised:
    --budget;
    os << "uninitialised";
    return;
  case Kind::Leaf:
    --budget;
    os << "in@" << node.a << "[" << node.b << "]";
    return;
  case Kind::Apply: {
    // A left-deep chain (the common shape) without recursion along it.
    llvm::SmallVector<ExprId, 16> right;
    ExprId left = id;
    while (nodes[left].kind == Kind::Apply) {
      right.push_back(ExprId(nodes[left].b));
      left = ExprId(nodes[left].a);
    }
    os << std::string(right.size(), '(');
    printNode(os, left, budget);
    for (ExprId r : llvm::reverse(right)) {
      if (budget <= 0) {
        os << " + ...";
        return;
      }
      os << " + ";
      printNode(os, r, budget);
      os << ")";
    }
    return;
  }
  case Kind::Switch:
    os << "switch(";
    for (int64_t i = 0; i < node.b; ++i) {
      if (i)
        os << ", ";
      printNode(os, lists[node.a + i], budget);
    }
    os << ")";
    return;
  }
}

void ExprPool::print(llvm::raw_ostream &os, ExprId id, int budget) const {
  printNode(os, id, budget);
}

std::string ExprPool::str(ExprId id, int budget) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os, id, budget);
  return text;
}
