//===- AotStore.h - Kernels compiled when the library was built -*- C++ -*-===//
//
// The ahead-of-time store: a read-only directory of cubins that the build
// compiled for the selection table's picks (tool mscclc-aot, CMake target
// mscclc-aot-kernels), installed as <prefix>/share/mscclc/kernels. The
// loader consults it before the user's kernel cache and NVRTC, so a
// process whose first collective is a shipped pick runs no NVRTC at all.
//
// It holds two kinds of entry:
//  - kernels, `<kernelKey>.cubin`, named by kernelKey (Loader.h): the
//    source, the options, the device headers and the architecture, but not
//    the NVRTC version, which a process without NVRTC cannot read;
//  - bundles, `<programKey>.bundle`: the compiler's `--emit=bundle` output
//    (CUDA source and plan) of a stdlib program, named by stdlibProgramKey
//    (StdlibPrograms.h), so that a first call runs neither the mscclc
//    compiler nor NVRTC.
// Both use the cache's entry format
// (KernelEntry.h) with a magic of their own; an entry that is damaged, of
// another format or names another key is refused with a warning and the
// kernel is JIT-compiled as if the store had none. The store is never
// written at run time.
//
// Where: MSCCLC_AOT_DIR, else share/mscclc/kernels beside libmscclc.so
// (../share or ../../share from its directory: installed, and the build
// tree, where the target writes <build>/share/mscclc/kernels beside
// <build>/lib). MSCCLC_AOT=0 turns the store off.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_AOTSTORE_H
#define MSCCLC_RUNTIME_AOTSTORE_H

#include "mscclc/runtime/Status.h"

#include <string>

namespace mscclc::rt {

/// What an entry of the store holds.
enum class AotEntry {
  Kernel, ///< a cubin, by kernel key
  Bundle, ///< a compiled stdlib program (CUDA source and plan), by program key
};

class AotStore {
public:
  /// The process's store (see the file comment); disabled when there is
  /// none. An error naming the variable where MSCCLC_AOT is no boolean.
  static Status fromEnvironment(AotStore *out);
  AotStore() = default;
  explicit AotStore(std::string dir) : dir_(std::move(dir)) {}

  bool enabled() const { return !dir_.empty(); }
  const std::string &dir() const { return dir_; }
  std::string pathFor(const std::string &key,
                      AotEntry kind = AotEntry::Kernel) const;

  /// Sets *hit and fills *binary when a valid entry of `key` exists. A
  /// present but unusable entry (damaged, foreign) or an unsafe directory
  /// is Unsupported with the reason: the caller compiles instead. Never
  /// modifies the store.
  Status lookup(const std::string &key, std::string *binary, bool *hit,
                AotEntry kind = AotEntry::Kernel) const;

  /// Build time only: writes the entry of `key` (atomically, creating the
  /// directory).
  Status write(const std::string &key, const std::string &binary,
               AotEntry kind = AotEntry::Kernel) const;

private:
  std::string dir_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_AOTSTORE_H
