//===- Multimem.h - SwitchChannel reduce and broadcast (NVLS, CUDA only) -===//
//
// `multimem.ld_reduce` makes the switch read one address on every rank of
// the group and return the sum; `multimem.st` stores to every rank. Both
// need sm_90 and a multimem address (MscclcSwitchChannel). Only sum over
// f32, f16 (as f16x2) and bf16 (as bf16x2) is generated; anything else is a
// compile error in the generated source. These instructions must never run
// on machines where multicast is disabled (docs/kernel-abi.md). AMD GPUs
// have no multimem: the compiler refuses switch channels for HIP.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_CUDA_MULTIMEM_H
#define MSCCLC_DEVICE_CUDA_MULTIMEM_H

#include "mscclc/device/Elementwise.h"

/// 1 when MSCCLC_DTYPE / MSCCLC_REDOP are supported by SwitchChannel ops.
#define MSCCLC_SWITCH_DTYPE_f32 1
#define MSCCLC_SWITCH_DTYPE_f16 1
#define MSCCLC_SWITCH_DTYPE_bf16 1
#define MSCCLC_SWITCH_REDOP_sum 1
#define MSCCLC_SWITCH_REDOP_avg 1
#define MSCCLC_SWITCH_SUPPORTED_(d, o)                                         \
  (MSCCLC_CAT(MSCCLC_SWITCH_DTYPE_, d) + 0 == 1 &&                             \
   MSCCLC_CAT(MSCCLC_SWITCH_REDOP_, o) + 0 == 1)
#define MSCCLC_SWITCH_SUPPORTED                                                \
  MSCCLC_SWITCH_SUPPORTED_(MSCCLC_DTYPE, MSCCLC_REDOP)

namespace mscclc {
namespace dev {

// The host pass of nvcc sees declarations only (no __CUDA_ARCH__).
#if (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900) && MSCCLC_SWITCH_SUPPORTED

/// 16 bytes reduced over the group.
__device__ __forceinline__ uint4 multimemLoadReduce16(const void *mc) {
  uint4 v;
  if constexpr (sizeof(T) == 4)
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
  else if constexpr (IsSame<T, Half>::value)
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f16x2 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
  else
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.bf16x2 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
  return v;
}

/// 4 bytes reduced over the group.
__device__ __forceinline__ unsigned multimemLoadReduce4(const void *mc) {
  unsigned v;
  if constexpr (sizeof(T) == 4)
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];"
                 : "=r"(v)
                 : "l"(mc)
                 : "memory");
  else if constexpr (IsSame<T, Half>::value)
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f16x2 %0, [%1];"
                 : "=r"(v)
                 : "l"(mc)
                 : "memory");
  else
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.bf16x2 %0, [%1];"
                 : "=r"(v)
                 : "l"(mc)
                 : "memory");
  return v;
}

__device__ __forceinline__ void multimemStore16(void *mc, uint4 v) {
  if constexpr (sizeof(T) == 4)
    asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], "
                 "{%1, %2, %3, %4};" ::"l"(mc),
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  else if constexpr (IsSame<T, Half>::value)
    asm volatile("multimem.st.relaxed.sys.global.v4.f16x2 [%0], "
                 "{%1, %2, %3, %4};" ::"l"(mc),
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  else
    asm volatile("multimem.st.relaxed.sys.global.v4.bf16x2 [%0], "
                 "{%1, %2, %3, %4};" ::"l"(mc),
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

__device__ __forceinline__ void multimemStore4(void *mc, unsigned v) {
  if constexpr (sizeof(T) == 4)
    asm volatile("multimem.st.relaxed.sys.global.f32 [%0], %1;" ::"l"(mc),
                 "r"(v)
                 : "memory");
  else if constexpr (IsSame<T, Half>::value)
    asm volatile("multimem.st.relaxed.sys.global.f16x2 [%0], %1;" ::"l"(mc),
                 "r"(v)
                 : "memory");
  else
    asm volatile("multimem.st.relaxed.sys.global.bf16x2 [%0], %1;" ::"l"(mc),
                 "r"(v)
                 : "memory");
}

/// dst[0..n) = sum over the group of mcSrc[0..n). 16-byte steps when both
/// are 16-byte aligned, else 4-byte steps; n * sizeof(T) must be a
/// multiple of 4 (else MSCCLC_ERR_BAD_ARGS).
__device__ __forceinline__ void switchReduce(const Ctx &ctx, const Site &site,
                                             T *dst, const T *mcSrc, u64 n) {
  const u64 bytes = n * sizeof(T);
  if (bytes % 4 != 0) {
    if (threadIdx.x == 0)
      ctx.fail(MSCCLC_ERR_BAD_ARGS, site, 4, bytes);
    return;
  }
  const char *s = reinterpret_cast<const char *>(mcSrc);
  char *d = reinterpret_cast<char *>(dst);
  if (((reinterpret_cast<u64>(s) | reinterpret_cast<u64>(d)) & 15) == 0) {
    const u64 nvec = bytes / 16;
    for (u64 i = threadIdx.x; i < nvec; i += blockDim.x)
      storeVec(d + i * 16, multimemLoadReduce16(s + i * 16));
    for (u64 i = nvec * 16 + threadIdx.x * 4; i < bytes; i += blockDim.x * 4)
      *reinterpret_cast<unsigned *>(d + i) = multimemLoadReduce4(s + i);
    return;
  }
  for (u64 i = threadIdx.x * 4; i < bytes; i += blockDim.x * 4)
    *reinterpret_cast<unsigned *>(d + i) = multimemLoadReduce4(s + i);
}

/// mcDst[0..n) on every group rank = src[0..n).
__device__ __forceinline__ void switchBroadcast(const Ctx &ctx,
                                                const Site &site, T *mcDst,
                                                const T *src, u64 n) {
  const u64 bytes = n * sizeof(T);
  if (bytes % 4 != 0) {
    if (threadIdx.x == 0)
      ctx.fail(MSCCLC_ERR_BAD_ARGS, site, 4, bytes);
    return;
  }
  const char *s = reinterpret_cast<const char *>(src);
  char *d = reinterpret_cast<char *>(mcDst);
  if (((reinterpret_cast<u64>(s) | reinterpret_cast<u64>(d)) & 15) == 0) {
    const u64 nvec = bytes / 16;
    for (u64 i = threadIdx.x; i < nvec; i += blockDim.x)
      multimemStore16(d + i * 16, loadVec(s + i * 16));
    for (u64 i = nvec * 16 + threadIdx.x * 4; i < bytes; i += blockDim.x * 4)
      multimemStore4(d + i, *reinterpret_cast<const volatile unsigned *>(s + i));
    return;
  }
  for (u64 i = threadIdx.x * 4; i < bytes; i += blockDim.x * 4)
    multimemStore4(d + i, *reinterpret_cast<const volatile unsigned *>(s + i));
}

#endif // sm_90 and a supported type

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_CUDA_MULTIMEM_H
