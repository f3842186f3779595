//===- Nvrtc.cpp - Ahead-of-time compilation through a dlopen'ed NVRTC ---===//
//
// mscclc must run where CUDA is not installed, so libnvrtc is loaded with
// dlopen only when PTX or a CUBIN is asked for. The device headers travel
// in memory (getDeviceHeaders), so no include path is needed.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Backend/Backend.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace mscclc {
namespace {

// The few NVRTC entry points used, declared here so that building mscclc
// needs no CUDA headers.
typedef int NvrtcStatus;
typedef struct NvrtcProgramImpl *NvrtcProgram;

struct NvrtcApi {
  void *handle = nullptr;
  std::string error;
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
    if (const char *env = std::getenv("MSCCLC_NVRTC"))
      candidates.push_back(env);
    for (const char *name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
      candidates.push_back(name);
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *dir = std::getenv(var))
        candidates.push_back(std::string(dir) + "/lib64/libnvrtc.so");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    for (const std::string &path : candidates) {
      api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (api.handle)
        break;
    }
    if (!api.handle) {
      api.error = "libnvrtc not found (tried $MSCCLC_NVRTC, libnvrtc.so, "
                  "$CUDA_HOME/lib64, /usr/local/cuda/lib64); install the "
                  "CUDA toolkit or set MSCCLC_NVRTC to libnvrtc.so";
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

/// "sm_90" / "sm_90a" -> the digits and suffix; false if malformed.
bool parseArch(llvm::StringRef arch, std::string &number) {
  if (!arch.consume_front("sm_"))
    return false;
  llvm::StringRef digits = arch;
  if (digits.ends_with("a"))
    digits = digits.drop_back();
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
    return false;
  number = arch.str();
  return true;
}

} // namespace

bool isNvrtcAvailable(std::string &version) {
  const NvrtcApi &api = loadNvrtc();
  if (!api.handle) {
    version = api.error;
    return false;
  }
  int major = 0, minor = 0;
  api.version(&major, &minor);
  version = std::to_string(major) + "." + std::to_string(minor);
  return true;
}

NvrtcResult compileWithNvrtc(const NvrtcRequest &request) {
  NvrtcResult result;
  const NvrtcApi &api = loadNvrtc();
  if (!api.handle) {
    result.log = api.error;
    return result;
  }
  std::string number;
  if (!parseArch(request.arch, number)) {
    result.log = "bad architecture '" + request.arch + "' (expected sm_XX)";
    return result;
  }
  std::vector<const char *> names, texts;
  for (const EmbeddedHeader &h : getDeviceHeaders()) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  NvrtcProgram program = nullptr;
  NvrtcStatus status = api.createProgram(
      &program, request.source.c_str(), request.sourceName.c_str(),
      static_cast<int>(names.size()), texts.data(), names.data());
  if (status != 0) {
    result.log = std::string("nvrtcCreateProgram: ") + api.errorString(status);
    return result;
  }
  std::vector<std::string> options = {
      std::string("--gpu-architecture=") +
          (request.output == NvrtcOutput::PTX ? "compute_" : "sm_") + number,
      "--std=c++17"};
  options.insert(options.end(), request.extraOptions.begin(),
                 request.extraOptions.end());
  std::vector<const char *> optionPtrs;
  for (const std::string &o : options)
    optionPtrs.push_back(o.c_str());
  status = api.compileProgram(program, static_cast<int>(optionPtrs.size()),
                              optionPtrs.data());
  size_t logSize = 0;
  api.getLogSize(program, &logSize);
  if (logSize > 1) {
    result.log.resize(logSize);
    api.getLog(program, result.log.data());
    result.log.resize(logSize - 1);
  }
  if (status == 0) {
    size_t size = 0;
    if (request.output == NvrtcOutput::PTX) {
      api.getPTXSize(program, &size);
      result.binary.resize(size);
      api.getPTX(program, result.binary.data());
      if (!result.binary.empty() && result.binary.back() == '\0')
        result.binary.pop_back();
    } else {
      api.getCUBINSize(program, &size);
      result.binary.resize(size);
      api.getCUBIN(program, result.binary.data());
    }
    result.ok = true;
  } else if (result.log.empty()) {
    result.log = std::string("nvrtcCompileProgram: ") + api.errorString(status);
  }
  api.destroyProgram(&program);
  return result;
}

} // namespace mscclc
