//===- Hiprtc.h - hipRTC through dlopen, for AMD GPUs ----------*- C++ -*-===//
//
// The HIP counterpart of Nvrtc.h: generated HIP compiled in process into an
// AMDGPU code object, with the embedded device headers and one option list.
// The hipRTC functions are loaded with dlopen on first use, from
// $MSCCLC_HIPRTC, libhiprtc.so, libhiprtc.so.6, libhiprtc.so.5, then
// libamdhip64.so.5 (Debian's ROCm 5.2 keeps them there), then
// $ROCM_PATH/lib/libhiprtc.so and /opt/rocm/lib/libhiprtc.so.
//
// hipRTC only knows the processors of its own ROCm release, and ROCm 5's
// aborts the process (no error) when asked for gfx940-gfx942 (MI300), so
// hiprtcSupportsArch() keeps those to ROCm 6 and later (the release read
// with hipRuntimeGetVersion; unknown counts as older); callers compile the
// rest with the offload compiler of HipOffload.h.
//
// Plain C++17 and no ROCm headers: the compiler and the runtime share it.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_JIT_HIPRTC_H
#define MSCCLC_JIT_HIPRTC_H

#include <string>
#include <vector>

namespace mscclc::jit {

/// The options of every hipRTC compile: the processor (`arch`, "gfx90a"),
/// the language standard, then `defines` in the order given.
std::vector<std::string> hiprtcOptions(const std::string &arch,
                                       const std::vector<std::string> &defines);

struct HiprtcRequest {
  std::string source;
  std::string sourceName = "mscclc_program.hip"; ///< for diagnostics only
  std::string arch = "gfx90a";
  std::vector<std::string> defines;
};

struct HiprtcResult {
  bool ok = false;
  std::string binary; ///< the AMDGPU ELF code object
  std::string log;    ///< hipRTC's log, or why it could not run
};

/// Compiles `request` with the embedded device headers. Check
/// hiprtcSupportsArch() first: an unsupported processor may end the process.
HiprtcResult compileWithHiprtc(const HiprtcRequest &request);

/// Whether hipRTC loads; `version` gets "major.minor", or the reason it
/// does not.
bool hiprtcAvailable(std::string *version);

/// Whether the hipRTC that loads can compile for `arch` without risk; if
/// not, `why` says so.
bool hiprtcSupportsArch(const std::string &arch, std::string *why);

} // namespace mscclc::jit

#endif // MSCCLC_JIT_HIPRTC_H
