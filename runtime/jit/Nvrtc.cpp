//===- Nvrtc.cpp - NVRTC through dlopen, with the one option list ---------===//
//
// The few NVRTC entry points used are declared here, so building needs no
// CUDA headers and running needs libnvrtc only when something is compiled.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Nvrtc.h"

#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <sys/stat.h>

#ifndef MSCCLC_BUILD_CUDA_INCLUDE_DIR
#define MSCCLC_BUILD_CUDA_INCLUDE_DIR ""
#endif

namespace mscclc::jit {
namespace {

typedef int NvrtcStatus;
typedef struct NvrtcProgramImpl *NvrtcProgram;

struct NvrtcApi {
  void *handle = nullptr;
  std::string error; ///< why it did not load
  NvrtcStatus (*version)(int *, int *) = nullptr;
  NvrtcStatus (*createProgram)(NvrtcProgram *, const char *, const char *,
                               int, const char *const *,
                               const char *const *) = nullptr;
  NvrtcStatus (*compileProgram)(NvrtcProgram, int,
                                const char *const *) = nullptr;
  NvrtcStatus (*getPTXSize)(NvrtcProgram, size_t *) = nullptr;
  NvrtcStatus (*getPTX)(NvrtcProgram, char *) = nullptr;
  NvrtcStatus (*getCUBINSize)(NvrtcProgram, size_t *) = nullptr;
  NvrtcStatus (*getCUBIN)(NvrtcProgram, char *) = nullptr;
  NvrtcStatus (*getLogSize)(NvrtcProgram, size_t *) = nullptr;
  NvrtcStatus (*getLog)(NvrtcProgram, char *) = nullptr;
  NvrtcStatus (*destroyProgram)(NvrtcProgram *) = nullptr;
  const char *(*errorString)(NvrtcStatus) = nullptr;
};

template <class F> bool bind(NvrtcApi &api, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(api.handle, name));
  if (!fn)
    api.error = std::string("libnvrtc lacks ") + name;
  return fn != nullptr;
}

/// Loads libnvrtc once per process.
const NvrtcApi &loadNvrtc() {
  static NvrtcApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    // A library named explicitly is the only one tried: the caller chose
    // it (and a missing one makes NVRTC unavailable, as tests of the
    // ahead-of-time store need).
    const char *explicitPath = std::getenv("MSCCLC_NVRTC");
    if (explicitPath && *explicitPath) {
      candidates.push_back(explicitPath);
    } else {
      for (const char *name :
           {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
        candidates.push_back(name);
      for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char *dir = std::getenv(var); dir && *dir)
          candidates.push_back(std::string(dir) + "/lib64/libnvrtc.so");
      candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    }
    for (const std::string &path : candidates) {
      api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (api.handle)
        break;
    }
    if (!api.handle && explicitPath && *explicitPath) {
      const char *why = dlerror();
      api.error = std::string("MSCCLC_NVRTC=") + explicitPath +
                  " cannot be loaded: " + (why ? why : "dlopen failed");
      return;
    }
    if (!api.handle) {
      api.error = "libnvrtc not found (tried $MSCCLC_NVRTC, libnvrtc.so, "
                  "$CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64); "
                  "install the CUDA toolkit or set MSCCLC_NVRTC to libnvrtc.so";
      return;
    }
    bool ok = bind(api, api.version, "nvrtcVersion") &&
              bind(api, api.createProgram, "nvrtcCreateProgram") &&
              bind(api, api.compileProgram, "nvrtcCompileProgram") &&
              bind(api, api.getPTXSize, "nvrtcGetPTXSize") &&
              bind(api, api.getPTX, "nvrtcGetPTX") &&
              bind(api, api.getCUBINSize, "nvrtcGetCUBINSize") &&
              bind(api, api.getCUBIN, "nvrtcGetCUBIN") &&
              bind(api, api.getLogSize, "nvrtcGetProgramLogSize") &&
              bind(api, api.getLog, "nvrtcGetProgramLog") &&
              bind(api, api.destroyProgram, "nvrtcDestroyProgram") &&
              bind(api, api.errorString, "nvrtcGetErrorString");
    if (!ok) {
      dlclose(api.handle);
      api.handle = nullptr;
    }
  });
  return api;
}

bool isDir(const std::string &path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Frees an NVRTC program on every path out of compileWithNvrtc.
struct ProgramGuard {
  const NvrtcApi &api;
  NvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      api.destroyProgram(&program);
  }
};

} // namespace

std::string cudaIncludeDir() {
  if (const char *dir = std::getenv("MSCCLC_CUDA_INCLUDE"); dir && isDir(dir))
    return dir;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(var); home && *home)
      if (std::string dir = std::string(home) + "/include"; isDir(dir))
        return dir;
  for (const char *dir :
       {MSCCLC_BUILD_CUDA_INCLUDE_DIR, "/usr/local/cuda/include"})
    if (isDir(dir))
      return dir;
  return "";
}

bool parseArch(const std::string &text, std::string *arch) {
  std::string digits = text.rfind("sm_", 0) == 0 ? text.substr(3) : text;
  std::string number = digits;
  if (!number.empty() && number.back() == 'a')
    number.pop_back();
  if (number.empty() || number.size() > 4)
    return false;
  for (char c : number)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  *arch = digits;
  return true;
}

std::vector<std::string> nvrtcOptions(const std::string &arch,
                                      NvrtcOutput output,
                                      const std::vector<std::string> &defines) {
  std::vector<std::string> options = {
      std::string("--gpu-architecture=") +
          (output == NvrtcOutput::PTX ? "compute_" : "sm_") + arch,
      "--std=c++17"};
  if (std::string include = cudaIncludeDir(); !include.empty())
    options.push_back("-I" + include);
  options.insert(options.end(), defines.begin(), defines.end());
  return options;
}

bool nvrtcAvailable(std::string *version) {
  const NvrtcApi &api = loadNvrtc();
  if (!api.handle) {
    *version = api.error;
    return false;
  }
  int major = 0, minor = 0;
  if (api.version(&major, &minor) != 0) {
    *version = "nvrtcVersion failed";
    return false;
  }
  *version = std::to_string(major) + "." + std::to_string(minor);
  return true;
}

NvrtcResult compileWithNvrtc(const NvrtcRequest &request) {
  NvrtcResult result;
  const NvrtcApi &api = loadNvrtc();
  if (!api.handle) {
    result.log = api.error;
    return result;
  }
  std::string arch;
  if (!parseArch(request.arch, &arch)) {
    result.log = "bad GPU architecture '" + request.arch +
                 "' (expected sm_XX, sm_XXa or a number such as 90)";
    return result;
  }
  std::vector<const char *> names, texts;
  for (const DeviceHeader &h : deviceHeaders()) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  ProgramGuard guard{api};
  NvrtcStatus status = api.createProgram(
      &guard.program, request.source.c_str(), request.sourceName.c_str(),
      static_cast<int>(names.size()), texts.data(), names.data());
  if (status != 0) {
    result.log = std::string("nvrtcCreateProgram: ") + api.errorString(status);
    return result;
  }
  std::vector<std::string> options =
      nvrtcOptions(arch, request.output, request.defines);
  std::vector<const char *> optionPtrs;
  for (const std::string &o : options)
    optionPtrs.push_back(o.c_str());
  status = api.compileProgram(guard.program,
                              static_cast<int>(optionPtrs.size()),
                              optionPtrs.data());
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
          std::string("nvrtcCompileProgram: ") + api.errorString(status);
    return result;
  }
  size_t size = 0;
  bool ptx = request.output == NvrtcOutput::PTX;
  status = ptx ? api.getPTXSize(guard.program, &size)
               : api.getCUBINSize(guard.program, &size);
  if (status == 0) {
    result.binary.resize(size);
    status = ptx ? api.getPTX(guard.program, result.binary.data())
                 : api.getCUBIN(guard.program, result.binary.data());
  }
  if (status != 0) {
    result.binary.clear();
    result.log = std::string(ptx ? "nvrtcGetPTX: " : "nvrtcGetCUBIN: ") +
                 api.errorString(status);
    return result;
  }
  if (ptx && !result.binary.empty() && result.binary.back() == '\0')
    result.binary.pop_back();
  result.ok = true;
  return result;
}

} // namespace mscclc::jit
