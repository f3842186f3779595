//===- Multicast.h - SwitchChannel (NVLS) setup and its guard -*- C++ -*-===//
//
// SwitchChannels need NVLink multicast objects (cuMulticastCreate ...).
// Multicast can put shared machines out of service, so setup is refused,
// before any multicast call, whenever NCCL_NVLS_ENABLE=0 or
// MSCCLC_DISABLE_MULTICAST=1 (or any value but 0) is set.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_MULTICAST_H
#define MSCCLC_RUNTIME_MULTICAST_H

#include "mscclc/runtime/Status.h"

#include <cstddef>
#include <vector>

namespace mscclc::rt {

class Communicator;

/// Ok when multicast may be used; else an Unsupported status that names
/// the variable that forbids it.
Status multicastAllowed();

/// A multicast object bound to `bytes` of device memory on every rank of a
/// group; `mcPtr` is this rank's multimem address for it.
struct MulticastRegion {
  void *mcPtr = nullptr;
  size_t bytes = 0;
  unsigned long long handle = 0; ///< CUmemGenericAllocationHandle
};

/// Sets up a multicast object over `ranks` (all in this process) for the
/// device memory `local` of this rank. Refused where multicast is disabled.
Status setupSwitchChannel(Communicator &comm, const std::vector<int> &ranks,
                          void *local, size_t bytes, MulticastRegion *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_MULTICAST_H
