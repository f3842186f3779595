//===- Backend.h - CUDA C++ and plan emission for mscl programs ----------===//
//
// The CUDA backend turns a (post-pass) `mscl.program` into one CUDA C++
// translation unit holding an `extern "C"` kernel per rank, plus the JSON
// plan the runtime needs to launch them (docs/backend.md, docs/plan.md,
// docs/kernel-abi.md). PTX and CUBINs come from that source through the
// NVRTC set-up the runtime shares (mscclc/jit/Nvrtc.h).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_BACKEND_BACKEND_H
#define MSCCLC_BACKEND_BACKEND_H

#include "mscl/IR/MsclOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mscclc {

struct CudaOptions {
  /// blockDim.x recorded in the plan (generated code reads blockDim.x).
  unsigned threadsPerBlock = 512;
  /// Paste the device headers into the source instead of #include-ing them.
  bool embedHeaders = false;
};

/// Emits the CUDA C++ of every rank of `program`. Errors (unsupported
/// constructs) are reported at the offending op's location.
mlir::LogicalResult emitCuda(mscl::ProgramOp program, llvm::raw_ostream &os,
                             const CudaOptions &options = {});

/// Emits the plan JSON (docs/plan.md).
mlir::LogicalResult emitPlan(mscl::ProgramOp program, llvm::raw_ostream &os,
                             const CudaOptions &options = {});

/// Emits both as one JSON document, {"format": "mscclc-bundle", "version":
/// 1, "plan": {...}, "cuda": "..."}: what the runtime compiles a program
/// from, with one run of the compiler.
mlir::LogicalResult emitBundle(mscl::ProgramOp program, llvm::raw_ostream &os,
                               const CudaOptions &options = {});

/// Finds the single `mscl.program` in `module`, or reports an error.
mscl::ProgramOp getSingleProgram(mlir::ModuleOp module);

} // namespace mscclc

#endif // MSCCLC_BACKEND_BACKEND_H
