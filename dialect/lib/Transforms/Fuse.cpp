//===- Fuse.cpp - Every fusion of mscl, in a good order ------------------===//
//
// Merging reductions first gives reduce_put fusion whole reductions;
// batching signals first gives it plain puts; put + signal fusion needs the
// single-channel signals that merge-sync would otherwise combine, so it
// runs before it.
//
//===----------------------------------------------------------------------===//

#include "mscl/Transforms/Passes.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLFUSE
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct FusePass final : mscl::impl::MsclFuseBase<FusePass> {
  void runOnOperation() override {
    OpPassManager pm(ProgramOp::getOperationName());
    pm.addPass(createMsclMergeReduce());
    pm.addPass(createMsclBatchSignals());
    pm.addPass(createMsclFuseReducePut());
    pm.addPass(createMsclFusePutSignal());
    pm.addPass(createMsclMergeSync());
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace
