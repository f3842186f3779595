//===- Accesses.h - The chunks an mscl operation reads and writes --------===//
//
// The chunks each thread-block operation touches and the barriers it implies,
// as the transformation passes need them (dependence analysis, barrier
// insertion, fusions). Derived from the operations' primitive actions
// (CommOpInterface, mscl/IR/MsclSemantics.h), which say what each op does.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_ANALYSIS_ACCESSES_H
#define MSCL_ANALYSIS_ACCESSES_H

#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace mscl {

/// One run of chunks that an operation reads or writes.
struct ChunkAccess {
  ChunkAttr chunk;
  /// The chunk lives on another rank than the one running the operation
  /// (the peer's side of a put/get/read_reduce/reduce_put, or another member
  /// of a switch group).
  bool remote = false;
};

/// Everything one operation reads and writes, in operand order.
struct OpAccesses {
  llvm::SmallVector<ChunkAccess, 4> reads;
  llvm::SmallVector<ChunkAccess, 2> writes;
  bool empty() const { return reads.empty() && writes.empty(); }
};

/// Where an operation orders the threads of its block, relative to its own
/// chunk accesses (execution-model.md): a signal starts with a barrier, a
/// wait and a flush end with one, put_with_signal(_and_flush) has one after
/// its put part (before the signal), `mscl.barrier` is one.
struct ImpliedBarriers {
  bool before = false;
  bool after = false;
  bool any() const { return before || after; }
};

/// The member ranks of every switch channel of a program, built once so that
/// switch operations can be expanded without a symbol lookup per op.
class SwitchGroups {
public:
  SwitchGroups() = default;
  explicit SwitchGroups(ProgramOp program);
  /// The ranks of switch channel `name`, empty if there is none.
  llvm::ArrayRef<int64_t> lookup(llvm::StringRef name) const;

private:
  llvm::StringMap<llvm::SmallVector<int64_t, 8>> groups;
};

/// The chunks `op` reads and writes. A switch_reduce reads its source on
/// every rank of the group and a switch_broadcast writes its destination on
/// every rank of the group; `groups` names the members (without it they are
/// looked up through the symbol table, which is linear in the program's
/// declarations). Structure ops, barriers and sync ops access nothing.
OpAccesses getAccesses(mlir::Operation *op,
                       const SwitchGroups *groups = nullptr);

/// The implied barriers of `op`.
ImpliedBarriers getImpliedBarriers(mlir::Operation *op);

/// Whether `op` is one of the data operations (put, get, copy, reduce, ...).
bool isDataOp(mlir::Operation *op);

} // namespace mscl

#endif // MSCL_ANALYSIS_ACCESSES_H
