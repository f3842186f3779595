//===- Emitters.h - The backend's outputs from one ProgramInfo -*- C++ -*-===//
//
// Each output is written from a ProgramInfo built once, so the CUDA and the
// plan of one `--emit=bundle` come from the same facts.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_EMITTERS_H
#define MSCCLC_LIB_BACKEND_EMITTERS_H

#include "ProgramInfo.h"
#include "mscclc/Backend/Backend.h"

namespace mscclc {
namespace backend {

/// The CUDA translation unit; nothing is written after an error.
mlir::LogicalResult writeCuda(const ProgramInfo &info, llvm::raw_ostream &os,
                              const CudaOptions &options);

/// The plan JSON (docs/plan.md).
void writePlan(const ProgramInfo &info, llvm::raw_ostream &os,
               const CudaOptions &options);

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_EMITTERS_H
