//===- Loader.cpp - NVRTC compile, kernel cache, module load --------------===//

#include "mscclc/runtime/Loader.h"
#include "mscclc/jit/HipOffload.h"
#include "mscclc/jit/Hiprtc.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/runtime/KernelEntry.h"
#include "mscclc/runtime/Settings.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

namespace {

// Entry: magic '\n' key '\n' size '\n' sha256(bytes) '\n' bytes.
#if MSCCLC_TARGET_HIP
constexpr const char *kCacheMagic = "MSCCLC-HSACO-1";
constexpr const char *kCacheSuffix = ".hsaco";
#else
constexpr const char *kCacheMagic = "MSCCLC-CUBIN-2";
constexpr const char *kCacheSuffix = ".cubin";
#endif

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// mkdir -p.
Status makeDirs(const std::string &path) {
  std::string partial;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty())
      continue;
    partial += part + "/";
    // Private: other users must not be able to plant code in the cache.
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return systemError(fmt::format("cannot create cache directory {}: {}",
                                     partial, strerror(errno)));
  }
  return Status::ok();
}

#if MSCCLC_TARGET_HIP
/// The HIP compiler of a request: hipRTC in process where it knows the
/// processor, else an offload compiler in a child process (HipOffload.h).
/// Returns its name and version, for the cache key.
std::string hipCompilerOf(const CompileRequest &request, bool *useHiprtc) {
  std::string why, version;
  *useHiprtc = jit::hiprtcSupportsArch(archName(request.arch), &why) &&
               jit::hiprtcAvailable(&version);
  if (*useHiprtc)
    return "hiprtc " + version;
  // Their versions are not known without running them: the key names the
  // compilers chosen, and MSCCLC_CACHE=0 rebuilds after an upgrade.
  return fmt::format("offload {} {}", get(setting::Hipcc),
                     get(setting::HipClang));
}
#endif

} // namespace

std::string archName(int arch) {
  return MSCCLC_TARGET_HIP ? fmt::format("gfx{:x}", arch)
                           : fmt::format("sm_{}", arch);
}

std::vector<std::string> nvrtcOptions(const CompileRequest &request) {
  return jit::nvrtcOptions(std::to_string(request.arch),
                           jit::NvrtcOutput::CUBIN, request.options);
}

std::string kernelKey(const CompileRequest &request) {
#if MSCCLC_TARGET_HIP
  // Which HIP compiler runs depends on the machine, and it shapes the code
  // object: it is part of what the kernel is (HIP has no AOT store).
  bool useHiprtc = false;
  std::string compiler = hipCompilerOf(request, &useHiprtc);
  std::vector<std::string> options =
      jit::hiprtcOptions(archName(request.arch), request.options);
#else
  std::string compiler = "nvrtc";
  std::vector<std::string> options = nvrtcOptions(request);
  // Where the toolkit's headers are differs between the build machine and
  // the one running (CUDA_HOME, MSCCLC_CUDA_INCLUDE): the path is not the
  // kernel, so the build's AOT cubins keep their keys everywhere.
  std::string include = "-I" + jit::cudaIncludeDir();
  for (std::string &o : options)
    if (o == include)
      o = "-I<cuda-include>";
#endif
  Sha256 h;
  h.field("MSCCLC-KERNEL-1");
  h.field(compiler);
  for (const std::string &o : options)
    h.field(o);
  for (const jit::DeviceHeader &hdr : jit::deviceHeaders()) {
    h.field(hdr.name);
    h.field(hdr.text);
  }
  h.field(request.source);
  return h.hexDigest();
}

std::string cacheKey(const CompileRequest &request) {
  std::string compiler;
#if !MSCCLC_TARGET_HIP
  // A cached cubin is the product of this NVRTC: another release gets
  // entries of its own.
  if (!jit::nvrtcAvailable(&compiler))
    compiler = "unavailable";
#endif
  Sha256 h;
  h.field(kCacheMagic);
  h.field(compiler);
  h.field(kernelKey(request));
  return h.hexDigest();
}

Status KernelCache::fromEnvironment(KernelCache *out) {
  bool enabled = true;
  MSCCLC_TRY(get(setting::Cache, &enabled));
  // The first of: MSCCLC_CACHE_DIR, $XDG_CACHE_HOME/mscclc,
  // $HOME/.cache/mscclc, /tmp/mscclc-cache-<uid> (docs/runtime.md).
  if (std::string dir = get(setting::CacheDir); !dir.empty())
    *out = KernelCache(dir, enabled);
  else if (std::string xdg = get(setting::XdgCacheHome); !xdg.empty())
    *out = KernelCache(xdg + "/mscclc", enabled);
  else if (std::string home = get(setting::Home); !home.empty())
    *out = KernelCache(home + "/.cache/mscclc", enabled);
  else
    // No home: a directory of this user's in the shared /tmp, where another
    // user may have made the name first (checkDirectory refuses theirs, and
    // a symlink, which could lead into any directory of ours).
    *out = KernelCache(fmt::format("/tmp/mscclc-cache-{}", unsigned(geteuid())),
                       enabled, /*sharedParent=*/true);
  return Status::ok();
}

std::string KernelCache::pathFor(const std::string &key) const {
  return dir_ + "/" + key + kCacheSuffix;
}

Status KernelCache::checkDirectory() const {
  struct stat st;
  if ((sharedParent_ ? lstat(dir_.c_str(), &st) : stat(dir_.c_str(), &st)) != 0)
    return Status::ok(); // not there yet: store() makes it private
  if (!S_ISDIR(st.st_mode))
    return Status(Code::Unsupported,
                  fmt::format("kernel cache {} is {}; not using it (set "
                              "MSCCLC_CACHE_DIR)",
                              dir_,
                              S_ISLNK(st.st_mode)
                                  ? "a symbolic link in a directory all "
                                    "users share"
                                  : "not a directory"));
  // GPU code loaded from a place another user can write would run their
  // code in this process.
  std::string why = untrustedBecause(st.st_uid, st.st_mode);
  if (!why.empty())
    return Status(
        Code::Unsupported,
        fmt::format("kernel cache {} is {}: other users could put GPU code "
                    "there that this process would run; not using it (make "
                    "it yours and `chmod go-w`, or set MSCCLC_CACHE_DIR to a "
                    "private directory)",
                    dir_, why));
  return Status::ok();
}

Status KernelCache::lookup(const std::string &key, std::string *binary,
                           bool *hit) const {
  *hit = false;
  if (!enabled_)
    return Status::ok();
  MSCCLC_TRY(checkDirectory());
  std::string path = pathFor(key);
  std::string contents;
  bool found = false;
  FileRules rules;
  rules.what = "kernel cache entry";
  rules.maxBytes = limits::kMaxKernelEntryBytes;
  rules.trusted = true;
  Status read = readRegularFile(path, rules, &contents, &found);
  if (!found)
    return Status::ok();
  if (!read.isOk()) {
    // Not a file of ours (a symlink, a FIFO, another user's): the
    // directory is ours, so the entry goes and a fresh one replaces it.
    if (unlink(path.c_str()) == 0)
      return Status(Code::SystemError,
                    fmt::format("{}: removed, recompiling", read.message()));
    // A directory stays (and blocks the store): compile without the cache.
    return Status(Code::Unsupported,
                  fmt::format("{}: ignored, compiling without the cache",
                              read.message()));
  }
  std::string bytes;
  EntryCheck check = parseKernelEntry(contents, kCacheMagic, key, &bytes);
  // An entry of an older format (another magic) is simply replaced.
  if (check == EntryCheck::OtherFormat)
    return Status::ok();
  if (check != EntryCheck::Ok) {
    // Recompiled and stored anew by the caller.
    unlink(path.c_str());
    return Status(Code::SystemError,
                  fmt::format("entry {} is {}: removed, recompiling", path,
                              entryCheckReason(check)));
  }
  *binary = std::move(bytes);
  *hit = true;
  return Status::ok();
}

Status KernelCache::store(const std::string &key,
                          const std::string &binary) const {
  if (!enabled_)
    return Status::ok();
  MSCCLC_TRY(makeDirs(dir_));
  MSCCLC_TRY(checkDirectory());
  return writeKernelEntry(dir_, pathFor(key), kCacheMagic, key, binary);
}

#if MSCCLC_TARGET_HIP

Status compileToCubin(const CompileRequest &request, std::string *codeObject) {
  if (request.arch <= 0)
    return invalidArgument("a HIP compile needs a device architecture");
  std::string arch = archName(request.arch);
  bool useHiprtc = false;
  (void)hipCompilerOf(request, &useHiprtc);
  bool ok = false;
  std::string log, binary;
  if (useHiprtc) {
    jit::HiprtcRequest rtc;
    rtc.source = request.source;
    rtc.sourceName = request.name;
    rtc.arch = arch;
    rtc.defines = request.options;
    jit::HiprtcResult r = jit::compileWithHiprtc(rtc);
    ok = r.ok, log = std::move(r.log), binary = std::move(r.binary);
  } else {
    jit::HipOffloadRequest offload;
    offload.source = request.source;
    offload.arch = arch;
    offload.defines = request.options;
    jit::HipOffloadResult r = jit::compileWithHipOffload(offload);
    ok = r.ok, log = std::move(r.log), binary = std::move(r.binary);
  }
  const char *with = useHiprtc ? "hipRTC" : "the HIP offload compiler";
  if (!ok)
    return Status(Code::CompileError,
                  fmt::format("{} failed to compile {} for {}:\n{}", with,
                              request.name, arch, log));
  if (!log.empty())
    MSCCLC_LOG(Debug, "{} log for {}:\n{}", with, request.name, log);
  *codeObject = std::move(binary);
  return Status::ok();
}

#else

Status compileToCubin(const CompileRequest &request, std::string *cubin) {
  if (request.arch <= 0)
    return invalidArgument("NVRTC compile needs a device architecture");
  jit::NvrtcRequest nvrtc;
  nvrtc.source = request.source;
  nvrtc.sourceName = request.name;
  nvrtc.arch = std::to_string(request.arch);
  nvrtc.output = jit::NvrtcOutput::CUBIN;
  nvrtc.defines = request.options;
  jit::NvrtcResult result = jit::compileWithNvrtc(nvrtc);
  if (!result.ok)
    return Status(Code::CompileError,
                  fmt::format("NVRTC failed to compile {} for sm_{}:\n{}",
                              request.name, request.arch, result.log));
  if (!result.log.empty())
    MSCCLC_LOG(Debug, "NVRTC log for {}:\n{}", request.name, result.log);
  *cubin = std::move(result.binary);
  return Status::ok();
}

#endif // MSCCLC_TARGET_HIP

const char *kernelOriginName(KernelOrigin origin) {
  switch (origin) {
  case KernelOrigin::AheadOfTime:
    return "ahead-of-time store";
  case KernelOrigin::Cache:
    return "cache hit";
  case KernelOrigin::Compiled:
    return "compiled";
  }
  return "?";
}

Status compileCached(const CompileRequest &request, const AotStore &aot,
                     const KernelCache &cache, std::string *cubin,
                     CompileStats *stats) {
  auto start = std::chrono::steady_clock::now();
  CompileStats local;
  // Before anything that loads NVRTC (cacheKey reads its version): a
  // shipped kernel needs none.
  if (aot.enabled()) {
    local.key = kernelKey(request);
    bool hit = false;
    Status s = aot.lookup(local.key, cubin, &hit);
    if (!s.isOk())
      MSCCLC_LOG(Warn, "{}; compiling {} instead", s.message(), request.name);
    if (hit) {
      local.origin = KernelOrigin::AheadOfTime;
      local.cacheHit = true;
    }
  }
  if (local.origin != KernelOrigin::AheadOfTime) {
    local.key = cacheKey(request);
    bool hit = false;
    Status s = cache.lookup(local.key, cubin, &hit);
    if (!s.isOk())
      MSCCLC_LOG(Warn, "kernel cache: {}", s.message());
    if (!hit) {
      MSCCLC_TRY(compileToCubin(request, cubin));
      // An unsafe directory was reported by the lookup already.
      Status st = s.code() == Code::Unsupported
                      ? Status::ok()
                      : cache.store(local.key, *cubin);
      if (!st.isOk()) // A read-only cache directory costs time, not results.
        MSCCLC_LOG(Warn, "kernel cache: {}", st.message());
    }
    local.origin = hit ? KernelOrigin::Cache : KernelOrigin::Compiled;
    local.cacheHit = hit;
  }
  local.milliseconds = msSince(start);
  MSCCLC_LOG(Info, "kernel {} for {}: {} in {:.1f} ms (key {:.12})",
             request.name, archName(request.arch),
             kernelOriginName(local.origin), local.milliseconds, local.key);
  if (stats)
    *stats = local;
  return Status::ok();
}

Status compileCached(const CompileRequest &request, const KernelCache &cache,
                     std::string *cubin, CompileStats *stats) {
  return compileCached(request, AotStore(), cache, cubin, stats);
}

#if MSCCLC_TARGET_HIP

Status deviceArch(int device, int *arch) {
  hipDeviceProp_t prop;
  MSCCLC_CUDA_CHECK(hipGetDeviceProperties(&prop, device));
  // "gfx90a:sramecc+:xnack-": the processor, then its target features.
  std::string name(prop.gcnArchName);
  name = name.substr(0, name.find(':'));
  if (!jit::isGfxArch(name))
    return unsupported(
        fmt::format("device {} reports the processor '{}', not gfx...", device,
                    prop.gcnArchName));
  *arch = int(std::stoul(name.substr(3), nullptr, 16));
#if HIP_VERSION_MAJOR >= 6
  // The kernels' time-outs count wall_clock64() ticks of 10 ns (device
  // library, MSCCLC_HIP_WALL_CLOCK_NS_PER_TICK): right for gfx90a and
  // gfx942, whose constant clock runs at 100 MHz.
  int kHz = 0;
  if (hipDeviceGetAttribute(&kHz, hipDeviceAttributeWallClockRate, device) ==
          hipSuccess &&
      kHz != 100000)
    MSCCLC_LOG(Warn,
               "device {} ({}): wall clock at {} kHz, not 100000: kernel "
               "time-outs (MSCCLC_TIMEOUT_MS) are off by {:.2f}x",
               device, name, kHz, 100000.0 / kHz);
#endif
  return Status::ok();
}

#else

Status deviceArch(int device, int *arch) {
  int major = 0, minor = 0;
  MSCCLC_CUDA_CHECK(cudaDeviceGetAttribute(
      &major, cudaDevAttrComputeCapabilityMajor, device));
  MSCCLC_CUDA_CHECK(cudaDeviceGetAttribute(
      &minor, cudaDevAttrComputeCapabilityMinor, device));
  *arch = major * 10 + minor;
  return Status::ok();
}

#endif // MSCCLC_TARGET_HIP

Module::~Module() {
  if (!module_)
    return;
  const DriverApi *api = nullptr;
  if (!driverApi(&api).isOk())
    return;
  DeviceGuard guard(device_);
  MSCCLC_CUDA_WARN(api->moduleUnload(module_));
}

Status Module::load(int device, const std::string &cubin) {
  if (module_)
    return internalError("module loaded twice");
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  // cudaSetDevice makes the device's primary context current for the
  // driver call (CUDA 12 and later); unlike the old cudaFree(nullptr)
  // idiom it is allowed while a thread captures a graph.
  DeviceGuard guard(device);
  // Into a local: after a refused cubin the module stays empty, and the
  // caller may load another (Executor's fallback from the AOT store).
  CUmodule module = nullptr;
  MSCCLC_CUDA_CHECK(api->moduleLoadData(&module, cubin.data()));
  module_ = module;
  device_ = device;
  return Status::ok();
}

Status Module::function(const std::string &name, CUfunction *out) const {
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  CUresult rc = api->moduleGetFunction(out, module_, name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND)
    return invalidArgument(
        fmt::format("kernel '{}' is not in the compiled module", name));
  MSCCLC_CUDA_CHECK(rc);
#if !MSCCLC_TARGET_HIP
  // Under lazy loading (CUDA's default) a handle may be only partly loaded;
  // the first launch would finish loading it.
  if (api->funcLoad)
    MSCCLC_CUDA_CHECK(api->funcLoad(*out));
  // A kernel whose frame exceeds the stack limit (1 KiB by default) makes
  // its first launch grow the device's local memory, which waits for the
  // device to go idle. Raising the limit now costs the same memory.
  int localBytes = 0;
  MSCCLC_CUDA_CHECK(api->funcGetAttribute(
      &localBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, *out));
  DeviceGuard guard(device_);
  size_t limit = 0;
  MSCCLC_CUDA_CHECK(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
  MSCCLC_LOG(Debug, "kernel {}: {} bytes of local memory per thread (stack "
             "limit {})", name, localBytes, limit);
  if (size_t(localBytes) > limit) {
    MSCCLC_LOG(Debug, "kernel {}: raising the stack limit from {} to {}",
               name, limit, localBytes);
    MSCCLC_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, size_t(localBytes)));
  }
#endif
  return Status::ok();
}

} // namespace mscclc::rt
