//===- FusionUtils.h - Helpers shared by the fusion passes ---------------===//
#ifndef MSCL_LIB_TRANSFORMS_FUSIONUTILS_H
#define MSCL_LIB_TRANSFORMS_FUSIONUTILS_H

#include "mscl/Analysis/Accesses.h"
#include "mscl/IR/MsclLayout.h"

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
  /// Whether an operation over the chunk runs of `a` and one over those of
  /// `b` move the same elements of every chunk step at every count.
  bool same(const OpAccesses &a, const OpAccesses &b) const;

private:
  /// The residues at which chunk step `step` moves its last element.
  Residues lastMoved(const OpAccesses &operands, int64_t step) const;

  ChunkLayout layout;
  llvm::StringSet<> scratch;
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
