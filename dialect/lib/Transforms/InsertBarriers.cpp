//===- InsertBarriers.cpp - Separate every dependence by a barrier -------===//

#include "BarrierPlanner.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLINSERTBARRIERS
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct InsertBarriersPass final
    : mscl::impl::MsclInsertBarriersBase<InsertBarriersPass> {
  void runOnOperation() override {
    ProgramOp program = getOperation();
    const auto &deps = getAnalysis<DependenceAnalysis>();
    BarrierPlanner planner(deps, BarrierPlanner::Mode::Insert);
    for (auto rank : program.getBodyBlock().getOps<RankOp>())
      for (auto block : rank.getBody().front().getOps<ThreadBlockOp>())
        planner.planBlock(block);
    if (planner.getInsertions().empty()) {
      markAllAnalysesPreserved();
      return;
    }
    OpBuilder builder(&getContext());
    for (Operation *op : planner.getInsertions()) {
      builder.setInsertionPoint(op);
      BarrierOp::create(builder, op->getLoc());
    }
  }
};

} // namespace
