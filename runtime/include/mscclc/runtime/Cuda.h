//===- Cuda.h - Checked CUDA runtime and driver calls ---------*- C++ -*-===//
//
// MSCCLC_CUDA_CHECK(call) is the one macro every CUDA runtime and driver
// call goes through: on failure it returns a Status naming the call, the
// error and the source line. MSCCLC_CUDA_WARN(call) does the same in
// destructors, where the error can only be logged.
//
// The driver API is reached through cudaGetDriverEntryPointByVersion, never
// by linking libcuda: the library then loads on machines without a driver
// (CI) and reports "no CUDA device" instead of failing to start.
//
// The same sources build for AMD GPUs with HIP (MSCCLC_TARGET_HIP, CMake
// MSCCLC_GPU_BACKEND=hip): CudaNamesForHip.h spells the CUDA names used in
// HIP, and the DriverApi table holds HIP's module calls, which libamdhip64
// exports directly. Entries without a HIP counterpart (virtual memory,
// multicast) exist in CUDA builds only.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_CUDA_H
#define MSCCLC_RUNTIME_CUDA_H

#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Status.h"

#include "mscclc/device/Target.h"

#if MSCCLC_TARGET_HIP
#include "mscclc/runtime/CudaNamesForHip.h"
/// The vendor API, for messages ("no HIP device is available").
#define MSCCLC_GPU_API "HIP"
#else
#include <cuda.h>
#include <cuda_runtime.h>
#define MSCCLC_GPU_API "CUDA"
#endif

namespace mscclc::rt {

Status toStatus(cudaError_t err, const char *call, const char *file, int line);
#if !MSCCLC_TARGET_HIP // HIP's module calls return hipError_t too
Status toStatus(CUresult err, const char *call, const char *file, int line);
#endif

/// Driver entry points used by the runtime.
struct DriverApi {
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor)
      occupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  decltype(&::cuStreamWriteValue64) streamWriteValue64 = nullptr;
  decltype(&::cuMemGetAddressRange) memGetAddressRange = nullptr;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute = nullptr;
#if !MSCCLC_TARGET_HIP
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuModuleGetGlobal) moduleGetGlobal = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuFuncGetAttribute) funcGetAttribute = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuMemRelease) memRelease = nullptr;
  // Loads a lazily loaded kernel in full (CUDA 12.4 and later).
  decltype(&::cuFuncLoad) funcLoad = nullptr;
  // GPU memory as a dma-buf, for RDMA registration (CUDA 11.7 and later).
  decltype(&::cuMemGetHandleForAddressRange) memGetHandleForAddressRange = nullptr;
  // Virtual memory management: mscclcMemAlloc and multicast mappings.
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuMemCreate) memCreate = nullptr;
  decltype(&::cuMemMap) memMap = nullptr;
  decltype(&::cuMemUnmap) memUnmap = nullptr;
  decltype(&::cuMemAddressReserve) memAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) memAddressFree = nullptr;
  decltype(&::cuMemSetAccess) memSetAccess = nullptr;
  decltype(&::cuMemGetAllocationGranularity) memGetAllocationGranularity =
      nullptr;
  decltype(&::cuMemRetainAllocationHandle) memRetainAllocationHandle = nullptr;
  decltype(&::cuMemExportToShareableHandle) memExportToShareableHandle =
      nullptr;
  decltype(&::cuMemImportFromShareableHandle) memImportFromShareableHandle =
      nullptr;
  // SwitchChannel setup only (never reached where multicast is disabled).
  decltype(&::cuMulticastCreate) multicastCreate = nullptr;
  decltype(&::cuMulticastAddDevice) multicastAddDevice = nullptr;
  decltype(&::cuMulticastBindAddr) multicastBindAddr = nullptr;
  decltype(&::cuMulticastGetGranularity) multicastGetGranularity = nullptr;
  decltype(&::cuMulticastUnbind) multicastUnbind = nullptr;
#endif
};

/// Loads the driver entry points once. Fails where no driver is installed.
Status driverApi(const DriverApi **api);

/// True when a CUDA (HIP) device is present and usable (no error is kept).
bool cudaDeviceAvailable(int *count = nullptr);

/// The hardware work queues the vendor's runtime gives a device (CUDA:
/// CUDA_DEVICE_MAX_CONNECTIONS, default 8; HIP: GPU_MAX_HW_QUEUES, default
/// 4): streams beyond them share queues, and work queued behind a kernel
/// that spins never starts.
int hardwareQueues();
/// The variable that sets hardwareQueues(), for messages.
const char *hardwareQueuesVariable();

/// A pointer as the driver calls take it: an integer for CUDA, `void *`
/// for HIP (where a const pointer needs its const dropped).
inline CUdeviceptr toDevicePtr(const void *p) {
#if MSCCLC_TARGET_HIP
  return const_cast<void *>(p);
#else
  return reinterpret_cast<CUdeviceptr>(p);
#endif
}

/// Device memory that peers read and write while kernels run (semaphores,
/// scratch): cudaMalloc for CUDA; for HIP, fine-grained memory, since AMD
/// GPUs keep coarse-grained memory coherent across devices only at kernel
/// boundaries.
template <class T> cudaError_t mallocPeerVisible(T **ptr, size_t bytes) {
#if MSCCLC_TARGET_HIP
  return hipExtMallocWithFlags(reinterpret_cast<void **>(ptr), bytes,
                               hipDeviceMallocFinegrained);
#else
  return cudaMalloc(ptr, bytes);
#endif
}

/// Makes `device` current for the scope; restores the previous one.
class DeviceGuard {
public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
  int previous_ = -1;
  bool changed_ = false;
};

} // namespace mscclc::rt

#define MSCCLC_CUDA_CHECK(call)                                                \
  do {                                                                         \
    auto mscclcErr_ = (call);                                                  \
    if (mscclcErr_ != decltype(mscclcErr_)(0))                                 \
      return ::mscclc::rt::toStatus(mscclcErr_, #call, __FILE__, __LINE__);    \
  } while (0)

#define MSCCLC_CUDA_WARN(call)                                                 \
  do {                                                                         \
    auto mscclcErr_ = (call);                                                  \
    if (mscclcErr_ != decltype(mscclcErr_)(0))                                 \
      MSCCLC_LOG(Warn, "{}",                                                   \
                 ::mscclc::rt::toStatus(mscclcErr_, #call, __FILE__, __LINE__) \
                     .message());                                              \
  } while (0)

#endif // MSCCLC_RUNTIME_CUDA_H
