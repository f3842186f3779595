//===- Fifo.h - PortChannel requests to the host proxy --------------------===//
//
// A port-channel operation is one 16-byte trigger pushed into the rank's
// FIFO by one thread: reserve a slot with an atomic add on `head`, wait
// while the FIFO is full (head - tail >= capacity), write the entry
// (storeTrigger: one 16-byte store on NVIDIA, two 8-byte stores on AMD,
// which the proxy tolerates). The bit layout is docs/kernel-abi.md's.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_FIFO_H
#define MSCCLC_DEVICE_FIFO_H

#include "mscclc/device/Sync.h"

#define MSCCLC_TRIGGER_PUT 1ull
#define MSCCLC_TRIGGER_SIGNAL 2ull
#define MSCCLC_TRIGGER_FLUSH 4ull
/// Largest size one trigger carries; longer puts are split.
#define MSCCLC_TRIGGER_MAX_SIZE ((1ull << 27) - 1)

namespace mscclc {
namespace dev {

__device__ __forceinline__ MscclcTrigger makeTrigger(u64 type, u32 proxyId,
                                                     u32 dstBuf, u64 dstOffset,
                                                     u32 srcBuf, u64 srcOffset,
                                                     u64 size) {
  const u64 mask36 = (1ull << 36) - 1;
  MscclcTrigger t;
  t.fst = (dstOffset & mask36) | (static_cast<u64>(dstBuf & 3) << 36) |
          (static_cast<u64>(srcBuf & 3) << 38) | ((type & 7) << 40) |
          (static_cast<u64>(proxyId & 0xffff) << 43);
  t.snd = (srcOffset & mask36) | ((size & MSCCLC_TRIGGER_MAX_SIZE) << 36) |
          (1ull << 63);
  return t;
}

/// The proxy's tail. The CPU emulation (MSCCLC_TARGET_HOST) reads it with
/// acquire: its proxy publishes the tail with release after finishing the
/// entries before it, which a race checker must see when a flush returns.
__device__ __forceinline__ u64 loadTail(const MscclcFifo &fifo) {
#if MSCCLC_TARGET_HOST
  return __atomic_load_n(fifo.tail, __ATOMIC_ACQUIRE);
#else
  return *fifo.tail;
#endif
}

/// The wait of fifoPush while the FIFO is full (outlined with
/// MSCCLC_OUTLINE_OPS). False when it stayed full past the time-out
/// (recorded).
__device__ MSCCLC_OP_INLINE bool fifoWaitForRoom(const Ctx &ctx, const Site &site,
                                                 const MscclcFifo &fifo,
                                                 u64 index) {
  Spinner spin;
  Site full = site;
  full.op = MSCCLC_OPC_FIFO_PUSH;
  for (;;) {
    const u64 tail = loadTail(fifo);
    if (index - tail < fifo.capacity)
      return true;
    if (spin.poll(ctx, full, index, tail))
      return false;
  }
}

/// Pushes one trigger (single thread). Returns its FIFO index, or ~0 when
/// the FIFO stayed full past the time-out (recorded).
__device__ __forceinline__ u64 fifoPush(const Ctx &ctx, const Site &site,
                                        const MscclcFifo &fifo,
                                        MscclcTrigger t) {
  const u64 index = atomicAdd(fifo.head, 1ull);
  if (index - loadTail(fifo) >= fifo.capacity &&
      !fifoWaitForRoom(ctx, site, fifo, index))
    return ~0ull;
  MscclcTrigger *slot = fifo.triggers + index % fifo.capacity;
  storeTrigger(slot, t);
  return index;
}

/// put (and optionally signal / flush) of `size` bytes, split into
/// triggers of at most MSCCLC_TRIGGER_MAX_SIZE bytes; only the last one
/// carries the signal and flush bits. Returns the last index (for flush).
__device__ MSCCLC_OP_INLINE u64 portPut(const Ctx &ctx, const Site &site,
                                       const MscclcFifo &fifo, u32 proxyId,
                                       u64 extraType, u32 dstBuf, u64 dstOffset,
                                       u32 srcBuf, u64 srcOffset, u64 size) {
  // Data written by the block before the put must be visible to the
  // proxy's copy engine.
  fenceSystem();
  u64 index = ~0ull;
  do {
    const u64 part = umin(size, MSCCLC_TRIGGER_MAX_SIZE & ~15ull);
    const u64 type = MSCCLC_TRIGGER_PUT | (part == size ? extraType : 0);
    index = fifoPush(ctx, site,
                     fifo, makeTrigger(type, proxyId, dstBuf, dstOffset,
                                       srcBuf, srcOffset, part));
    dstOffset += part;
    srcOffset += part;
    size -= part;
  } while (size > 0 && index != ~0ull);
  return index;
}

/// Signal on a port channel (single thread, after a block barrier).
__device__ MSCCLC_OP_INLINE u64 portSignal(const Ctx &ctx, const Site &site,
                                          const MscclcFifo &fifo,
                                          u32 proxyId) {
  fenceSystem();
  return fifoPush(ctx, site, fifo,
                  makeTrigger(MSCCLC_TRIGGER_SIGNAL, proxyId, 0, 0, 0, 0, 0));
}

/// The spin of fifoSync (outlined with MSCCLC_OUTLINE_OPS).
__device__ MSCCLC_OP_INLINE bool fifoSyncSpin(const Ctx &ctx, const Site &site,
                                              const MscclcFifo &fifo, u64 index) {
  Spinner spin;
  Site flush = site;
  flush.op = MSCCLC_OPC_FLUSH;
  for (;;) {
    const u64 tail = loadTail(fifo);
    if (tail > index)
      return true;
    if (spin.poll(ctx, flush, index + 1, tail))
      return false;
  }
}

/// Waits until the proxy consumed entry `index` (single thread).
__device__ __forceinline__ bool fifoSync(const Ctx &ctx, const Site &site,
                                        const MscclcFifo &fifo, u64 index) {
  if (index == ~0ull)
    return false;
  return fifoSyncSpin(ctx, site, fifo, index);
}

/// Flush on a port channel: push a flush trigger and wait until the proxy
/// finished it (single thread; the caller runs a block barrier after).
__device__ MSCCLC_OP_INLINE bool portFlush(const Ctx &ctx, const Site &site,
                                          const MscclcFifo &fifo,
                                          u32 proxyId) {
  return fifoSync(ctx, site, fifo,
                  fifoPush(ctx, site, fifo,
                           makeTrigger(MSCCLC_TRIGGER_FLUSH, proxyId, 0, 0, 0,
                                       0, 0)));
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_FIFO_H
