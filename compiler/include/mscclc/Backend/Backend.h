//===- Backend.h - CUDA/HIP C++ and plan emission for mscl programs ------===//
//
// The backend turns a (post-pass) `mscl.program` into one CUDA or HIP C++
// translation unit holding an `extern "C"` kernel per rank, plus the JSON
// plan the runtime needs to launch them (docs/backend.md, docs/plan.md,
// docs/kernel-abi.md). One emitter writes both vendors' source; what
// differs lives in the device library. PTX and CUBINs come from the CUDA
// source through the NVRTC set-up the runtime shares (mscclc/jit/Nvrtc.h).
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

/// The GPU vendor the kernels are written for.
enum class Target { CUDA, HIP };

struct EmitOptions {
  Target target = Target::CUDA;
  /// blockDim.x recorded in the plan (generated code reads blockDim.x).
  unsigned threadsPerBlock = 512;
  /// Paste the device headers into the source instead of #include-ing them.
  bool embedHeaders = false;
};

/// Emits the CUDA or HIP C++ (options.target) of every rank of `program`.
/// Errors (unsupported constructs, switch channels for HIP) are reported at
/// the offending op's location.
mlir::LogicalResult emitKernels(mscl::ProgramOp program, llvm::raw_ostream &os,
                                const EmitOptions &options = {});

/// Emits the plan JSON (docs/plan.md).
mlir::LogicalResult emitPlan(mscl::ProgramOp program, llvm::raw_ostream &os,
                             const EmitOptions &options = {});

/// Emits both as one JSON document, {"format": "mscclc-bundle", "version":
/// 1, "plan": {...}, "cuda": "..."}: what the runtime compiles a program
/// from, with one run of the compiler (CUDA only).
mlir::LogicalResult emitBundle(mscl::ProgramOp program, llvm::raw_ostream &os,
                               const EmitOptions &options = {});

/// Finds the single `mscl.program` in `module`, or reports an error.
mscl::ProgramOp getSingleProgram(mlir::ModuleOp module);

} // namespace mscclc

#endif // MSCCLC_BACKEND_BACKEND_H
