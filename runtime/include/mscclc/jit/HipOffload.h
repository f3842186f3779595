//===- HipOffload.h - HIP code objects from an offload compiler -*- C++ -*-===//
//
// `mscclc --emit=hsaco` compiles generated HIP ahead of time with a HIP
// offload compiler, where hipRTC is absent (Debian's ROCm 5.2 has it only
// inside libamdhip64.so.5). The device headers are the embedded ones
// (deviceHeaders(), mscclc/jit/Nvrtc.h), written next to the source, so no
// include path is needed. Compilers tried, first success wins:
//  1. $MSCCLC_HIPCC, else `hipcc` (ROCm; 5.2 knows gfx90a, not gfx942);
//  2. $MSCCLC_HIP_CLANG, else `clang++-22`, linking ROCm's device
//     libraries from $MSCCLC_ROCM_DEVICE_LIBS (default: Debian's
//     /usr/lib/x86_64-linux-gnu/amdgcn/bitcode) by hand, since ROCm 5.2
//     has no gfx942 library for clang to find (docs/backend.md).
// The output is one AMDGPU ELF code object holding the unit's kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_JIT_HIPOFFLOAD_H
#define MSCCLC_JIT_HIPOFFLOAD_H

#include <string>
#include <vector>

namespace mscclc::jit {

struct HipOffloadRequest {
  std::string source;
  std::string arch = "gfx90a";      ///< an AMDGPU processor, "gfx" + hex digits
  std::vector<std::string> defines; ///< -DMSCCLC_DTYPE=..., ...
};

struct HipOffloadResult {
  bool ok = false;
  std::string binary; ///< the ELF code object
  std::string log;    ///< each compiler's output, or why none could run
};

/// Whether `arch` names an AMDGPU processor ("gfx90a", "gfx942").
bool isGfxArch(const std::string &arch);

/// Compiles `request` to a code object for request.arch.
HipOffloadResult compileWithHipOffload(const HipOffloadRequest &request);

} // namespace mscclc::jit

#endif // MSCCLC_JIT_HIPOFFLOAD_H
