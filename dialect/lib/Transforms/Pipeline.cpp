//===- Pipeline.cpp - Registration and the optimisation pipeline ---------===//

#include "mscl/Transforms/Passes.h"

namespace mscl {
#define GEN_PASS_REGISTRATION
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

void mscl::registerTransformPasses() { registerMsclTransformsPasses(); }

void mscl::buildOptimizationPipeline(OpPassManager &pm, int64_t instances) {
  // Programs are isolated from above: nest under a module, or use `pm`
  // itself when it already runs on programs.
  OpPassManager &programPm =
      pm.getOpName() == ProgramOp::getOperationName()
          ? pm
          : pm.nest(ProgramOp::getOperationName());
  MsclReplicateOptions replicate;
  replicate.instances = instances;
  programPm.addPass(createMsclReplicate(replicate));
  programPm.addPass(createMsclFuse());
  // Fusion first: barriers are computed on the fused operations.
  programPm.addPass(createMsclInsertBarriers());
  programPm.addPass(createMsclElideBarriers());
}
