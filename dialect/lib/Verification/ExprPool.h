//===- ExprPool.h - Reduction expression trees, hash-consed ---------------===//
//
// What a chunk holds, as the kernels compute it: a leaf is one rank's input
// chunk (or uninitialised data); a reduction of sources s0, s1, ..., sn is
// op(...op(op(s0, s1), s2)..., sn), applied left to right in the element
// type (mscclc/device/Elementwise.h rounds after every op), so
// `reduce(d, a, b, c)` and `reduce(d, a, b); reduce(d, d, c)` are the same
// tree and give the same bits, while `reduce(d, a, c, b)` does not. A switch
// reduction (multimem) combines the group's ranks in the switch's own
// order: an unordered node whose children are sorted, so every rank that
// reads the same group sum gets the same node.
//
// Nodes are interned: two chunks hold the same expression iff their ids are
// equal, which makes comparing whole programs (translation validation) and
// ranks (same bits everywhere) one integer compare per chunk.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_EXPRPOOL_H
#define MSCL_LIB_VERIFICATION_EXPRPOOL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mscl::verify {

using ExprId = uint32_t;

class ExprPool {
public:
  ExprPool();

  /// Uninitialised data (a chunk read before anything wrote it).
  static constexpr ExprId kUninitialised = 0;

  /// Rank `rank`'s input chunk `chunk`.
  ExprId leaf(int64_t rank, int64_t chunk);
  /// op(a, b), a first.
  ExprId apply(ExprId a, ExprId b);
  /// The left-to-right reduction of `sources` (the one source of a copy).
  ExprId reduce(llvm::ArrayRef<ExprId> sources);
  /// A switch reduction of `sources`, in the switch's order.
  ExprId switchReduce(llvm::ArrayRef<ExprId> sources);

  /// `id` with every leaf (rank, chunk) replaced by leaf (rank,
  /// chunk * factor + offset): the expression of a replicated chunk
  /// (user chunk j becomes j * instances + i). `memo` caches the
  /// rewritten nodes of one (factor, offset).
  ExprId renumberChunks(ExprId id, int64_t factor, int64_t offset,
                        llvm::DenseMap<ExprId, ExprId> &memo);

  /// `id`'s shape, for writing it out: a leaf's (rank, chunk), an
  /// operation's two operands, a switch reduction's children.
  enum class Kind : uint8_t { Uninitialised, Leaf, Apply, Switch };
  Kind kind(ExprId id) const { return nodes[id].kind; }
  std::pair<int64_t, int64_t> leafOf(ExprId id) const {
    return {nodes[id].a, nodes[id].b};
  }
  std::pair<ExprId, ExprId> operands(ExprId id) const {
    return {ExprId(nodes[id].a), ExprId(nodes[id].b)};
  }
  llvm::ArrayRef<ExprId> children(ExprId id) const {
    return llvm::ArrayRef<ExprId>(lists).slice(nodes[id].a, nodes[id].b);
  }

  /// The multiset of leaves of `id` (rank, chunk) with multiplicity, as
  /// (rank * inputChunks + chunk, count) sorted by key, counts saturating
  /// at 2^31; uninitialised data as key UINT32_MAX (once, however often
  /// it occurs; Contributions.h). Linear in the nodes `id` reaches.
  std::vector<std::pair<uint32_t, uint32_t>>
  contributions(ExprId id, int64_t inputChunks) const;

  /// Writes `id` in infix form, leaves as `in@RANK[CHUNK]`, `+` for the
  /// run-time reduction operator; at most `budget` leaves, then "...".
  void print(llvm::raw_ostream &os, ExprId id, int budget = 12) const;
  std::string str(ExprId id, int budget = 12) const;

private:
  struct Node {
    Kind kind;
    /// Leaf: rank, chunk. Apply: the operands. Switch: its children are
    /// `lists[a .. a + b)`.
    int64_t a = 0, b = 0;
  };
  void printNode(llvm::raw_ostream &os, ExprId id, int &budget) const;

  std::vector<Node> nodes;
  std::vector<ExprId> lists;
  llvm::DenseMap<std::pair<int64_t, int64_t>, ExprId> applies;
  /// The leaf of (rank, chunk), by rank, then chunk (kNoLeaf: none yet):
  /// every input chunk of a program gets one, so a lookup costs no hash.
  static constexpr ExprId kNoLeaf = ~ExprId(0);
  std::vector<std::vector<ExprId>> leaves;
  std::map<std::vector<ExprId>, ExprId> switches;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_EXPRPOOL_H
