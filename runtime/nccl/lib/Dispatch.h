//===- Dispatch.h - Running one collective: checks, route, groups ---------===//
//
// Every collective and point-to-point call goes through dispatch(): it
// checks the communicator and the arguments, decides the route (mscclc's
// stdlib, the real NCCL, or a refusal with a message), logs the choice once
// per (collective, size bucket) with MSCCLC_DEBUG=INFO, and runs the call,
// or queues it when a group is open. ncclGroupEnd runs the queued native
// calls in one mscclc group and the fallen-back ones in one group of the
// real NCCL; when a call inside the group failed, it returns that error and
// runs none of them.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_DISPATCH_H
#define MSCCLC_NCCL_DISPATCH_H

#include "Comm.h"
#include "Validate.h"

#include <functional>
#include <thread>

namespace mscclc::nccl {

ncclResult_t dispatch(const CollectiveArgs &args, ncclComm_t comm,
                      cudaStream_t stream);

/// Groups (per thread, as in NCCL).
ncclResult_t groupStart();
ncclResult_t groupEnd(ncclSimInfo_t *simulate);
bool inGroup();
/// Makes the open group's ncclGroupEnd wait for `c`'s initialisation.
void deferInit(ncclComm *c);
/// Makes the open group's ncclGroupEnd join `t` (a rank's part of a
/// collective set-up step, e.g. a split that makes no communicator).
void deferTask(std::thread t);
/// Runs `fn` when the open group ends (after its calls were handed on).
void deferUntilGroupEnd(std::function<void()> fn);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_DISPATCH_H
