//===- Passes.h - Static verification passes of mscl ----------------------===//
//
// mscl-check-sync proves a program free of deadlocks and races;
// mscl-check-collective proves it computes its declared collective;
// mscl-check-launches that back-to-back launches of it do not race. Each
// runs on one mscl.program (a pass manager nests them under a module).
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_VERIFICATION_PASSES_H
#define MSCL_VERIFICATION_PASSES_H

#include "mscl/IR/MsclOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mscl {

#define GEN_PASS_DECL
#include "mscl/Verification/Passes.h.inc"

/// Registers mscl-check-sync, mscl-check-collective and
/// mscl-check-launches with the global pass registry (for mscl-opt and
/// textual pipelines).
void registerVerificationPasses();

/// Appends the static checks to `pm`, on each program
/// (programPassManager): check-sync, check-collective, then (with
/// `acrossLaunches`) check-launches. A failing check fails the pipeline.
void addVerificationPasses(mlir::OpPassManager &pm,
                           bool acrossLaunches = true);

} // namespace mscl

#endif // MSCL_VERIFICATION_PASSES_H
