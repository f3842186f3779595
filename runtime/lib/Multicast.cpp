//===- Multicast.cpp - SwitchChannel (NVLS) setup and its guard -----------===//

#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Cuda.h"

#include <cstdlib>
#include <cstring>

namespace mscclc::rt {

Status multicastAllowed() {
  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  if (nvls && strcmp(nvls, "0") == 0)
    return unsupported(
        "SwitchChannel setup refused: NVLink multicast is disabled on this "
        "machine (NCCL_NVLS_ENABLE=0); compile the algorithm with memory or "
        "port channels instead");
  const char *off = getenv("MSCCLC_DISABLE_MULTICAST");
  if (off && *off && strcmp(off, "0") != 0)
    return unsupported(format(
        "SwitchChannel setup refused: NVLink multicast is disabled on this "
        "machine (MSCCLC_DISABLE_MULTICAST=%s); compile the algorithm with "
        "memory or port channels instead",
        off));
  return Status::ok();
}

Status setupSwitchChannel(Communicator &comm, const std::vector<int> &ranks,
                          void *local, size_t bytes, MulticastRegion *out) {
  // The guard comes first: nothing below runs where multicast is off.
  MSCCLC_TRY(multicastAllowed());
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  if (!api->multicastCreate || !api->multicastAddDevice ||
      !api->multicastBindMem || !api->multicastGetGranularity)
    return unsupported("this CUDA driver has no multicast entry points");
  for (int r : ranks)
    if (!comm.sameProcess(r))
      return unsupported(
          "SwitchChannel groups across processes need a multicast handle "
          "exchange over POSIX file descriptors, which this runtime build "
          "does not have; run the group's ranks in one process");
  (void)local;
  (void)bytes;
  (void)out;
  // Binding needs cuMem-allocated (not cudaMalloc) memory; the allocator for
  // it is not part of this runtime yet.
  return unsupported("SwitchChannel setup needs cuMem-backed buffers, which "
                     "this runtime build does not allocate yet");
}

} // namespace mscclc::rt
