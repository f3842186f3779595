//===- Cuda.cpp - Checked CUDA calls and the driver entry points ----------===//
//
// With CudaNamesForHip.h, the one file of the runtime with code for each
// vendor: how the driver table is filled and how errors are named.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/Settings.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mscclc::rt {

static const char *baseName(const char *file) {
  const char *slash = strrchr(file, '/');
  return slash ? slash + 1 : file;
}

Status toStatus(cudaError_t err, const char *call, const char *file,
                int line) {
  // Clear the sticky-free error so later calls do not report it again.
  (void)cudaGetLastError();
  return Status(Code::CudaError,
                fmt::format("{} failed: {} ({}, {}:{})", call,
                            cudaGetErrorString(err), cudaGetErrorName(err),
                            baseName(file), line));
}

#if MSCCLC_TARGET_HIP

Status driverApi(const DriverApi **out) {
  // libamdhip64 exports its module calls; there is nothing to look up.
  static const DriverApi api = [] {
    DriverApi a;
    a.moduleLoadData = &::hipModuleLoadData;
    a.moduleUnload = &::hipModuleUnload;
    a.moduleGetFunction = &::hipModuleGetFunction;
    a.launchKernel = &::hipModuleLaunchKernel;
    a.occupancyMaxActiveBlocksPerMultiprocessor =
        &::hipModuleOccupancyMaxActiveBlocksPerMultiprocessor;
    a.streamWriteValue64 = &::hipStreamWriteValue64;
    a.memGetAddressRange = &::hipMemGetAddressRange;
    a.pointerGetAttribute = &::hipPointerGetAttribute;
    return a;
  }();
  *out = &api;
  return Status::ok();
}

#else

Status toStatus(CUresult err, const char *call, const char *file, int line) {
  const char *text = nullptr;
  const DriverApi *api = nullptr;
  if (driverApi(&api).isOk() && api->getErrorString)
    api->getErrorString(err, &text);
  return Status(Code::CudaError,
                fmt::format("{} failed: {} (CUresult {}, {}:{})", call,
                       text ? text : "unknown driver error", int(err),
                       baseName(file), line));
}

Status driverApi(const DriverApi **out) {
  static DriverApi api;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    // `version`: the CUDA version whose ABI of the entry point we call.
    auto load = [](const char *name, auto &fn,
                   unsigned version = 12000) -> Status {
      void *ptr = nullptr;
      cudaDriverEntryPointQueryResult query;
      cudaError_t err = cudaGetDriverEntryPointByVersion(
          name, &ptr, version, cudaEnableDefault, &query);
      if (err != cudaSuccess || query != cudaDriverEntryPointSuccess || !ptr) {
        (void)cudaGetLastError();
        return Status(Code::CudaError,
                      fmt::format("CUDA driver entry point {} unavailable: {}",
                                  name, cudaGetErrorString(err)));
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(ptr);
      return Status::ok();
    };
    Status s;
    auto need = [&](const char *name, auto &fn) {
      if (s.isOk())
        s = load(name, fn);
    };
    need("cuGetErrorString", api.getErrorString);
    need("cuModuleLoadData", api.moduleLoadData);
    need("cuModuleUnload", api.moduleUnload);
    need("cuModuleGetFunction", api.moduleGetFunction);
    need("cuModuleGetGlobal", api.moduleGetGlobal);
    need("cuLaunchKernel", api.launchKernel);
    need("cuFuncSetAttribute", api.funcSetAttribute);
    need("cuFuncGetAttribute", api.funcGetAttribute);
    need("cuOccupancyMaxActiveBlocksPerMultiprocessor",
         api.occupancyMaxActiveBlocksPerMultiprocessor);
    need("cuStreamWriteValue64", api.streamWriteValue64);
    need("cuCtxGetCurrent", api.ctxGetCurrent);
    need("cuMemGetAddressRange", api.memGetAddressRange);
    need("cuPointerGetAttribute", api.pointerGetAttribute);
    need("cuMemRelease", api.memRelease);
    status = s;
    if (!s.isOk())
      return;
    // Entry points that older drivers may lack; their absence only matters
    // to mscclcMemAlloc and SwitchChannel setup, which report it.
    (void)load("cuDeviceGet", api.deviceGet);
    (void)load("cuMemCreate", api.memCreate);
    (void)load("cuMemMap", api.memMap);
    (void)load("cuMemUnmap", api.memUnmap);
    (void)load("cuMemAddressReserve", api.memAddressReserve);
    (void)load("cuMemAddressFree", api.memAddressFree);
    (void)load("cuMemSetAccess", api.memSetAccess);
    (void)load("cuMemGetAllocationGranularity",
               api.memGetAllocationGranularity);
    (void)load("cuMemRetainAllocationHandle", api.memRetainAllocationHandle);
    (void)load("cuMemExportToShareableHandle", api.memExportToShareableHandle);
    (void)load("cuMemImportFromShareableHandle",
               api.memImportFromShareableHandle);
    (void)load("cuFuncLoad", api.funcLoad, 12040);
    (void)load("cuMemGetHandleForAddressRange",
               api.memGetHandleForAddressRange, 11070);
    // Multicast objects came with CUDA 12.1.
    (void)load("cuMulticastCreate", api.multicastCreate, 12010);
    (void)load("cuMulticastAddDevice", api.multicastAddDevice, 12010);
    (void)load("cuMulticastBindAddr", api.multicastBindAddr, 12010);
    (void)load("cuMulticastGetGranularity", api.multicastGetGranularity,
               12010);
    (void)load("cuMulticastUnbind", api.multicastUnbind, 12010);
  });
  *out = &api;
  return status;
}

#endif // MSCCLC_TARGET_HIP

bool cudaDeviceAvailable(int *count) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    n = 0;
  }
  if (count)
    *count = n;
  return n > 0;
}

namespace {
IntegerSetting hardwareQueuesSetting() {
  return MSCCLC_TARGET_HIP ? setting::GpuMaxHwQueues
                           : setting::CudaDeviceMaxConnections;
}
} // namespace

const char *hardwareQueuesVariable() { return hardwareQueuesSetting().name(); }

int hardwareQueues() {
  // The vendor's variable, read by its runtime too: a value outside its
  // range is said once and the vendor's default assumed, not refused.
  return int(getOrDefault(hardwareQueuesSetting()));
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    previous_ = -1;
  }
  // Always set: on a fresh thread cudaGetDevice says 0 but no context is
  // current for driver calls until cudaSetDevice makes it so.
  if (device >= 0) {
    MSCCLC_CUDA_WARN(cudaSetDevice(device));
    changed_ = device != previous_;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_ && previous_ >= 0)
    MSCCLC_CUDA_WARN(cudaSetDevice(previous_));
}

} // namespace mscclc::rt
