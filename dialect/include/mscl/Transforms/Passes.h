//===- Passes.h - Transformation passes of the mscl dialect --------------===//
#ifndef MSCL_TRANSFORMS_PASSES_H
#define MSCL_TRANSFORMS_PASSES_H

#include "mscl/IR/MsclOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mscl {

#define GEN_PASS_DECL
#include "mscl/Transforms/Passes.h.inc"

/// Registers every transformation pass of this library (mscl-opt flags).
void registerTransformPasses();

/// Adds the optimisation pipeline for the programs under `pm`'s anchor
/// (a module or an `mscl.program`): replicate -> fuse -> insert-barriers ->
/// elide-barriers. `instances` = 0 takes the factor from each program.
void buildOptimizationPipeline(mlir::OpPassManager &pm, int64_t instances);

} // namespace mscl

#endif // MSCL_TRANSFORMS_PASSES_H
