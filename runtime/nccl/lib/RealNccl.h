//===- RealNccl.h - The real NCCL library, loaded for the fallback --------===//
//
// Loaded once per process, by path, with RTLD_LOCAL | RTLD_DEEPBIND so that
// its calls to its own functions bind inside it and never to our exports
// of the same names. Where from, first match:
//  1. MSCCLC_NCCL_LIBRARY (a file; an error if it is not loadable);
//  2. PyTorch's nvidia-nccl wheel, nvidia/nccl/lib/libnccl.so.2 under a
//     site-packages folder: the one of a torch library this process has
//     loaded, PYTHONPATH, VIRTUAL_ENV, CONDA_PREFIX, ~/.local and
//     /usr{,/local}/lib/python3.*;
//  3. the system's libnccl.so.2 (the loader's search path), unless that
//     is this very library.
// A candidate that turns out to be this library (an LD_PRELOAD'ed or
// installed libnccl.so.2 that is mscclc's) is skipped.
//
// RTLD_DEEPBIND has no effect when the library was loaded before us into
// the global scope (PyTorch loads the wheel's libnccl.so.2 by path with
// RTLD_GLOBAL at import): its calls of its own exported functions then
// bind to ours. Every call into it therefore goes through a RealFunction,
// which marks the thread as inside the real NCCL, so that our exports can
// hand such calls back (SelfCalls.h).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_REALNCCL_H
#define MSCCLC_NCCL_REALNCCL_H

#include "nccl.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mscclc::nccl {

/// Whether this thread is inside a call into the real NCCL.
bool insideRealNccl();

/// Marks the thread as inside the real NCCL while it lives.
class RealCallScope {
public:
  RealCallScope();
  ~RealCallScope();
  RealCallScope(const RealCallScope &) = delete;
  RealCallScope &operator=(const RealCallScope &) = delete;
};

/// A function of the real NCCL (null when it lacks it), called within a
/// RealCallScope.
template <typename Pointer> class RealFunction;
template <typename R, typename... Args> class RealFunction<R (*)(Args...)> {
public:
  using Pointer = R (*)(Args...);
  RealFunction &operator=(Pointer f) {
    fn_ = f;
    return *this;
  }
  explicit operator bool() const { return fn_ != nullptr; }
  R operator()(Args... args) const {
    RealCallScope inside;
    return fn_(args...);
  }

private:
  Pointer fn_ = nullptr;
};

/// The functions the fallback calls, named as in nccl.h without "nccl".
/// Optional ones (later NCCLs) may be null. Some are called only when the
/// real NCCL calls its own function by name (SelfCalls.h).
#define MSCCLC_REAL_NCCL_FUNCTIONS(X)                                          \
  X(GetVersion) X(GetUniqueId) X(GetErrorString) X(GetLastError)               \
  X(CommInitRank) X(CommInitRankConfig) X(CommSplit) X(CommFinalize)           \
  X(CommDestroy) X(CommAbort) X(CommGetAsyncError) X(CommRegister)             \
  X(CommDeregister) X(RedOpCreatePreMulSum) X(RedOpDestroy) X(Reduce)          \
  X(Broadcast) X(AllReduce) X(ReduceScatter) X(AllGather) X(Send) X(Recv)      \
  X(GroupStart) X(GroupEnd)
#define MSCCLC_REAL_NCCL_OPTIONAL_FUNCTIONS(X)                                 \
  X(CommShrink) X(CommWindowRegister) X(CommWindowDeregister) X(AlltoAll)      \
  X(Gather) X(Scatter) X(GroupSimulateEnd) X(CommSuspend) X(CommResume)      \
  X(DevCommCreate) X(DevCommDestroy) X(CommInitRankScalable) X(CommInitAll)   \
  X(CommCount) X(CommCuDevice) X(CommUserRank) X(MemAlloc) X(MemFree) X(Bcast)

struct RealNccl {
  std::string path;
  int version = 0;
  void *handle = nullptr;
  /// Where its executable segments are mapped (SelfCalls.h).
  struct CodeRange {
    uintptr_t begin = 0, end = 0;
  };
  std::vector<CodeRange> code;
#define MSCCLC_DECLARE_REAL(name) RealFunction<decltype(&::nccl##name)> name;
  MSCCLC_REAL_NCCL_FUNCTIONS(MSCCLC_DECLARE_REAL)
  MSCCLC_REAL_NCCL_OPTIONAL_FUNCTIONS(MSCCLC_DECLARE_REAL)
#undef MSCCLC_DECLARE_REAL
};

/// The real NCCL (loaded on first call), or null with `why` saying what was
/// tried.
const RealNccl *realNccl(std::string *why);
/// The real NCCL if it was loaded already (for group calls), else null.
const RealNccl *loadedRealNccl();

/// Where the wheel's and the system's libraries may be, in search order
/// (MSCCLC_NCCL_LIBRARY is handled before these). Exposed for tests.
std::vector<std::string> candidateNcclPaths();

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_REALNCCL_H
