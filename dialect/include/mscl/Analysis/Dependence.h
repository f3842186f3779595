//===- Dependence.h - Chunk dependences inside each thread block ---------===//
//
// The dependence analysis of mscl: which operations of one thread block
// must be ordered by a block barrier because they touch the same chunk and
// at least one of them writes it (execution-model.md, "Barriers inside a
// thread block").
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_ANALYSIS_DEPENDENCE_H
#define MSCL_ANALYSIS_DEPENDENCE_H

#include "mscl/Analysis/Accesses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <limits>
#include <vector>

namespace mscl {

enum class DependenceKind { RAW, WAR, WAW };
llvm::StringRef stringifyDependenceKind(DependenceKind kind);

/// An edge from an earlier operation of the same thread block.
struct Dependence {
  mlir::Operation *source;
  DependenceKind kind;
  /// Where the two accesses overlap.
  ChunkAttr chunk;
  /// The source ran in the previous iteration of the enclosing pipeline.
  bool loopCarried = false;
  /// A barrier or implied barrier lies between the two accesses.
  bool separated = false;
};

/// Tracks the barrier points of one thread block while it is walked in
/// program order and answers whether two operations are separated by one.
///
/// Every operation gets an even position when first visited; a barrier
/// point before/after operation `x` sits at pos(x) -/+ 1. Points outside
/// pipelines ("outer") only ever grow, so "is there a point after `a`"
/// is `lastOuterPoint > pos(a)` for the operation being visited now. A
/// pipeline body is a loop: it keeps the first and last point in its body.
/// A point inside a body separates `a` and `b` only if `a` or `b` is in that
/// body: when the trip count is 0 the body (and its barriers) never runs.
class SeparationTracker {
public:
  /// Gives `op` (in `pipeline`, or null) its position; walk order.
  void visit(mlir::Operation *op, mlir::Operation *pipeline);
  void enterPipeline(mlir::Operation *pipeline);
  void exitPipeline(mlir::Operation *pipeline);
  /// Records a point at `pos` in `pipeline` (null: outside pipelines).
  void addPoint(int64_t pos, mlir::Operation *pipeline);
  void addPointBefore(mlir::Operation *op) { addPointAt(op, -1); }
  void addPointAfter(mlir::Operation *op) { addPointAt(op, +1); }
  void addPointAt(mlir::Operation *op, int64_t offset = 0);

  int64_t getPos(mlir::Operation *op) const;
  mlir::Operation *getPipeline(mlir::Operation *op) const;
  /// Position of `op` seen from outside its pipeline.
  int64_t getOuterPos(mlir::Operation *op) const;

  /// Whether the accesses of `a` (earlier) and `b` (visited now, or in the
  /// second walk of its pipeline for a loop-carried pair) are separated.
  bool isSeparated(mlir::Operation *a, mlir::Operation *b,
                   bool loopCarried) const;
  /// Whether every later operation is separated from `a` by an outer point.
  bool isOuterSeparatedFromNow(mlir::Operation *a) const {
    return lastOuterPoint > getOuterPos(a);
  }

private:
  struct OpInfo {
    int64_t pos;
    mlir::Operation *pipeline;
  };
  struct PipeInfo {
    int64_t start = 0, end = 0;
    int64_t minPoint = std::numeric_limits<int64_t>::max();
    int64_t maxPoint = std::numeric_limits<int64_t>::min();
  };
  llvm::DenseMap<mlir::Operation *, OpInfo> ops;
  llvm::DenseMap<mlir::Operation *, PipeInfo> pipes;
  int64_t next = 0;
  int64_t lastOuterPoint = std::numeric_limits<int64_t>::min();
};

/// RAW/WAR/WAW edges between the operations of every thread block of a
/// program, at chunk granularity.
///
/// Each block is walked once in program order with, per chunk (buffer,
/// rank, index), its last writer(s) and the readers since that write. An
/// operation reading a chunk depends on its last writer (RAW); one writing
/// it depends on the last writer (WAW) and on every active reader (WAR).
/// Only these direct edges are recorded: once each is separated, every
/// transitive pair is too. Readers already separated from the current
/// position by a barrier outside pipelines are dropped, which keeps the
/// walk linear. A pipeline body is walked twice: the second walk records
/// loop-carried edges from the previous iteration (iteration t touches
/// bytes [t*unit, (t+1)*unit) of each chunk, so two accesses of one chunk
/// range starting at the same index never meet across iterations, except
/// in packet buffers, which are reused by every iteration). After a
/// pipeline, each chunk's state is merged with its state before it, since
/// the body may run zero times.
class DependenceAnalysis {
public:
  /// `op` must be an `mscl.program`.
  explicit DependenceAnalysis(mlir::Operation *op);

  /// Incoming edges of `op` (none for ops outside thread blocks).
  llvm::ArrayRef<Dependence> getDependences(mlir::Operation *op) const;
  /// The accesses of `op` as the analysis saw them.
  const OpAccesses &getAccesses(mlir::Operation *op) const;
  bool isPacketBuffer(llvm::StringRef buffer) const {
    return packetBuffers.contains(buffer);
  }
  const SwitchGroups &getSwitchGroups() const { return groups; }

private:
  struct Entry {
    mlir::Operation *op;
    ChunkAttr chunk;
    mlir::Operation *pipeline;
    /// 0 outside pipelines, 1 or 2 for the walk of the pipeline body.
    int walk;
  };
  struct Slot {
    llvm::SmallVector<Entry, 1> writers;
    llvm::SmallVector<Entry, 2> readers;
  };
  using Key = std::tuple<unsigned, int64_t, int64_t>;

  void analyzeBlock(mlir::Block &block, mlir::Operation *pipeline, int walk);
  void visitOp(mlir::Operation *op, mlir::Operation *pipeline, int walk);
  void addEdge(const Entry &from, mlir::Operation *to, ChunkAttr access,
               DependenceKind kind, mlir::Operation *pipeline, int walk);
  Slot &getSlot(ChunkAttr chunk, int64_t index, int walk);
  unsigned getBufferId(llvm::StringRef name);

  SwitchGroups groups;
  llvm::StringSet<> packetBuffers;
  llvm::StringMap<unsigned> bufferIds;
  llvm::DenseMap<mlir::Attribute, unsigned> chunkBuffers;
  /// Per thread-block operation (by index): its accesses and edges. Kept
  /// out of the map so that growing it moves only indices.
  llvm::DenseMap<mlir::Operation *, unsigned> opIndex;
  std::vector<OpAccesses> accesses;
  std::vector<llvm::SmallVector<Dependence, 2>> edges;

  // State of the walk of the current thread block.
  SeparationTracker tracker;
  llvm::DenseMap<Key, Slot> slots;
  /// Slot states from before the current pipeline, for the merge.
  llvm::DenseMap<Key, Slot> snapshot;
};

} // namespace mscl

#endif // MSCL_ANALYSIS_DEPENDENCE_H
