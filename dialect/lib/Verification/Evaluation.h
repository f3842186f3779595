//===- Evaluation.h - What every chunk holds after one launch -------------===//
//
// Symbolic execution of a ProgramModel over the abstract schedule. Every
// chunk slot holds
//  - its expression: the reduction tree that computes it, operands in
//    order (what decides its bits, ExprPool.h), whose leaves with their
//    multiplicity are the contributions (rank, input chunk) combined into
//    it (what the collective's postcondition is stated in);
//  - the residues at which its last element holds that value too.
// The last point is what makes the values exact at every count
// (mscl/IR/MsclLayout.h): a chunk step moves the body of every operand
// chunk, and their last elements only at the residues where every operand
// chunk has one. A destination's last element holds the new value where
// the step moved it and every source's last element held its value; where
// the step did not move it, it keeps what it held, which is the new value
// only if that equals the old one.
//
// Once mscl-check-sync proved the program race-free, every valid order of
// the steps gives these values, so the abstract schedule's order is used;
// a pipeline body stands for every iteration (each does the same to its
// own slice of every chunk).
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_EVALUATION_H
#define MSCL_LIB_VERIFICATION_EVALUATION_H

#include "ExprPool.h"
#include "ProgramModel.h"

#include "mscl/IR/MsclLayout.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mscl::verify {

struct SlotValue {
  ExprId expr = ExprPool::kUninitialised;
  Residues last;
};

/// Where a rank's input chunk starts out.
struct InputChunk {
  int64_t slot;
  int64_t rank, chunk;
};

class Evaluation {
public:
  /// `inputs`: the input chunks (every other slot starts uninitialised).
  /// With `residue`,
  /// every slot's value is that of its last element at that residue
  /// (meaningless for a chunk that has none there), and `last` is unused.
  Evaluation(const ProgramModel &model, ExprPool &pool,
             llvm::ArrayRef<InputChunk> inputs,
             std::optional<int64_t> residue = std::nullopt);

  /// Runs the schedule; false when the program does not run to completion.
  bool run();

  /// The expression `slot` holds.
  ExprId expr(int64_t slot) const { return exprs[slot]; }
  /// The operation that last wrote `slot`, null when nothing did.
  mlir::Operation *lastWriter(int64_t slot) const {
    return writers.lookup(slot);
  }
  /// The residues at which `slot`'s chunk has a last element.
  const Residues &lastElement(int64_t slot) const;
  /// The residues at which `slot`'s chunk has a last element that does not
  /// hold the chunk's expression.
  Residues lastMissing(int64_t slot) const;

private:
  void execute(const Step &step);
  /// The residues at which `slot`'s last element holds its expression.
  const Residues &last(int64_t slot) const { return lasts[lastOf[slot]]; }
  void store(int64_t slot, SlotValue value, mlir::Operation *writer);

  const ProgramModel &model;
  ExprPool &pool;
  std::optional<int64_t> residue;
  // What the slots hold, 8 bytes a slot and more only for those written, so
  // that a program's cost follows its operations, not the chunks it
  // declares: every slot's expression; where its last element holds it,
  // as an index into `lasts` (0: at every residue, what an unwritten
  // slot's last element does); who wrote it last.
  std::vector<ExprId> exprs;
  std::vector<uint32_t> lastOf;
  std::vector<Residues> lasts;
  llvm::DenseMap<int64_t, mlir::Operation *> writers;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_EVALUATION_H
