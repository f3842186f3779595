//===- Fp8ConversionTest.cpp - The device library's fp8 against CUDA's ---===//
//
// mscclc/device/Types.h converts f32 <-> fp8 in software (the same code on
// CUDA and HIP). This test compiles a kernel through the runtime's NVRTC
// set-up (the embedded device headers, as generated kernels see them) and
// compares, on the GPU, toFp8E4M3/toFp8E5M2 with cuda_fp8.h's saturating
// conversion (the cvt.rn.satfinite instruction on sm_89 and newer) for
// every one of the 2^32 f32 bit patterns, and toFloat with CUDA's fp8 -> f16
// for all 256 encodings of each format. The simulator's rounding is checked
// against the same cuda_fp8.h conversion on the CPU (simulator-Fp8Test).
//
// Exit: 0 pass, 1 mismatch, 77 skipped (no GPU or no NVRTC).
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Nvrtc.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

namespace {

const char *kSource = R"CUDA(
#include "mscclc/device/Types.h"
#include <cuda_fp8.h>

using namespace mscclc::dev;

// out[0], out[1]: mismatches of e4m3, e5m2; out[2], out[3]: the first
// mismatching f32 bits of each (atomicMin); out[4]: decode mismatches.
extern "C" __global__ void fp8_encode(unsigned long long begin,
                                      unsigned long long end,
                                      unsigned *out) {
  for (unsigned long long i = begin + blockIdx.x * blockDim.x + threadIdx.x;
       i < end; i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned u = (unsigned)i;
    float x = __uint_as_float(u);
    unsigned a = toFp8E4M3(x).bits;
    unsigned b = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    if (a != b) {
      atomicAdd(&out[0], 1u);
      atomicMin(&out[2], u);
    }
    a = toFp8E5M2(x).bits;
    b = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    if (a != b) {
      atomicAdd(&out[1], 1u);
      atomicMin(&out[3], u);
    }
  }
}

__device__ bool same(float a, float b) {
  return (a != a && b != b) || __float_as_uint(a) == __float_as_uint(b);
}

extern "C" __global__ void fp8_decode(unsigned *out) {
  unsigned v = threadIdx.x;
  Fp8E4M3 e4;
  e4.bits = (unsigned char)v;
  Fp8E5M2 e5;
  e5.bits = (unsigned char)v;
  __half_raw h4 = __nv_cvt_fp8_to_halfraw((unsigned char)v, __NV_E4M3);
  __half_raw h5 = __nv_cvt_fp8_to_halfraw((unsigned char)v, __NV_E5M2);
  if (!same(toFloat(e4), __half2float(__half(h4))))
    atomicAdd(&out[4], 1u);
  if (!same(toFloat(e5), __half2float(__half(h5))))
    atomicAdd(&out[4], 1u);
}
)CUDA";

// The CUDA runtime only (its library API loads the CUBIN), so that the test
// starts, and skips, on machines without a driver.
#define CUDA_OR_FAIL(call)                                                     \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

} // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  std::string version;
  if (!mscclc::jit::nvrtcAvailable(&version)) {
    printf("SKIPPED: NVRTC: %s\n", version.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  mscclc::jit::NvrtcRequest request;
  request.source = kSource;
  request.sourceName = "fp8_conversion_test.cu";
  request.arch = std::to_string(prop.major * 10 + prop.minor);
  mscclc::jit::NvrtcResult compiled = mscclc::jit::compileWithNvrtc(request);
  if (!compiled.ok) {
    fprintf(stderr, "NVRTC failed:\n%s\n", compiled.log.c_str());
    return 1;
  }
  CUDA_OR_FAIL(cudaSetDevice(0));
  cudaLibrary_t library;
  cudaKernel_t encode, decode;
  CUDA_OR_FAIL(cudaLibraryLoadData(&library, compiled.binary.data(), nullptr,
                                   nullptr, 0, nullptr, nullptr, 0));
  CUDA_OR_FAIL(cudaLibraryGetKernel(&encode, library, "fp8_encode"));
  CUDA_OR_FAIL(cudaLibraryGetKernel(&decode, library, "fp8_decode"));

  unsigned host[5] = {0, 0, ~0u, ~0u, 0};
  unsigned *out = nullptr;
  CUDA_OR_FAIL(cudaMalloc(&out, sizeof(host)));
  CUDA_OR_FAIL(cudaMemcpy(out, host, sizeof(host), cudaMemcpyHostToDevice));
  const unsigned long long total = 1ull << 32, step = 1ull << 28;
  for (unsigned long long begin = 0; begin < total; begin += step) {
    unsigned long long end = begin + step;
    void *params[] = {&begin, &end, &out};
    CUDA_OR_FAIL(cudaLaunchKernel(reinterpret_cast<const void *>(encode),
                                  dim3(1024), dim3(256), params, 0, nullptr));
  }
  void *dparams[] = {&out};
  CUDA_OR_FAIL(cudaLaunchKernel(reinterpret_cast<const void *>(decode),
                                dim3(1), dim3(256), dparams, 0, nullptr));
  CUDA_OR_FAIL(cudaDeviceSynchronize());
  CUDA_OR_FAIL(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
  printf("sm_%d%d: e4m3 %u mismatches of 2^32, e5m2 %u, decode %u of 512\n",
         prop.major, prop.minor, host[0], host[1], host[4]);
  if (host[0])
    printf("  first e4m3 mismatch: f32 bits 0x%08x\n", host[2]);
  if (host[1])
    printf("  first e5m2 mismatch: f32 bits 0x%08x\n", host[3]);
  cudaFree(out);
  cudaLibraryUnload(library);
  bool ok = !host[0] && !host[1] && !host[4];
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
