//===- BarrierPlanner.h - Where thread-block barriers are needed ---------===//
//
// Shared by mscl-insert-barriers and mscl-elide-barriers: walks one thread
// block with the dependence analysis' edges and decides which barriers make
// every dependence separated.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_TRANSFORMS_BARRIERPLANNER_H
#define MSCL_LIB_TRANSFORMS_BARRIERPLANNER_H

#include "mscl/Analysis/Dependence.h"

#include "llvm/ADT/DenseSet.h"

namespace mscl {

/// Walks a thread block in program order (pipeline bodies twice, the second
/// time for loop-carried edges). At an operation with an edge whose source
/// is not yet separated from it, a barrier point is added:
/// - Insert mode: a new barrier right before the operation (before the
///   pipeline, for an edge from outside into its body). Existing
///   barriers and implied ones are fixed points. Placing each barrier as late
///   as possible is the greedy optimum of interval stabbing: the fewest
///   barriers.
/// - Elide mode: the latest existing barrier that lies between the two
///   (existing barriers are only candidates; implied ones are fixed). A
///   barrier no edge asks for is redundant.
class BarrierPlanner {
public:
  enum class Mode { Insert, Elide };
  BarrierPlanner(const DependenceAnalysis &deps, Mode mode)
      : deps(deps), mode(mode) {}

  void planBlock(ThreadBlockOp block);

  /// Insert mode: the operations that need a barrier right before them.
  llvm::ArrayRef<mlir::Operation *> getInsertions() const { return insertions; }
  /// Elide mode: the existing barriers that are needed.
  const llvm::DenseSet<mlir::Operation *> &getKept() const { return kept; }

private:
  void visit(mlir::Operation *op, mlir::Operation *pipeline);
  void visitPipeline(mlir::Operation *pipeline);
  void separate(const Dependence &dep, mlir::Operation *op,
                mlir::Operation *pipeline);
  mlir::Operation *chooseBarrier(const Dependence &dep,
                                 mlir::Operation *pipeline) const;

  const DependenceAnalysis &deps;
  Mode mode;
  SeparationTracker tracker;
  llvm::SmallVector<mlir::Operation *> insertions;
  llvm::DenseSet<mlir::Operation *> insertedBefore;
  llvm::DenseSet<mlir::Operation *> kept;
  /// Elide mode: the latest barrier seen outside pipelines, the latest one
  /// seen so far in the current walk of a body, and each body's last one.
  mlir::Operation *outerCandidate = nullptr;
  mlir::Operation *innerCandidate = nullptr;
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> lastBodyBarrier;
};

} // namespace mscl

#endif // MSCL_LIB_TRANSFORMS_BARRIERPLANNER_H
