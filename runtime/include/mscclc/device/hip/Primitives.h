//===- Primitives.h - AMD's instructions behind mscclc/device/Vendor.h ---===//
//
// HIP's scoped atomics and fences (clang's __hip_atomic_* builtins), for
// gfx9 data-centre GPUs (gfx90a, gfx942). Coherence comes from the scope:
// system-scope accesses bypass the caches that peers, the host and other
// compute units cannot see, where CUDA uses .cg and .volatile. AMD
// guarantees single-copy atomicity for aligned accesses of up to 8 bytes,
// hence LL8 packets (mscclc/device/Target.h) and no 16-byte packet access.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_HIP_PRIMITIVES_H
#define MSCCLC_DEVICE_HIP_PRIMITIVES_H

// hipRTC declares the HIP built-ins itself; hipcc and clang need the header.
#ifndef __HIPCC_RTC__
#include <hip/hip_runtime.h>
#endif

/// Nanoseconds per tick of wall_clock64(), the constant-rate clock behind
/// the time-out: 100 MHz on gfx90a (MI200) and gfx942 (MI300), the value
/// of hipDeviceAttributeWallClockRate there. Override for other GPUs.
#ifndef MSCCLC_HIP_WALL_CLOCK_NS_PER_TICK
#define MSCCLC_HIP_WALL_CLOCK_NS_PER_TICK 10ull
#endif

namespace mscclc {
namespace dev {

__device__ __forceinline__ float halfToFloat(unsigned short bits) {
  return static_cast<float>(__builtin_bit_cast(_Float16, bits));
}
/// The conversion rounds to nearest even.
__device__ __forceinline__ unsigned short floatToHalf(float f) {
  return __builtin_bit_cast(unsigned short, static_cast<_Float16>(f));
}

__device__ __forceinline__ mscclc_u64 timerNs() {
  // ROCm declares wall_clock64 for device compilation only; the host pass
  // compiles this body but never calls it.
#if defined(__HIP_DEVICE_COMPILE__)
  return static_cast<mscclc_u64>(wall_clock64()) *
         MSCCLC_HIP_WALL_CLOCK_NS_PER_TICK;
#else
  return 0;
#endif
}

/// Sequentially consistent at system scope (the empty scope name): what
/// __threadfence_system is, without the device library call ROCm's header
/// makes for it.
__device__ __forceinline__ void fenceSystem() {
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "");
}

__device__ __forceinline__ mscclc_u64 loadAcquireSys(const mscclc_u64 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}

__device__ __forceinline__ void incrementRelaxedSys(mscclc_u64 *p) {
  __hip_atomic_fetch_add(p, 1ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}

__device__ __forceinline__ mscclc_u64 loadRelaxedSys8(const void *p) {
  return __hip_atomic_load(static_cast<const mscclc_u64 *>(p), __ATOMIC_RELAXED,
                           __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ __forceinline__ void storeRelaxedSys8(void *p, mscclc_u64 v) {
  __hip_atomic_store(static_cast<mscclc_u64 *>(p), v, __ATOMIC_RELAXED,
                     __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ __forceinline__ uint2 splitWords(mscclc_u64 v) {
  return make_uint2(static_cast<unsigned>(v), static_cast<unsigned>(v >> 32));
}
__device__ __forceinline__ mscclc_u64 joinWords(uint2 v) {
  return static_cast<mscclc_u64>(v.x) | static_cast<mscclc_u64>(v.y) << 32;
}

/// Relaxed system-scope loads skip the L1 (and on gfx942 the non-coherent
/// part of L2), as ld.global.cg does on NVIDIA; 16 bytes are two 8-byte
/// loads, both in flight.
__device__ __forceinline__ uint4 loadGlobal16(const void *p) {
  const char *c = static_cast<const char *>(p);
  const uint2 lo = splitWords(loadRelaxedSys8(c));
  const uint2 hi = splitWords(loadRelaxedSys8(c + 8));
  return make_uint4(lo.x, lo.y, hi.x, hi.y);
}
__device__ __forceinline__ uint2 loadGlobal8(const void *p) {
  return splitWords(loadRelaxedSys8(p));
}
__device__ __forceinline__ unsigned loadGlobal4(const void *p) {
  return __hip_atomic_load(static_cast<const unsigned *>(p), __ATOMIC_RELAXED,
                           __HIP_MEMORY_SCOPE_SYSTEM);
}

__device__ __forceinline__ void packetStore8(void *p, uint2 v) {
  storeRelaxedSys8(p, joinWords(v));
}
__device__ __forceinline__ uint2 packetLoad8(const void *p) {
  return splitWords(loadRelaxedSys8(p));
}

/// A FIFO entry as two 8-byte stores: the proxy waits for both halves
/// (fst != 0 and snd's valid bit), so their order does not matter.
__device__ __forceinline__ void storeTrigger(MscclcTrigger *slot,
                                             MscclcTrigger t) {
  storeRelaxedSys8(&slot->fst, t.fst);
  storeRelaxedSys8(&slot->snd, t.snd);
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_HIP_PRIMITIVES_H
