//===- TestReorderSources.cpp - A planted bug for translation validation --===//
//
// Swaps the last two sources of one reduction, as a wrong fusion might:
// same contributions, another order of summation. Tests run it under
// translation validation (test/Verification/translation-*.mlir), which must
// name this pass.
//
//===----------------------------------------------------------------------===//

#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLTESTREORDERSOURCES
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct TestReorderSourcesPass final
    : mscl::impl::MsclTestReorderSourcesBase<TestReorderSourcesPass> {
  void runOnOperation() override {
    ReduceOp target;
    getOperation().walk([&](ReduceOp reduce) {
      if (reduce.getSrcs().size() >= 2 &&
          (!target ||
           reduce->getParentOfType<RankOp>().getRank() >
               target->getParentOfType<RankOp>().getRank()))
        target = reduce;
    });
    if (!target)
      return;
    SmallVector<Attribute> srcs(target.getSrcs().begin(),
                                target.getSrcs().end());
    std::swap(srcs[srcs.size() - 2], srcs.back());
    target.setSrcsAttr(ArrayAttr::get(&getContext(), srcs));
  }
};

} // namespace
