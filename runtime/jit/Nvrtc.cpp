//===- Nvrtc.cpp - NVRTC through dlopen, with the one option list ---------===//
//
// The entry points are declared in RtcLibrary.h, so building needs no CUDA
// headers and running needs libnvrtc only when something is compiled.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Settings.h"

#include "RtcLibrary.h"

#include <cctype>
#include <mutex>
#include <sys/stat.h>

#ifndef MSCCLC_BUILD_CUDA_INCLUDE_DIR
#define MSCCLC_BUILD_CUDA_INCLUDE_DIR ""
#endif

namespace mscclc::jit {
namespace {

/// The NVRTC entry points beyond those hipRTC shares.
struct NvrtcApi : rtc::Library {
  rtc::CodeSizeFn getPTXSize = nullptr;
  rtc::CodeFn getPTX = nullptr;
  rtc::CodeSizeFn getCUBINSize = nullptr;
  rtc::CodeFn getCUBIN = nullptr;
};

/// The CUDA toolkit's folders the environment names: CUDA_HOME, then
/// CUDA_PATH.
std::vector<std::string> cudaToolkitDirs() {
  std::vector<std::string> dirs;
  for (rt::PathSetting s : {rt::setting::CudaHome, rt::setting::CudaPath})
    if (std::string dir = rt::get(s); !dir.empty())
      dirs.push_back(dir);
  return dirs;
}

/// Loads libnvrtc once per process.
const NvrtcApi &loadNvrtc() {
  static NvrtcApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    api.prefix = "nvrtc";
    std::vector<std::string> candidates;
    std::string notFound;
    // A library named explicitly is the only one tried: the caller chose
    // it (and a missing one makes NVRTC unavailable, as tests of the
    // ahead-of-time store need).
    if (std::string explicitPath = rt::get(rt::setting::Nvrtc);
        !explicitPath.empty()) {
      candidates.push_back(explicitPath);
      notFound = "MSCCLC_NVRTC=" + explicitPath + " cannot be loaded";
    } else {
      for (const char *name :
           {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
        candidates.push_back(name);
      for (const std::string &toolkit : cudaToolkitDirs())
        candidates.push_back(toolkit + "/lib64/libnvrtc.so");
      candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
      notFound = "libnvrtc not found (tried $MSCCLC_NVRTC, libnvrtc.so, "
                 "$CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64); "
                 "install the CUDA toolkit or set MSCCLC_NVRTC to libnvrtc.so";
    }
    rtc::open(&api, candidates,
              [](rtc::Library &) {
                return api.bind(api.getPTXSize, "GetPTXSize") &&
                       api.bind(api.getPTX, "GetPTX") &&
                       api.bind(api.getCUBINSize, "GetCUBINSize") &&
                       api.bind(api.getCUBIN, "GetCUBIN");
              },
              notFound);
  });
  return api;
}

bool isDir(const std::string &path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

std::string cudaIncludeDir() {
  if (std::string dir = rt::get(rt::setting::CudaInclude); isDir(dir))
    return dir;
  for (const std::string &toolkit : cudaToolkitDirs())
    if (std::string dir = toolkit + "/include"; isDir(dir))
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
  return rtc::version(loadNvrtc(), version);
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
  bool ptx = request.output == NvrtcOutput::PTX;
  rtc::Compiled c = rtc::compile(
      api, request.source, request.sourceName,
      nvrtcOptions(arch, request.output, request.defines),
      ptx ? api.getPTXSize : api.getCUBINSize, ptx ? api.getPTX : api.getCUBIN,
      ptx ? "GetPTX" : "GetCUBIN");
  result.ok = c.ok;
  result.binary = std::move(c.binary);
  result.log = std::move(c.log);
  return result;
}

} // namespace mscclc::jit
