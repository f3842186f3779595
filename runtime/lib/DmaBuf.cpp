//===- DmaBuf.cpp - GPU memory as a dma-buf, for RDMA registration --------===//
//
// The CUDA side of IbDevice::registerDevice: an exporter of a range of GPU
// memory as a dma-buf file descriptor. Kept out of IbConnection.cpp, which
// calls no GPU API (its tests run on the CPU with a fake HCA).
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/IbConnection.h"

namespace mscclc::rt {

DmaBufExporter cudaDmaBufExporter() {
  return [](void *base, uint64_t bytes, int *fd) -> Status {
#if MSCCLC_TARGET_HIP
    (void)base;
    (void)bytes;
    (void)fd;
    return unsupported("dma-buf export of GPU memory is CUDA's here "
                       "(cuMemGetHandleForAddressRange)");
#else
    const DriverApi *api = nullptr;
    MSCCLC_TRY(driverApi(&api));
    if (!api->memGetHandleForAddressRange)
      return unsupported("the CUDA driver has no cuMemGetHandleForAddressRange");
    CUresult rc = api->memGetHandleForAddressRange(
        fd, reinterpret_cast<CUdeviceptr>(base), bytes,
        CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc != CUDA_SUCCESS) {
      const char *text = nullptr;
      api->getErrorString(rc, &text);
      return unsupported(fmt::format("cuMemGetHandleForAddressRange: {} "
                                     "(CUresult {})",
                                     text ? text : "unknown error", int(rc)));
    }
    return Status::ok();
#endif
  };
}

} // namespace mscclc::rt
