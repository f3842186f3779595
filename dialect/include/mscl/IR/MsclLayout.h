//===- MsclLayout.h - Which elements an operation moves, at every count -*- C++ -*-===//
//
// The element-exact meaning of chunk operands, stated once
// (docs/execution-model.md, "Elements"); the proofs, the simulator and the
// backend all take it from here, and its arithmetic is the kernels' own
// (mscclc/device/Layout.h, compiled for the host):
//
//  - At run time a count c cuts every user buffer into chunks, chunk j
//    covering [floor(j*c/K), floor((j+1)*c/K)), and every scratch buffer
//    into chunks of ceil(c/K) elements. K is the program's chunk count per
//    rank (after replication); user chunk j and j + K have the same size.
//  - An operation on runs of R chunks is R chunk steps: step k takes chunk
//    (index + k) of every operand and moves, from the first element of
//    each, as many elements as the smallest of those chunks holds.
//
// Write c = q*K + r with 0 <= r < K. Every chunk then holds q or q + 1
// elements: the *body*, positions [0, q), which every chunk step naming the
// chunk moves, and at some residues r one more element at position q, the
// chunk's *last element*. So a chunk step moves its operands' bodies at
// every count, and their last elements exactly at the residues where every
// operand chunk has one. A chunk has its last element at residue r iff it
// holds one element at count r: the sets below come from Layout.h itself.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_IR_MSCLLAYOUT_H
#define MSCL_IR_MSCLLAYOUT_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace mscl {

/// A set of residues r in [0, K), as a bit set. A set starts as "none" or
/// "all" without bits and gets its K bits only when a residue is set or it
/// meets a set that has them: most chunks of a program are never touched,
/// and a bit set per chunk would make the proofs' memory grow with the
/// square of the chunks a program declares (K bits for each of K chunks).
class Residues {
public:
  Residues() = default;
  explicit Residues(int64_t k, bool all = false) : k(k), fill(all) {}

  static Residues none(int64_t k) { return Residues(k); }

  bool test(int64_t r) const {
    return words.empty() ? fill : (words[r / 64] >> (r % 64)) & 1;
  }
  void set(int64_t r);
  Residues &operator&=(const Residues &other);
  Residues &operator|=(const Residues &other);
  /// The residues of this set that are not in `other`.
  Residues minus(const Residues &other) const;
  bool operator==(const Residues &other) const;
  bool operator!=(const Residues &other) const { return !(*this == other); }
  bool empty() const;
  /// Whether the set holds every residue.
  bool full() const;
  /// The smallest residue in the set, if any.
  std::optional<int64_t> first() const;

private:
  /// Word `i` of the bit set (bits past K are 0).
  uint64_t word(size_t i) const;
  size_t numWords() const { return size_t((k + 63) / 64); }
  /// Gives the set its bits (every one `fill`).
  void materialize();

  int64_t k = 0;
  /// Without bits, every residue is in the set or none is.
  bool fill = false;
  /// Inline up to K = 256 (every program up to 256 ranks of K = nranks).
  llvm::SmallVector<uint64_t, 4> words;
};

/// How the run-time count cuts a program's buffers into chunks.
class ChunkLayout {
public:
  /// `chunks`: K, the program's chunks per rank (`mscl.program`'s
  /// `chunks`, after replication).
  explicit ChunkLayout(int64_t chunks);

  int64_t chunks() const { return k; }

  /// First element of chunk `index` at `count` (Layout.h).
  uint64_t begin(bool user, int64_t index, uint64_t count) const;
  /// Elements of chunk `index` at `count` (Layout.h).
  uint64_t elems(bool user, int64_t index, uint64_t count) const;

  /// The residues at which chunk `index` of a user (or scratch) buffer has
  /// its last element (holds q + 1 elements). Worked out for a user chunk
  /// when first asked (O(K)): a program touches few of its chunks.
  const Residues &lastElement(bool user, int64_t index) const;

  /// Whether chunk steps over runs starting at these chunks move the same
  /// elements of every chunk as one contiguous run would: true when the
  /// runs' chunks have the same size chunk by chunk at every count (all
  /// scratch, or all user runs starting at the same index modulo K). The
  /// backend then moves such an operation as one run.
  bool sameSizes(bool userA, int64_t indexA, bool userB, int64_t indexB,
                 int64_t runLength) const;

  /// The smallest count c >= 1 with c % K == r: the count that shows an
  /// error found at residue r (for r = 0: K).
  int64_t smallestCount(int64_t r) const { return r == 0 ? k : r; }

private:
  int64_t k;
  /// Up to this K every user chunk's last-element residues are worked out
  /// up front (K^2 bits: 128 KiB), and looked up without a lock.
  static constexpr int64_t kEagerChunks = 1024;
  std::vector<Residues> eagerUserLast;
  /// Past it, user chunk index modulo K -> its residues, filled on
  /// demand; shared by copies of the layout, and guarded, as passes on
  /// different programs may run on different threads.
  struct UserLastCache {
    std::mutex mutex;
    std::unordered_map<int64_t, Residues> sets;
  };
  std::shared_ptr<UserLastCache> userLast;
  Residues scratchLast;
};

} // namespace mscl

#endif // MSCL_IR_MSCLLAYOUT_H
