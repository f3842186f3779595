//===- Hiprtc.cpp - hipRTC through dlopen, with the one option list -------===//
//
// The few hipRTC entry points used are declared here, so building needs no
// ROCm headers and running needs hipRTC only when something is compiled.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Hiprtc.h"
#include "mscclc/jit/HipOffload.h"
#include "mscclc/jit/Nvrtc.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace mscclc::jit {
namespace {

typedef int HiprtcStatus;
typedef struct HiprtcProgramImpl *HiprtcProgram;

struct HiprtcApi {
  void *handle = nullptr;
  std::string library; ///< the file it came from
  std::string error;   ///< why it did not load
  HiprtcStatus (*version)(int *, int *) = nullptr;
  HiprtcStatus (*createProgram)(HiprtcProgram *, const char *, const char *,
                                int, const char **, const char **) = nullptr;
  HiprtcStatus (*compileProgram)(HiprtcProgram, int, const char **) = nullptr;
  HiprtcStatus (*getCodeSize)(HiprtcProgram, size_t *) = nullptr;
  HiprtcStatus (*getCode)(HiprtcProgram, char *) = nullptr;
  HiprtcStatus (*getLogSize)(HiprtcProgram, size_t *) = nullptr;
  HiprtcStatus (*getLog)(HiprtcProgram, char *) = nullptr;
  HiprtcStatus (*destroyProgram)(HiprtcProgram *) = nullptr;
  const char *(*errorString)(HiprtcStatus) = nullptr;
  /// The ROCm release's major version, from hipRuntimeGetVersion of the
  /// library or its dependencies (hiprtcVersion says 9.0 in ROCm 5.2); 0
  /// when unknown.
  int rocmMajor = 0;
};

template <class F> bool bind(HiprtcApi &api, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(api.handle, name));
  if (!fn)
    api.error = api.library + " lacks " + name;
  return fn != nullptr;
}

/// Loads hipRTC once per process: the first library that has every entry
/// point (libamdhip64.so.5 is tried after the libhiprtc names because
/// later ROCm releases moved hipRTC out of it).
const HiprtcApi &loadHiprtc() {
  static HiprtcApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("MSCCLC_HIPRTC"); env && *env)
      candidates.push_back(env);
    for (const char *name : {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5",
                             "libamdhip64.so.5"})
      candidates.push_back(name);
    if (const char *dir = std::getenv("ROCM_PATH"); dir && *dir)
      candidates.push_back(std::string(dir) + "/lib/libhiprtc.so");
    candidates.push_back("/opt/rocm/lib/libhiprtc.so");
    api.error = "hipRTC not found (tried $MSCCLC_HIPRTC, libhiprtc.so[.6|.5], "
                "libamdhip64.so.5, $ROCM_PATH/lib, /opt/rocm/lib); install "
                "ROCm's hipRTC or set MSCCLC_HIPRTC to the library holding it";
    for (const std::string &path : candidates) {
      api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!api.handle)
        continue;
      api.library = path;
      bool ok = bind(api, api.version, "hiprtcVersion") &&
                bind(api, api.createProgram, "hiprtcCreateProgram") &&
                bind(api, api.compileProgram, "hiprtcCompileProgram") &&
                bind(api, api.getCodeSize, "hiprtcGetCodeSize") &&
                bind(api, api.getCode, "hiprtcGetCode") &&
                bind(api, api.getLogSize, "hiprtcGetProgramLogSize") &&
                bind(api, api.getLog, "hiprtcGetProgramLog") &&
                bind(api, api.destroyProgram, "hiprtcDestroyProgram") &&
                bind(api, api.errorString, "hiprtcGetErrorString");
      if (ok) {
        api.error.clear();
        using RuntimeVersion = int (*)(int *);
        auto runtimeVersion = reinterpret_cast<RuntimeVersion>(
            dlsym(api.handle, "hipRuntimeGetVersion"));
        int v = 0; // HIP_VERSION: major * 10000000 + minor * 100000 + patch
        if (runtimeVersion && runtimeVersion(&v) == 0)
          api.rocmMajor = v / 10000000;
        return;
      }
      dlclose(api.handle);
      api.handle = nullptr;
    }
  });
  return api;
}

/// Frees a hipRTC program on every path out of compileWithHiprtc.
struct ProgramGuard {
  const HiprtcApi &api;
  HiprtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      api.destroyProgram(&program);
  }
};

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
  const HiprtcApi &api = loadHiprtc();
  if (!api.handle) {
    *version = api.error;
    return false;
  }
  int major = 0, minor = 0;
  if (api.version(&major, &minor) != 0) {
    *version = "hiprtcVersion failed";
    return false;
  }
  *version = std::to_string(major) + "." + std::to_string(minor);
  return true;
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
  std::vector<const char *> names, texts;
  for (const DeviceHeader &h : deviceHeaders()) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  ProgramGuard guard{api};
  HiprtcStatus status = api.createProgram(
      &guard.program, request.source.c_str(), request.sourceName.c_str(),
      static_cast<int>(names.size()), texts.data(), names.data());
  if (status != 0) {
    result.log = std::string("hiprtcCreateProgram: ") + api.errorString(status);
    return result;
  }
  std::vector<std::string> options =
      hiprtcOptions(request.arch, request.defines);
  std::vector<const char *> optionPtrs;
  for (const std::string &o : options)
    optionPtrs.push_back(o.c_str());
  status = api.compileProgram(
      guard.program, static_cast<int>(optionPtrs.size()), optionPtrs.data());
  size_t logSize = 0;
  if (api.getLogSize(guard.program, &logSize) == 0 && logSize > 1) {
    result.log.resize(logSize);
    if (api.getLog(guard.program, result.log.data()) != 0)
      result.log.clear();
    while (!result.log.empty() &&
           (result.log.back() == '\0' || result.log.back() == '\n'))
      result.log.pop_back();
  }
  if (status != 0) {
    if (result.log.empty())
      result.log =
          std::string("hiprtcCompileProgram: ") + api.errorString(status);
    return result;
  }
  size_t size = 0;
  status = api.getCodeSize(guard.program, &size);
  if (status == 0 && size > 0) {
    result.binary.resize(size);
    status = api.getCode(guard.program, result.binary.data());
  }
  if (status != 0 || size == 0) {
    result.binary.clear();
    result.log = std::string("hiprtcGetCode: ") +
                 (status != 0 ? api.errorString(status) : "empty code object");
    return result;
  }
  result.ok = true;
  return result;
}

} // namespace mscclc::jit
