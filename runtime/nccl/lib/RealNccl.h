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
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_REALNCCL_H
#define MSCCLC_NCCL_REALNCCL_H

#include "nccl.h"

#include <string>
#include <vector>

namespace mscclc::nccl {

/// The functions the fallback calls, named as in nccl.h without "nccl".
/// Optional ones (later NCCLs) may be null.
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
  X(DevCommCreate) X(DevCommDestroy)

struct RealNccl {
  std::string path;
  int version = 0;
  void *handle = nullptr;
#define MSCCLC_DECLARE_REAL(name) decltype(&::nccl##name) name = nullptr;
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
