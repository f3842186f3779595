//===- Hiprtc.cpp - hipRTC through dlopen, with the one option list -------===//
//
// The entry points are declared in RtcLibrary.h, so building needs no ROCm
// headers and running needs hipRTC only when something is compiled.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Hiprtc.h"
#include "mscclc/jit/HipOffload.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Settings.h"

#include "RtcLibrary.h"

#include <dlfcn.h>
#include <mutex>

namespace mscclc::jit {
namespace {

/// The hipRTC entry points beyond those NVRTC shares, and the release.
struct HiprtcApi : rtc::Library {
  rtc::CodeSizeFn getCodeSize = nullptr;
  rtc::CodeFn getCode = nullptr;
  /// The ROCm release's major version, from hipRuntimeGetVersion of the
  /// library or its dependencies (hiprtcVersion says 9.0 in ROCm 5.2); 0
  /// when unknown.
  int rocmMajor = 0;
};

/// Loads hipRTC once per process: the first library that has every entry
/// point (libamdhip64.so.5 is tried after the libhiprtc names because
/// later ROCm releases moved hipRTC out of it).
const HiprtcApi &loadHiprtc() {
  static HiprtcApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    api.prefix = "hiprtc";
    std::vector<std::string> candidates;
    if (std::string own = rt::get(rt::setting::Hiprtc); !own.empty())
      candidates.push_back(own);
    for (const char *name : {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5",
                             "libamdhip64.so.5"})
      candidates.push_back(name);
    if (std::string rocm = rt::get(rt::setting::RocmPath); !rocm.empty())
      candidates.push_back(rocm + "/lib/libhiprtc.so");
    candidates.push_back("/opt/rocm/lib/libhiprtc.so");
    rtc::open(&api, candidates,
              [](rtc::Library &) {
                return api.bind(api.getCodeSize, "GetCodeSize") &&
                       api.bind(api.getCode, "GetCode");
              },
              "hipRTC not found (tried $MSCCLC_HIPRTC, libhiprtc.so[.6|.5], "
              "libamdhip64.so.5, $ROCM_PATH/lib, /opt/rocm/lib); install "
              "ROCm's hipRTC or set MSCCLC_HIPRTC to the library holding it");
    if (!api.handle)
      return;
    using RuntimeVersion = int (*)(int *);
    auto runtimeVersion = reinterpret_cast<RuntimeVersion>(
        dlsym(api.handle, "hipRuntimeGetVersion"));
    int v = 0; // HIP_VERSION: major * 10000000 + minor * 100000 + patch
    if (runtimeVersion && runtimeVersion(&v) == 0)
      api.rocmMajor = v / 10000000;
  });
  return api;
}

} // namespace

std::vector<std::string>
hiprtcOptions(const std::string &arch,
              const std::vector<std::string> &defines) {
  std::vector<std::string> options = {"--gpu-architecture=" + arch,
                                      "-std=c++17"};
  options.insert(options.end(), defines.begin(), defines.end());
  return options;
}

bool hiprtcAvailable(std::string *version) {
  return rtc::version(loadHiprtc(), version);
}

bool hiprtcSupportsArch(const std::string &arch, std::string *why) {
  if (!isGfxArch(arch)) {
    *why = "'" + arch + "' is not an AMDGPU processor (gfx...)";
    return false;
  }
  std::string version;
  if (!hiprtcAvailable(&version)) {
    *why = version;
    return false;
  }
  // MI300 (gfx940-942) came with ROCm 6; ROCm 5.2's hipRTC aborts for it.
  // A release that cannot be told is taken for an old one.
  int major = loadHiprtc().rocmMajor;
  if (arch.compare(0, 5, "gfx94") == 0 && major < 6) {
    *why = "the hipRTC of ROCm " +
           (major > 0 ? std::to_string(major) : std::string("(unknown)")) +
           " predates " + arch + " (ROCm 6 has it)";
    return false;
  }
  return true;
}

HiprtcResult compileWithHiprtc(const HiprtcRequest &request) {
  HiprtcResult result;
  const HiprtcApi &api = loadHiprtc();
  if (!api.handle) {
    result.log = api.error;
    return result;
  }
  if (!isGfxArch(request.arch)) {
    result.log = "'" + request.arch + "' is not an AMDGPU processor (gfx...)";
    return result;
  }
  rtc::Compiled c =
      rtc::compile(api, request.source, request.sourceName,
                   hiprtcOptions(request.arch, request.defines),
                   api.getCodeSize, api.getCode, "GetCode");
  result.ok = c.ok;
  result.binary = std::move(c.binary);
  result.log = std::move(c.log);
  return result;
}

} // namespace mscclc::jit
