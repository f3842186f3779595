//===- Primitives.h - NVIDIA's instructions behind mscclc/device/Vendor.h -===//
//
// Inline PTX, so the device library needs no CUDA library header and
// compiles under NVRTC as is.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_CUDA_PRIMITIVES_H
#define MSCCLC_DEVICE_CUDA_PRIMITIVES_H

namespace mscclc {
namespace dev {

__device__ __forceinline__ float halfToFloat(unsigned short bits) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
}
__device__ __forceinline__ unsigned short floatToHalf(float f) {
  unsigned short bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  return bits;
}

/// %globaltimer counts nanoseconds.
__device__ __forceinline__ mscclc_u64 timerNs() {
  mscclc_u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void fenceSystem() { __threadfence_system(); }

__device__ __forceinline__ mscclc_u64 loadAcquireSys(const mscclc_u64 *p) {
  mscclc_u64 v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];"
               : "=l"(v)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ void incrementRelaxedSys(mscclc_u64 *p) {
  asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" : : "l"(p) : "memory");
}

/// ld.global.cg caches in L2 only: data written by peers or by other
/// blocks is never served from a stale L1 line.
__device__ __forceinline__ uint4 loadGlobal16(const void *p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint2 loadGlobal8(const void *p) {
  uint2 v;
  asm volatile("ld.global.cg.v2.u32 {%0, %1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned loadGlobal4(const void *p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void packetStore16(void *p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ uint4 packetLoad16(const void *p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void packetStore8(void *p, uint2 v) {
  asm volatile("st.volatile.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x),
               "r"(v.y)
               : "memory");
}
__device__ __forceinline__ uint2 packetLoad8(const void *p) {
  uint2 v;
  asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p)
               : "memory");
  return v;
}

/// One 16-byte store of a FIFO entry.
__device__ __forceinline__ void storeTrigger(MscclcTrigger *slot,
                                             MscclcTrigger t) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(slot),
               "l"(t.fst), "l"(t.snd)
               : "memory");
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_CUDA_PRIMITIVES_H
