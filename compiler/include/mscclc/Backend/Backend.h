//===- Backend.h - CUDA C++ and plan emission for mscl programs ----------===//
//
// The CUDA backend turns a (post-pass) `mscl.program` into one CUDA C++
// translation unit holding an `extern "C"` kernel per rank, plus the JSON
// plan the runtime needs to launch them (docs/backend.md, docs/plan.md,
// docs/kernel-abi.md). The NVRTC entry point compiles that source to PTX or
// a CUBIN without a GPU; libnvrtc is loaded at run time, so mscclc itself
// does not depend on CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_BACKEND_BACKEND_H
#define MSCCLC_BACKEND_BACKEND_H

#include "mscl/IR/MsclOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

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

/// Finds the single `mscl.program` in `module`, or reports an error.
mscl::ProgramOp getSingleProgram(mlir::ModuleOp module);

/// The device headers (runtime/include/mscclc/device/*.h), embedded at build
/// time: include names ("mscclc/device/Device.h") and their text.
struct EmbeddedHeader {
  const char *name;
  const char *text;
};
llvm::ArrayRef<EmbeddedHeader> getDeviceHeaders();

/// What NVRTC should produce.
enum class NvrtcOutput { PTX, CUBIN };

struct NvrtcRequest {
  std::string source;
  std::string sourceName = "mscclc_program.cu";
  std::string arch = "sm_90"; ///< sm_XX
  NvrtcOutput output = NvrtcOutput::PTX;
  std::vector<std::string> extraOptions; ///< e.g. -DMSCCLC_DTYPE=f16
};

struct NvrtcResult {
  bool ok = false;
  std::string binary; ///< PTX text or CUBIN bytes
  std::string log;    ///< compiler log, or why NVRTC is unavailable
};

/// Compiles through NVRTC (dlopen'ed: $MSCCLC_NVRTC, libnvrtc.so,
/// $CUDA_HOME/lib64, /usr/local/cuda/lib64). The device headers are passed
/// in memory, so no include path is needed.
NvrtcResult compileWithNvrtc(const NvrtcRequest &request);

/// Whether libnvrtc can be loaded; `version` gets "major.minor" or the
/// reason it cannot.
bool isNvrtcAvailable(std::string &version);

} // namespace mscclc

#endif // MSCCLC_BACKEND_BACKEND_H
