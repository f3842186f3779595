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
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_CUDA_H
#define MSCCLC_RUNTIME_CUDA_H

#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Status.h"

#include <cuda.h>
#include <cuda_runtime.h>

namespace mscclc::rt {

Status toStatus(cudaError_t err, const char *call, const char *file, int line);
Status toStatus(CUresult err, const char *call, const char *file, int line);

/// Driver entry points used by the runtime.
struct DriverApi {
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuModuleGetGlobal) moduleGetGlobal = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor)
      occupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  decltype(&::cuStreamWriteValue64) streamWriteValue64 = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuMemGetAddressRange) memGetAddressRange = nullptr;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute = nullptr;
  decltype(&::cuMemRelease) memRelease = nullptr;
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
};

/// Loads the driver entry points once. Fails where no driver is installed.
Status driverApi(const DriverApi **api);

/// True when a CUDA device is present and usable (no error is kept).
bool cudaDeviceAvailable(int *count = nullptr);

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
