//===- Emitters.h - The backend's outputs from one ProgramInfo -*- C++ -*-===//
//
// Each output is written from a ProgramInfo built once, so the kernels and
// the plan of one `--emit=bundle` come from the same facts.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_EMITTERS_H
#define MSCCLC_LIB_BACKEND_EMITTERS_H

#include "ProgramInfo.h"
#include "mscclc/Backend/Backend.h"

namespace mscclc {
namespace backend {

/// The CUDA or HIP translation unit; nothing is written after an error.
mlir::LogicalResult writeKernels(const ProgramInfo &info, llvm::raw_ostream &os,
                                 const EmitOptions &options);

/// The plan JSON (docs/plan.md).
void writePlan(const ProgramInfo &info, llvm::raw_ostream &os,
               const EmitOptions &options);

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_EMITTERS_H
