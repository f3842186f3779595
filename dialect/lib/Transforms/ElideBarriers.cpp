//===- ElideBarriers.cpp - Remove barriers no dependence needs -----------===//

#include "BarrierPlanner.h"
#include "mscl/Transforms/Passes.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLELIDEBARRIERS
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct ElideBarriersPass final
    : mscl::impl::MsclElideBarriersBase<ElideBarriersPass> {
  void runOnOperation() override {
    ProgramOp program = getOperation();
    const auto &deps = getAnalysis<DependenceAnalysis>();
    BarrierPlanner planner(deps, BarrierPlanner::Mode::Elide);
    SmallVector<Operation *> redundant;
    for (auto rank : program.getBodyBlock().getOps<RankOp>())
      for (auto block : rank.getBody().front().getOps<ThreadBlockOp>())
        planner.planBlock(block);
    program.walk([&](BarrierOp barrier) {
      if (!planner.getKept().contains(barrier))
        redundant.push_back(barrier);
    });
    if (redundant.empty()) {
      markAllAnalysesPreserved();
      return;
    }
    for (Operation *op : redundant)
      op->erase();
  }
};

} // namespace
