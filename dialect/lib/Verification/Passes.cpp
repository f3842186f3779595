//===- Passes.cpp - Registration of the mscl verification passes ----------===//

#include "mscl/Verification/Passes.h"

namespace mscl {
#define GEN_PASS_REGISTRATION
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

void mscl::registerVerificationPasses() { registerMsclVerificationPasses(); }

void mscl::addVerificationPasses(mlir::OpPassManager &pm,
                                 bool acrossLaunches) {
  pm.addPass(createCheckSync());
  pm.addPass(createCheckCollective());
  if (acrossLaunches)
    pm.addPass(createCheckLaunches());
}
