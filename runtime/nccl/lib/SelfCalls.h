//===- SelfCalls.h - The real NCCL's calls of its own exported functions --===//
//
// Where the real NCCL was loaded into the global scope before this library
// (PyTorch does so at import), its internal calls of its own exported
// functions bind to ours: ncclRedOpCreatePreMulSum and ncclCommFinalize
// call ncclCommGetAsyncError, buffer and window teardown call
// ncclCommDeregister and ncclMemFree, ncclBcast calls ncclBroadcast. Each
// export starts with MSCCLC_REAL_SELF_CALL, which hands such a call back to
// the real function. A call is the real NCCL's own when
//  - it comes from the real library's code (its return address lies
//    there), on any thread: NCCL's group jobs run on threads of their own;
//  - or this thread is inside a call into the real NCCL (RealCallScope):
//    a tail call there returns past the real library's frame.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_SELFCALLS_H
#define MSCCLC_NCCL_SELFCALLS_H

#include "RealNccl.h"

#include <type_traits>

namespace mscclc::nccl {

/// Whether a call that returns to `returnAddress` is the real NCCL's own.
bool calledByRealNccl(const void *returnAddress);

/// Calls the real NCCL's `member` with `args`; where it lacks the function
/// (it cannot have called it then), an internal error.
template <typename Member, typename... Args>
auto callRealSelf(Member RealNccl::*member, Args... args) {
  const RealNccl *real = loadedRealNccl();
  using Result = decltype((real->*member)(args...));
  if (!real || !(real->*member)) {
    if constexpr (std::is_same_v<Result, ncclResult_t>)
      return ncclInternalError;
    else
      return static_cast<Result>(
          "mscclc: the real NCCL called a function it does not export");
  }
  return (real->*member)(args...);
}

} // namespace mscclc::nccl

/// First statement of the export nccl<name>(args...): hands the real
/// NCCL's own call of it back to the real function.
#define MSCCLC_REAL_SELF_CALL(name, ...)                                       \
  if (::mscclc::nccl::calledByRealNccl(__builtin_return_address(0)))           \
  return ::mscclc::nccl::callRealSelf(&::mscclc::nccl::RealNccl::name,         \
                                      ##__VA_ARGS__)

#endif // MSCCLC_NCCL_SELFCALLS_H
