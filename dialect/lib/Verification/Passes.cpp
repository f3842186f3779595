//===- Passes.cpp - Registration of the mscl verification passes ----------===//

#include "mscl/Verification/Passes.h"

#include "mscl/IR/ProgramPassManager.h"

namespace mscl {
#define GEN_PASS_REGISTRATION
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

void mscl::registerVerificationPasses() { registerMsclVerificationPasses(); }

void mscl::addVerificationPasses(mlir::OpPassManager &pm,
                                 bool acrossLaunches) {
  mlir::OpPassManager &programPm = programPassManager(pm);
  programPm.addPass(createCheckSync());
  programPm.addPass(createCheckCollective());
  if (acrossLaunches)
    programPm.addPass(createCheckLaunches());
}
