//===- Nvrtc.h - The one NVRTC set-up of compiler and runtime -*- C++ -*-===//
//
// `mscclc --emit=ptx|cubin` and the runtime's loader compile generated CUDA
// with the same NVRTC library, the same embedded device headers and the
// same option list, so a kernel built ahead of time is byte for byte the one
// the runtime would build. libnvrtc is loaded with dlopen on first use
// ($MSCCLC_NVRTC, libnvrtc.so[.13|.12], $CUDA_HOME/lib64, $CUDA_PATH/lib64,
// /usr/local/cuda/lib64): neither mscclc nor libmscclc needs it to start.
//
// Plain C++17 and no CUDA headers, so the compiler (which links LLVM, not
// CUDA) and the runtime share it.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_JIT_NVRTC_H
#define MSCCLC_JIT_NVRTC_H

#include <string>
#include <vector>

namespace mscclc::jit {

/// One device header (runtime/include/mscclc/device), embedded at build
/// time: its include name ("mscclc/device/Device.h") and its text.
struct DeviceHeader {
  const char *name;
  const char *text;
};

/// Every device header, sorted by name.
const std::vector<DeviceHeader> &deviceHeaders();

/// What NVRTC should produce.
enum class NvrtcOutput { PTX, CUBIN };

/// The CUDA include directory handed to NVRTC for the toolkit's own headers:
/// $MSCCLC_CUDA_INCLUDE, $CUDA_HOME/include, $CUDA_PATH/include, the
/// toolkit found at build time, /usr/local/cuda/include; the first that
/// exists, or "" when none does.
std::string cudaIncludeDir();

/// The options of every compile of generated code: the architecture
/// (`arch` as "90" or "90a"; compute_XX for PTX, sm_XX for a CUBIN),
/// the language standard, the CUDA include directory, then `defines`
/// (-DMSCCLC_DTYPE=..., ...) in the order given.
std::vector<std::string> nvrtcOptions(const std::string &arch,
                                      NvrtcOutput output,
                                      const std::vector<std::string> &defines);

/// Parses "sm_90", "sm_90a", "90" or "90a" into "90"/"90a"; false if
/// malformed.
bool parseArch(const std::string &text, std::string *arch);

struct NvrtcRequest {
  std::string source;
  std::string sourceName = "mscclc_program.cu"; ///< for diagnostics only
  std::string arch = "90";                      ///< see nvrtcOptions
  NvrtcOutput output = NvrtcOutput::CUBIN;
  std::vector<std::string> defines;
};

struct NvrtcResult {
  bool ok = false;
  std::string binary; ///< PTX text or CUBIN bytes
  std::string log;    ///< NVRTC's log, or why it could not run
};

/// Compiles `request` with the embedded device headers.
NvrtcResult compileWithNvrtc(const NvrtcRequest &request);

/// Whether libnvrtc loads; `version` gets "major.minor", or the reason it
/// does not.
bool nvrtcAvailable(std::string *version);

} // namespace mscclc::jit

#endif // MSCCLC_JIT_NVRTC_H
