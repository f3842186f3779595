//===- Packet.h - LL8 and LL16 packets: data that carries its own flag ---===//
//
// An LL packet is written with ONE single-copy-atomic store, so the reader
// sees either the old packet or the new one, never a mix: LL16 = {data0,
// flag, data1, flag} (16 bytes, 8 data bytes; NVIDIA only, where 16-byte
// stores are atomic), LL8 = {data, flag} (8 bytes, 4 data bytes). The
// reader spins until every flag of the packet equals this launch's flag.
// Flags grow by one per launch (docs/kernel-abi.md), so stale packets of an
// earlier launch never match. Generated code uses `LLPacket`, the vendor's
// kind (mscclc/device/Target.h): LL16 on NVIDIA, LL8 on AMD.
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

#if !MSCCLC_TARGET_HIP
/// Writes 8 data bytes with the flag in one 16-byte store.
__device__ __forceinline__ void storeLL16(LL16Packet *p, uint2 data, u32 flag) {
  packetStore16(p, make_uint4(data.x, flag, data.y, flag));
}

/// Reads one packet once; true when both halves carry `flag`.
__device__ __forceinline__ bool tryReadLL16(const LL16Packet *p, u32 flag,
                                            uint2 &data) {
  const uint4 v = packetLoad16(p);
  data = make_uint2(v.x, v.z);
  return v.y == flag && v.w == flag;
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
#endif // !MSCCLC_TARGET_HIP

__device__ __forceinline__ void storeLL8(LL8Packet *p, u32 data, u32 flag) {
  packetStore8(p, make_uint2(data, flag));
}

__device__ __forceinline__ bool tryReadLL8(const LL8Packet *p, u32 flag,
                                           u32 &data) {
  const uint2 v = packetLoad8(p);
  data = v.x;
  return v.y == flag;
}

__device__ __forceinline__ u32 readLL8(const Ctx &ctx, const Site &site,
                                       const LL8Packet *p, u32 flag) {
  Spinner spin;
  for (;;) {
    const uint2 v = packetLoad8(p);
    if (v.y == flag)
      return v.x;
    if (spin.poll(ctx, site, flag, v.y))
      return 0;
  }
}

/// The vendor's packet, and the same operations for either kind by
/// overloading, for code that works with both (Elementwise.h).
#if MSCCLC_LL_PACKET_BYTES == 16
typedef LL16Packet LLPacket;
__device__ __forceinline__ void storeLL(LL16Packet *p, uint2 data, u32 flag) {
  storeLL16(p, data, flag);
}
__device__ __forceinline__ bool tryReadLL(const LL16Packet *p, u32 flag,
                                          uint2 &data) {
  return tryReadLL16(p, flag, data);
}
__device__ __forceinline__ uint2 readLL(const Ctx &ctx, const Site &site,
                                        const LL16Packet *p, u32 flag) {
  return readLL16(ctx, site, p, flag);
}
#else
typedef LL8Packet LLPacket;
__device__ __forceinline__ void storeLL(LL8Packet *p, u32 data, u32 flag) {
  storeLL8(p, data, flag);
}
__device__ __forceinline__ bool tryReadLL(const LL8Packet *p, u32 flag,
                                          u32 &data) {
  return tryReadLL8(p, flag, data);
}
__device__ __forceinline__ u32 readLL(const Ctx &ctx, const Site &site,
                                      const LL8Packet *p, u32 flag) {
  return readLL8(ctx, site, p, flag);
}
#endif
static_assert(sizeof(LLPacket) == MSCCLC_LL_PACKET_BYTES,
              "Target.h's packet geometry");

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_PACKET_H
