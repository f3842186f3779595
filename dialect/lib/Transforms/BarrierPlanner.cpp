//===- BarrierPlanner.cpp - Where thread-block barriers are needed -------===//

#include "BarrierPlanner.h"

using namespace mlir;
using namespace mscl;

void BarrierPlanner::planBlock(ThreadBlockOp block) {
  tracker = SeparationTracker();
  outerCandidate = innerCandidate = nullptr;
  for (Operation &op : block.getBody().front())
    visit(&op, nullptr);
}

void BarrierPlanner::visit(Operation *op, Operation *pipeline) {
  if (isa<PipelineOp>(op)) {
    visitPipeline(op);
    return;
  }
  tracker.visit(op, pipeline);
  if (isa<BarrierOp>(op)) {
    if (mode == Mode::Insert)
      tracker.addPointAt(op);
    else
      (pipeline ? innerCandidate : outerCandidate) = op;
    return;
  }
  ImpliedBarriers implied = getImpliedBarriers(op);
  if (implied.before)
    tracker.addPointBefore(op);
  for (const Dependence &dep : deps.getDependences(op))
    if (!dep.loopCarried && !tracker.isSeparated(dep.source, op, false))
      separate(dep, op, pipeline);
  if (implied.after)
    tracker.addPointAfter(op);
}

void BarrierPlanner::visitPipeline(Operation *pipeline) {
  Block &body = pipeline->getRegion(0).front();
  tracker.enterPipeline(pipeline);
  innerCandidate = nullptr;
  for (Operation &op : body)
    visit(&op, pipeline);
  lastBodyBarrier[pipeline] = innerCandidate;
  // Second walk: iteration t+1 against what iteration t left behind.
  innerCandidate = nullptr;
  for (Operation &op : body) {
    if (isa<BarrierOp>(op)) {
      if (mode == Mode::Elide)
        innerCandidate = &op;
      continue;
    }
    for (const Dependence &dep : deps.getDependences(&op))
      if (dep.loopCarried && !tracker.isSeparated(dep.source, &op, true))
        separate(dep, &op, pipeline);
  }
  innerCandidate = nullptr;
  tracker.exitPipeline(pipeline);
}

Operation *BarrierPlanner::chooseBarrier(const Dependence &dep,
                                         Operation *pipeline) const {
  Operation *source = dep.source;
  Operation *sourcePipeline = tracker.getPipeline(source);
  bool sameBody = pipeline && sourcePipeline == pipeline && !dep.loopCarried;
  // Latest first: a barrier of this body before the operation...
  if (pipeline && innerCandidate &&
      (!sameBody || tracker.getPos(innerCandidate) > tracker.getPos(source)))
    return innerCandidate;
  // ... one outside pipelines between the two ...
  if (!(pipeline && sourcePipeline == pipeline) && outerCandidate &&
      tracker.getPos(outerCandidate) > tracker.getOuterPos(source))
    return outerCandidate;
  // ... or the last barrier of the source's body, after the source.
  if (sourcePipeline && !sameBody)
    if (Operation *last = lastBodyBarrier.lookup(sourcePipeline))
      if (tracker.getPos(last) > tracker.getPos(source))
        return last;
  return nullptr;
}

void BarrierPlanner::separate(const Dependence &dep, Operation *op,
                              Operation *pipeline) {
  if (mode == Mode::Insert) {
    // An edge from outside into a body is cut before the pipeline, where
    // the barrier runs once rather than once per iteration.
    if (pipeline && !dep.loopCarried &&
        tracker.getPipeline(dep.source) != pipeline) {
      op = pipeline;
      pipeline = nullptr;
    }
    if (insertedBefore.insert(op).second)
      insertions.push_back(op);
    tracker.addPoint(tracker.getPos(op) - 1, pipeline);
    return;
  }
  // No barrier in between: the program has an unseparated dependence that
  // only mscl-insert-barriers can fix; elision leaves it as it is.
  if (Operation *barrier = chooseBarrier(dep, pipeline)) {
    kept.insert(barrier);
    tracker.addPointAt(barrier);
  }
}
