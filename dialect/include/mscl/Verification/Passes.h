//===- Passes.h - Static verification passes of mscl ----------------------===//
//
// mscl-check-sync proves a program free of deadlocks and races;
// mscl-check-collective proves it computes its declared collective;
// mscl-check-launches that back-to-back launches of it do not race. All
// run on any operation and check every mscl.program nested in it.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_VERIFICATION_PASSES_H
#define MSCL_VERIFICATION_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mscl {

#define GEN_PASS_DECL
#include "mscl/Verification/Passes.h.inc"

/// Registers mscl-check-sync, mscl-check-collective and
/// mscl-check-launches with the global pass registry (for mscl-opt and
/// textual pipelines).
void registerVerificationPasses();

/// Appends the static checks to `pm`: check-sync, check-collective, then
/// (with `acrossLaunches`) check-launches. A failing check fails the
/// pipeline.
void addVerificationPasses(mlir::OpPassManager &pm,
                           bool acrossLaunches = true);

} // namespace mscl

#endif // MSCL_VERIFICATION_PASSES_H
