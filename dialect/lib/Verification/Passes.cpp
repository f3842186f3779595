//===- Passes.cpp - Registration of the mscl verification passes ----------===//

#include "mscl/Verification/Passes.h"

namespace mscl {
#define GEN_PASS_REGISTRATION
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

void mscl::registerVerificationPasses() { registerMsclVerificationPasses(); }

void mscl::addVerificationPasses(mlir::OpPassManager &pm,
                                 bool acrossLaunches) {
  // The checks run on each program: nested under a module, or in `pm`
  // itself when it already runs on programs.
  mlir::OpPassManager &programPm =
      pm.getOpName() == ProgramOp::getOperationName()
          ? pm
          : pm.nest(ProgramOp::getOperationName());
  programPm.addPass(createCheckSync());
  programPm.addPass(createCheckCollective());
  if (acrossLaunches)
    programPm.addPass(createCheckLaunches());
}
