//===- Pipeline.cpp - Registration and the optimisation pipeline ---------===//

#include "mscl/Transforms/Passes.h"

#include "mscl/IR/ProgramPassManager.h"

#include "mlir/Pass/PassRegistry.h"

namespace mscl {
#define GEN_PASS_REGISTRATION
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {
struct OptimizeOptions : PassPipelineOptions<OptimizeOptions> {
  Option<int64_t> instances{
      *this, "instances",
      llvm::cl::desc("Replication factor (0: each program's `instances`)"),
      llvm::cl::init(0)};
};
} // namespace

void mscl::registerTransformPasses() {
  registerMsclTransformsPasses();
  PassPipelineRegistration<OptimizeOptions>(
      "mscl-optimize",
      "The optimisation pipeline: replicate, fuse, insert and elide barriers",
      [](OpPassManager &pm, const OptimizeOptions &options) {
        buildOptimizationPipeline(pm, options.instances);
      });
}

void mscl::buildOptimizationPipeline(OpPassManager &pm, int64_t instances) {
  OpPassManager &programPm = programPassManager(pm);
  MsclReplicateOptions replicate;
  replicate.instances = instances;
  programPm.addPass(createMsclReplicate(replicate));
  programPm.addPass(createMsclFuse());
  // Fusion first: barriers are computed on the fused operations.
  programPm.addPass(createMsclInsertBarriers());
  programPm.addPass(createMsclElideBarriers());
}
