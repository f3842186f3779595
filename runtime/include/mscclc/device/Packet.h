//===- Packet.h - LL8 and LL16 packets: data that carries its own flag ---===//
//
// An LL packet is written with ONE vector store, so the reader sees either
// the old packet or the new one, never a mix: LL16 = {data0, flag, data1,
// flag} (16 bytes, 8 data bytes), LL8 = {data, flag} (8 bytes, 4 data bytes).
// The reader spins until every flag of the packet equals this launch's flag.
// Flags grow by one per launch (docs/kernel-abi.md), so stale packets of an
// earlier launch never match. Generated code uses LL16.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_PACKET_H
#define MSCCLC_DEVICE_PACKET_H

#include "mscclc/device/Sync.h"

namespace mscclc {
namespace dev {

struct alignas(16) LL16Packet {
  u32 data0, flag0, data1, flag1;
};
struct alignas(8) LL8Packet {
  u32 data, flag;
};

/// Writes 8 data bytes with the flag in one 16-byte store.
__device__ __forceinline__ void storeLL16(LL16Packet *p, uint2 data, u32 flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
               "r"(data.x), "r"(flag), "r"(data.y), "r"(flag)
               : "memory");
}

/// Reads one packet once; true when both halves carry `flag`.
__device__ __forceinline__ bool tryReadLL16(const LL16Packet *p, u32 flag,
                                            uint2 &data) {
  u32 d0, f0, d1, f1;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1)
               : "l"(p)
               : "memory");
  data = make_uint2(d0, d1);
  return f0 == flag && f1 == flag;
}

/// Spins until the packet carries `flag`; returns its 8 data bytes (zeros
/// after a time-out or abort, which is recorded).
__device__ __forceinline__ uint2 readLL16(const Ctx &ctx, const Site &site,
                                          const LL16Packet *p, u32 flag) {
  uint2 data;
  Spinner spin;
  while (!tryReadLL16(p, flag, data)) {
    if (spin.poll(ctx, site, flag, 0))
      return make_uint2(0, 0);
  }
  return data;
}

__device__ __forceinline__ void storeLL8(LL8Packet *p, u32 data, u32 flag) {
  asm volatile("st.volatile.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(data),
               "r"(flag)
               : "memory");
}

__device__ __forceinline__ u32 readLL8(const Ctx &ctx, const Site &site,
                                       const LL8Packet *p, u32 flag) {
  Spinner spin;
  for (;;) {
    u32 d, f;
    asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];"
                 : "=r"(d), "=r"(f)
                 : "l"(p)
                 : "memory");
    if (f == flag)
      return d;
    if (spin.poll(ctx, site, flag, f))
      return 0;
  }
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_PACKET_H
