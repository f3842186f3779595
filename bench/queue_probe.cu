//===- queue_probe.cu - Does a proxy copy pass queued work? --------------===//
//
// A port channel's data reaches a waiting kernel through a copy the proxy
// queues on a stream of its own. CUDA feeds a context's streams to the GPU
// through CUDA_DEVICE_MAX_CONNECTIONS hardware queues; where the proxy's
// stream shares a queue with an application stream that holds work waiting
// for the kernel, the copy waits behind that work, which waits for the
// kernel (docs/multinode.md, "Known limitation"). This probe runs that
// situation on purpose, with one hardware queue, and tries the copy from
// places the application's queue may not reach:
//   same-context     another stream of the kernel's context;
//   own-context      a stream of a second context on the same device,
//                    writing memory of the first context (cuMemcpyHtoDAsync);
//   own-context-peer the same through cuMemcpyPeerAsync, contexts named;
//   own-context-vmm  the same into memory mapped with cuMemCreate/cuMemMap,
//                    whose access is granted per device, not per context.
// Each case: a kernel spins on a flag (at most about a second), a second
// kernel is queued behind it on its stream, then the copy that sets the
// flag is queued. "landed" means the copy passed the queued kernel;
// "stalled" means the kernel gave up first. It then times a 256 MiB device
// copy from each context with nothing else running, to see what a second
// context costs. GPU host only; prints one line per case.
//
//   mscclc-queue-probe            (sets CUDA_DEVICE_MAX_CONNECTIONS=1
//                                  unless the environment sets it)
//
//===----------------------------------------------------------------------===//

#include "mscclc/CudaCheck.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// The driver API's counterpart of MSCCLC_CUDA_OR_EXIT.
#define CHECK_DRV(call)                                                        \
  do {                                                                         \
    CUresult e_ = (call);                                                      \
    if (e_ != CUDA_SUCCESS) {                                                  \
      const char *s_ = nullptr;                                                \
      cuGetErrorString(e_, &s_);                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
              s_ ? s_ : "?");                                                  \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/// Spins until *flag != 0 or `cycles` pass; *result = 1 (set) or 2 (gave up).
__global__ void waitForFlag(volatile unsigned *flag, long long cycles,
                            unsigned *result) {
  long long start = clock64();
  while (*flag == 0)
    if (clock64() - start > cycles) {
      *result = 2;
      return;
    }
  *result = 1;
}

__global__ void queuedBehind() {}

/// Queues the copy that sets the flag; returns the driver's answer.
using CopyFn = CUresult (*)(CUdeviceptr flag, const unsigned *one);

struct Probe {
  CUcontext primary = nullptr, own = nullptr;
  CUstream ownStream = nullptr;
  cudaStream_t kernelStream = nullptr, sameContextStream = nullptr;
  unsigned *one = nullptr;    // pinned, portable: 1
  unsigned *result = nullptr; // pinned, mapped
  long long cycles = 0;
};
Probe probe;

/// Runs one case: spinning kernel, a kernel behind it, then `copy`.
void runCase(const char *name, CUdeviceptr flag, CopyFn copy) {
  MSCCLC_CUDA_OR_EXIT(
      cudaMemset(reinterpret_cast<void *>(flag), 0, sizeof(unsigned)));
  MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
  *probe.result = 0;
  waitForFlag<<<1, 1, 0, probe.kernelStream>>>(
      reinterpret_cast<volatile unsigned *>(flag), probe.cycles, probe.result);
  queuedBehind<<<1, 1, 0, probe.kernelStream>>>();
  MSCCLC_CUDA_OR_EXIT(cudaGetLastError());
  auto t0 = std::chrono::steady_clock::now();
  CUresult r = copy(flag, probe.one);
  MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(probe.kernelStream));
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  // Let the copy finish wherever it was queued before the next case.
  CHECK_DRV(cuCtxPushCurrent(probe.own));
  CHECK_DRV(cuStreamSynchronize(probe.ownStream));
  CHECK_DRV(cuCtxPopCurrent(nullptr));
  MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
  if (r != CUDA_SUCCESS) {
    const char *s = nullptr;
    cuGetErrorString(r, &s);
    printf("%-17s refused: %s\n", name, s ? s : "?");
    return;
  }
  printf("%-17s %s after %.1f ms\n", name,
         *probe.result == 1 ? "landed" : "stalled (the kernel gave up)", ms);
}

CUresult copySameContext(CUdeviceptr flag, const unsigned *one) {
  cudaError_t e =
      cudaMemcpyAsync(reinterpret_cast<void *>(flag), one, sizeof(unsigned),
                      cudaMemcpyHostToDevice, probe.sameContextStream);
  return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

CUresult copyOwnContext(CUdeviceptr flag, const unsigned *one) {
  CHECK_DRV(cuCtxPushCurrent(probe.own));
  CUresult r = cuMemcpyHtoDAsync(flag, one, sizeof(unsigned), probe.ownStream);
  CHECK_DRV(cuCtxPopCurrent(nullptr));
  return r;
}

CUdeviceptr deviceOne = 0; // 1, in the primary context's memory

CUresult copyOwnContextPeer(CUdeviceptr flag, const unsigned *) {
  CHECK_DRV(cuCtxPushCurrent(probe.own));
  CUresult r = cuMemcpyPeerAsync(flag, probe.primary, deviceOne, probe.primary,
                                 sizeof(unsigned), probe.ownStream);
  CHECK_DRV(cuCtxPopCurrent(nullptr));
  return r;
}

/// `bytes` of device memory through cuMemCreate/cuMemMap, readable and
/// writable by `device` from any context.
CUdeviceptr vmmAlloc(int device, size_t bytes) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  CHECK_DRV(cuMemGetAllocationGranularity(&granularity, &prop,
                                          CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bytes = (bytes + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle handle;
  CHECK_DRV(cuMemCreate(&handle, bytes, &prop, 0));
  CUdeviceptr ptr = 0;
  CHECK_DRV(cuMemAddressReserve(&ptr, bytes, 0, 0, 0));
  CHECK_DRV(cuMemMap(ptr, bytes, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_DRV(cuMemSetAccess(ptr, bytes, &access, 1));
  return ptr;
}

/// GB/s of a `bytes` device-to-device copy on `stream` of the current
/// context (median of 5).
double copyBandwidth(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                     CUstream stream) {
  double best[5];
  for (double &b : best) {
    CHECK_DRV(cuStreamSynchronize(stream));
    auto t0 = std::chrono::steady_clock::now();
    CHECK_DRV(cuMemcpyDtoDAsync(dst, src, bytes, stream));
    CHECK_DRV(cuStreamSynchronize(stream));
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    b = double(bytes) / s / 1e9;
  }
  std::sort(best, best + 5);
  return best[2];
}

} // namespace

int main() {
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIPPED: no GPU\n");
    return 77;
  }
  printf("CUDA_DEVICE_MAX_CONNECTIONS=%s\n",
         getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
  const int device = 0;
  MSCCLC_CUDA_OR_EXIT(cudaSetDevice(device));
  MSCCLC_CUDA_OR_EXIT(cudaFree(nullptr)); // the primary context
  CHECK_DRV(cuCtxGetCurrent(&probe.primary));
  CUdevice dev;
  CHECK_DRV(cuDeviceGet(&dev, device));
  int clockKHz = 0;
  MSCCLC_CUDA_OR_EXIT(
      cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  probe.cycles = (long long)clockKHz * 1000; // about a second
  MSCCLC_CUDA_OR_EXIT(
      cudaStreamCreateWithFlags(&probe.kernelStream, cudaStreamNonBlocking));
  MSCCLC_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&probe.sameContextStream,
                                                cudaStreamNonBlocking));
  MSCCLC_CUDA_OR_EXIT(
      cudaHostAlloc(&probe.one, sizeof(unsigned), cudaHostAllocPortable));
  *probe.one = 1;
  MSCCLC_CUDA_OR_EXIT(
      cudaHostAlloc(&probe.result, sizeof(unsigned),
                    cudaHostAllocPortable | cudaHostAllocMapped));
  unsigned *flag = nullptr;
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&flag, sizeof(unsigned)));
  unsigned *one = nullptr;
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&one, sizeof(unsigned)));
  MSCCLC_CUDA_OR_EXIT(
      cudaMemcpy(one, probe.one, sizeof(unsigned), cudaMemcpyHostToDevice));
  deviceOne = reinterpret_cast<CUdeviceptr>(one);

  // The second context; cuCtxCreate makes it current: pop it at once.
#if CUDA_VERSION >= 13000
  CHECK_DRV(cuCtxCreate(&probe.own, nullptr, 0, dev));
#else
  CHECK_DRV(cuCtxCreate(&probe.own, 0, dev));
#endif
  CHECK_DRV(cuStreamCreate(&probe.ownStream, CU_STREAM_NON_BLOCKING));
  CHECK_DRV(cuCtxPopCurrent(nullptr));
  CUdeviceptr vmmFlag = vmmAlloc(device, sizeof(unsigned));

  CUdeviceptr f = reinterpret_cast<CUdeviceptr>(flag);
  runCase("same-context", f, copySameContext);
  runCase("own-context", f, copyOwnContext);
  runCase("own-context-peer", f, copyOwnContextPeer);
  runCase("own-context-vmm", vmmFlag, copyOwnContext);

  const size_t bytes = size_t(256) << 20;
  CUdeviceptr a = vmmAlloc(device, bytes), b = vmmAlloc(device, bytes);
  CUstream primaryStream;
  CHECK_DRV(cuStreamCreate(&primaryStream, CU_STREAM_NON_BLOCKING));
  printf("256 MiB device copy, primary context: %.1f GB/s\n",
         copyBandwidth(b, a, bytes, primaryStream));
  CHECK_DRV(cuCtxPushCurrent(probe.own));
  printf("256 MiB device copy, own context:     %.1f GB/s\n",
         copyBandwidth(b, a, bytes, probe.ownStream));
  CHECK_DRV(cuCtxPopCurrent(nullptr));
  return 0;
}
