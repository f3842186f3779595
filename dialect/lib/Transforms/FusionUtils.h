//===- FusionUtils.h - Helpers shared by the fusion passes ---------------===//
#ifndef MSCL_LIB_TRANSFORMS_FUSIONUTILS_H
#define MSCL_LIB_TRANSFORMS_FUSIONUTILS_H

#include "mscl/Analysis/Accesses.h"
#include "mscl/IR/MsclLayout.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mscl {

/// How far a fusion looks ahead for its partner, in operations; keeps every
/// fusion linear in the block size.
constexpr unsigned kFusionWindow = 512;

/// Whether `a` writes a chunk that `b` reads or writes, or the other way.
bool accessesConflict(const OpAccesses &a, const OpAccesses &b);

/// The packet buffers of a program, by name.
class PacketBuffers {
public:
  explicit PacketBuffers(ProgramOp program);
  /// Whether `op` reads LL packets (it spins until they arrive).
  bool readsPackets(mlir::Operation *op) const;

private:
  llvm::StringSet<> names;
};

/// Whether an operation may move to a later place past `op`, provided their
/// accesses do not conflict. Only data operations and barriers let others
/// pass: a signal publishes earlier data, a flush frees earlier sources, a
/// pipeline repeats, and an operation the program placed before a wait
/// overlaps with the wait on purpose (moving it after the wait would be
/// correct but would serialise it). A read of LL packets waits too: an LL
/// put moved past it may be the one its peer waits for before sending
/// those packets, and the program would deadlock.
bool canSinkPast(mlir::Operation *op, const PacketBuffers &packets);

/// How many elements an operation moves at each count: per chunk step, as
/// many as the smallest of its operand chunks holds (mscl/IR/MsclLayout.h).
/// A fusion must keep that number for every operation it merges, or an LL
/// put would send fewer packets than its reader spins on, and an HB put
/// would leave a last element behind.
class ElementCounts {
public:
  explicit ElementCounts(ProgramOp program);

  /// A chunk of an operation at one of its chunk steps: whether it is a
  /// user chunk (whose size depends on its index) or a scratch chunk, and
  /// its index. Operations over the same such chunks move the same
  /// elements.
  using ChunkStep = std::pair<bool, int64_t>;
  ChunkStep at(ChunkAttr chunk, int64_t step) const {
    return {!scratch.contains(chunk.getBuffer()), chunk.getIndex() + step};
  }
  /// The residues at which `chunk` has its last element.
  const Residues &lastElement(ChunkStep chunk) const {
    return layout.lastElement(chunk.first, chunk.second);
  }
  int64_t chunks() const { return layout.chunks(); }

private:
  ChunkLayout layout;
  llvm::StringSet<> scratch;
};

/// The elements an operation moves as operands join it one at a time (a
/// fusion): the chunks it names and, per chunk step (up to its longest
/// operand run), the residues at which it moves its last element. Asking
/// about one more operand does not walk the others again.
class MovedElements {
public:
  MovedElements(const ElementCounts &counts, const OpAccesses &operands);
  /// Whether the operation with `chunk` as one more operand moves the same
  /// elements of every chunk step at every count.
  bool keptWith(ChunkAttr chunk);
  /// Whether the operation with `chunk` as one more operand moves, at every
  /// chunk step and count, what an operation over `other` moves.
  bool sameWith(ChunkAttr chunk, const OpAccesses &other);
  void add(ChunkAttr chunk);

private:
  /// The residues of chunk step `step` (worked out when first asked).
  const Residues &lastMoved(int64_t step);

  const ElementCounts &counts;
  /// The operands' chunks at step 0, distinct, as index * 2 + user (a
  /// DenseSet key: DenseMapInfo has no bool).
  llvm::DenseSet<int64_t> chunks;
  static int64_t key(ElementCounts::ChunkStep chunk) {
    return chunk.second * 2 + (chunk.first ? 1 : 0);
  }
  /// The most chunks an operand names: the operation's chunk steps.
  int64_t longest = 0;
  std::vector<Residues> steps;
};

/// Calls `fn` on every block that holds thread-block operations: each
/// thread-block body and each pipeline body.
void forEachOpList(ProgramOp program,
                   llvm::function_ref<void(mlir::Block &)> fn);

/// The channel declaration named by `ref`, or null.
class ChannelTable {
public:
  explicit ChannelTable(ProgramOp program);
  ChannelOp lookup(mlir::Attribute ref) const;

private:
  llvm::StringMap<ChannelOp> channels;
  /// By the (uniqued) reference: one name lookup per channel, not per use.
  mutable llvm::DenseMap<mlir::Attribute, ChannelOp> byRef;
};

/// Chunk attributes of an array attribute.
llvm::SmallVector<mlir::Attribute> chunkList(mlir::ArrayAttr array);

} // namespace mscl

#endif // MSCL_LIB_TRANSFORMS_FUSIONUTILS_H
