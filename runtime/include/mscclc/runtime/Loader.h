//===- Loader.h - NVRTC compile, kernel cache, module load ----*- C++ -*-===//
//
// Generated CUDA C++ is compiled with NVRTC for the device's architecture
// into a cubin, which is kept in an on-disk cache keyed by the SHA-256 of
// the NVRTC version + the full option list (architecture included) + the
// device headers + the source. NVRTC, its options and the embedded device
// headers are the ones `mscclc --emit=cubin` uses (mscclc/jit/Nvrtc.h), so
// a program compiles the same wherever the library is installed.
//
// A HIP build (MSCCLC_TARGET_HIP) compiles generated HIP instead, into an
// AMDGPU code object: with hipRTC (mscclc/jit/Hiprtc.h) where it knows the
// device's processor, else with the offload compiler of `mscclc
// --emit=hsaco` (mscclc/jit/HipOffload.h); the cache is the same, its key
// naming the compiler used and its entries `<key>.hsaco`. Below, "cubin"
// then means that code object and "arch" the processor's gfx number.
//
// Before the cache, the loader consults the ahead-of-time store
// (AotStore.h): cubins the build compiled, named by kernelKey, which leaves
// out the NVRTC version so that a process without NVRTC can look them up.
//
// Cache location: MSCCLC_CACHE_DIR, else $XDG_CACHE_HOME/mscclc, else
// $HOME/.cache/mscclc, else (no HOME) /tmp/mscclc-cache-<uid>, which must
// not be a symlink. MSCCLC_CACHE=0 turns it off. Entries are written to a
// temporary file and renamed, so concurrent ranks never read half a file;
// each carries the SHA-256 of its bytes, and one that is truncated or
// corrupt is removed and recompiled. The directory is made private (0700),
// and one that a user other than this one or root owns, or that group or
// others can write, is not used (with a warning): the cache holds GPU code
// this process runs. Entries are read as Files.h says (regular files of
// this user's, not symlinks, at most limits::kMaxKernelEntryBytes): any other is
// removed with a warning and compiled again.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_LOADER_H
#define MSCCLC_RUNTIME_LOADER_H

#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/Status.h"

#include <string>
#include <vector>

namespace mscclc::rt {

struct CompileRequest {
  std::string source;
  std::string name = "mscclc_program.cu"; ///< For diagnostics.
  std::vector<std::string> options;       ///< Extra NVRTC options.
  /// e.g. 90 for sm_90; HIP: the gfx number read as hex, 0x90a for gfx90a.
  int arch = 0;
};

/// "sm_90", or for HIP "gfx90a": the name of an `arch` for messages.
std::string archName(int arch);

/// The NVRTC options of a request: jit::nvrtcOptions for a CUBIN of its
/// architecture, then the request's own options.
std::vector<std::string> nvrtcOptions(const CompileRequest &request);

/// What a kernel is (64 hex digits): SHA-256 of the full option list (the
/// architecture among them; the CUDA include directory as a placeholder,
/// since where the toolkit lies is not the kernel), every device header
/// and the source. The name of ahead-of-time entries; it needs no NVRTC.
std::string kernelKey(const CompileRequest &request);

/// The user cache's key (64 hex digits): kernelKey and the version of the
/// NVRTC that compiles it (HIP: of the compiler chosen).
std::string cacheKey(const CompileRequest &request);

class KernelCache {
public:
  /// The process's cache: MSCCLC_CACHE and MSCCLC_CACHE_DIR, else
  /// $XDG_CACHE_HOME/mscclc, $HOME/.cache/mscclc, /tmp/mscclc-cache-<uid>.
  /// An error naming the variable where MSCCLC_CACHE is no boolean.
  static Status fromEnvironment(KernelCache *out);
  /// A cache that is off.
  KernelCache() : KernelCache("", false) {}
  /// `sharedParent`: `dir` lies in a directory all users share (/tmp),
  /// where a symlink of that name would be another user's.
  KernelCache(std::string dir, bool enabled, bool sharedParent = false)
      : dir_(std::move(dir)), enabled_(enabled), sharedParent_(sharedParent) {}

  bool enabled() const { return enabled_; }
  const std::string &dir() const { return dir_; }
  std::string pathFor(const std::string &key) const;
  /// Unsupported when the directory exists and is not a private one of this
  /// user's (see the file comment).
  Status checkDirectory() const;
  /// Sets *hit and fills *binary when a valid entry exists. A damaged one,
  /// or one that is not a regular file of this user's (Files.h), is
  /// removed and reported (a System error: the caller recompiles and
  /// stores); one that cannot be removed (a directory) is Unsupported: the
  /// caller compiles without the cache.
  Status lookup(const std::string &key, std::string *binary, bool *hit) const;
  Status store(const std::string &key, const std::string &binary) const;

private:
  std::string dir_;
  bool enabled_;
  bool sharedParent_;
};

/// Where a cubin came from.
enum class KernelOrigin { AheadOfTime, Cache, Compiled };
const char *kernelOriginName(KernelOrigin origin);

struct CompileStats {
  KernelOrigin origin = KernelOrigin::Compiled;
  bool cacheHit = false; ///< ahead-of-time or cache: no compile ran
  double milliseconds = 0; ///< Wall time of compile or cache read.
  std::string key;
};

/// Compiles with NVRTC (no cache). On a compile error, or where libnvrtc
/// cannot be loaded, the Status message carries NVRTC's log or the reason.
Status compileToCubin(const CompileRequest &request, std::string *cubin);

/// The ahead-of-time store (its key needs no NVRTC), else the cache, else
/// compile and store in the cache. An unusable AOT entry is logged and
/// skipped.
Status compileCached(const CompileRequest &request, const AotStore &aot,
                     const KernelCache &cache, std::string *cubin,
                     CompileStats *stats);
/// Without an ahead-of-time store.
Status compileCached(const CompileRequest &request, const KernelCache &cache,
                     std::string *cubin, CompileStats *stats);

/// The compute capability of a device as 10*major+minor (HIP: the gfx
/// number of its gcnArchName).
Status deviceArch(int device, int *arch);

/// A loaded CUmodule on one device; unloads on destruction.
class Module {
public:
  Module() = default;
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  Status load(int device, const std::string &cubin);
  /// A kernel of the module, ready to launch without synchronising the
  /// device: fully loaded, and within the device's per-thread stack limit
  /// (raised here when it needs more). Either would otherwise happen at its
  /// first launch and wait for every kernel on the device, including peers
  /// that share the GPU and spin until this one runs.
  Status function(const std::string &name, CUfunction *out) const;

private:
  CUmodule module_ = nullptr;
  int device_ = -1;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_LOADER_H
