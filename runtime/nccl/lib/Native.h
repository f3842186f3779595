//===- Native.h - Collectives on mscclc's stdlib ---------------------------===//
//
// The native path: mscclcCollectiveSupported asks the stdlib's selection
// whether it has an algorithm for the call, mscclcRunCollective runs it.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_NATIVE_H
#define MSCCLC_NCCL_NATIVE_H

#include "Comm.h"
#include "Validate.h"

namespace mscclc::nccl {

/// Whether mscclc runs `a` on `c`; `why` says why not.
bool nativeSupported(ncclComm *c, const CollectiveArgs &a, std::string *why);
/// Runs `a` on the stdlib (queued inside an mscclc group). `ranNothing`
/// (optional) tells a failure that enqueued nothing and that every rank
/// meets alike (no algorithm after all, a kernel that does not compile),
/// after which the call may still fall back.
Outcome runNative(ncclComm *c, const CollectiveArgs &a, cudaStream_t stream,
                  bool *ranNothing = nullptr);
/// The algorithm the selection picks for `a`, for the log.
std::string nativeAlgorithm(ncclComm *c, const CollectiveArgs &a);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_NATIVE_H
