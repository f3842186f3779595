//===- Device.h - Everything a generated or hand-written kernel includes -===//
//
// The block prologue/epilogue (LL flag, persistent wait counters) and the
// channel-level operations generated code calls. Include order: this file
// pulls in every other device header (the vendor's through Vendor.h;
// multimem on CUDA only, not in the CPU emulation).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_DEVICE_H
#define MSCCLC_DEVICE_DEVICE_H

#include "mscclc/device/Elementwise.h"
#include "mscclc/device/Fifo.h"
#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Layout.h"
#include "mscclc/device/Packet.h"
#include "mscclc/device/Sync.h"
#include "mscclc/device/Types.h"
#if !MSCCLC_TARGET_HIP && !MSCCLC_TARGET_HOST
#include "mscclc/device/cuda/Multimem.h"
#endif

namespace mscclc {
namespace dev {

/// Block prologue: the LL flag of this launch (epoch + 1, never 0). After
/// 2^32 - 1 launches the epoch wraps: 0 would match zeroed scratch as a
/// packet that has landed, so it becomes 2, not 1: packet buffers alternate
/// by the flag's parity, and 0xffffffff is odd. Every rank's block counts
/// the same launches, so all of them skip alike.
__device__ __forceinline__ void beginBlock(Ctx &ctx,
                                           const MscclcKernelArgs &args) {
  u32 flag = args.state.blockEpoch[blockIdx.x] + 1;
  ctx.flag = flag == 0 ? 2 : flag;
}

__device__ __forceinline__ void scaleResult(const Ctx &ctx,
                                            const MscclcKernelArgs &args);

/// Block epilogue: publish the new epoch, then, under avg, scale the result
/// with the rank's other blocks. The barrier keeps every thread's read of
/// the old epoch before the write; the fence makes the block's writes (and
/// the peers' data its waits acquired) visible before the epoch that tells
/// the other blocks it has ended.
__device__ __forceinline__ void endBlock(const Ctx &ctx,
                                         const MscclcKernelArgs &args) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (args.scale.buf)
      fenceSystem();
    *reinterpret_cast<volatile u32 *>(&args.state.blockEpoch[blockIdx.x]) =
        ctx.flag;
  }
  if (args.scale.buf)
    scaleResult(ctx, args);
}

/// The semaphore value a waiting block consumed up to the previous launch.
__device__ __forceinline__ u64 loadWaitCounter(const MscclcKernelArgs &args,
                                               u32 slot) {
  return args.state.waitCounters[slot];
}
/// Called after endBlock's barrier, by the block's epilogue.
__device__ __forceinline__ void storeWaitCounter(const MscclcKernelArgs &args,
                                                 u32 slot, u64 value) {
  if (threadIdx.x == 0)
    args.state.waitCounters[slot] = value;
}

/// Parity half of a packet buffer used by this launch.
__device__ __forceinline__ u32 packetParity(const Ctx &ctx) {
  return ctx.flag & 1u;
}

/// Typed pointer `bytes` into a buffer.
__device__ __forceinline__ T *at(void *base, u64 bytes) {
  return reinterpret_cast<T *>(static_cast<char *>(base) + bytes);
}
__device__ __forceinline__ LLPacket *packetsAt(void *base, u64 bytes) {
  return reinterpret_cast<LLPacket *>(static_cast<char *>(base) + bytes);
}

/// Grid-stride `dst[i] = f(src[i])` over n elements (dst may be src): 16
/// bytes per thread and step where both buffers are aligned, then the
/// elements the vectors leave.
template <class F>
__device__ __forceinline__ void mapElements(T *dst, const T *src, u64 n, F f) {
  u64 thread = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  constexpr u64 lanes = sizeof(uint4) / sizeof(T);
  u64 head = 0;
  if (((reinterpret_cast<unsigned long long>(src) |
        reinterpret_cast<unsigned long long>(dst)) % sizeof(uint4)) == 0) {
    head = n / lanes * lanes;
    for (u64 v = thread; v < n / lanes; v += stride) {
      uint4 x = loadVec(src + v * lanes);
      T *e = reinterpret_cast<T *>(&x);
#pragma unroll
      for (u64 j = 0; j < lanes; ++j)
        e[j] = f(e[j]);
      storeVec(dst + v * lanes, x);
    }
  }
  for (u64 i = head + thread; i < n; i += stride)
    dst[i] = f(src[i]);
}

/// avg (ncclAvg: sum, then divide by nranks), inside the collective's
/// kernel: once every block of the rank has ended (its epoch is this
/// launch's flag), all of them scale the result, grid-stride. Nothing the
/// runtime queues then waits behind the kernel on the caller's stream, where
/// it could hold up a proxy stream that shares the hardware queue
/// (docs/runtime.md). Every block ends, also after an error (spins give up),
/// and the co-residency check keeps all of them on the GPU at once, so the
/// wait always ends; after an error nothing is scaled.
__device__ __forceinline__ void scaleResult(const Ctx &ctx,
                                            const MscclcKernelArgs &args) {
  if (threadIdx.x == 0) {
    const Site site = {0, MSCCLC_CHAN_NONE, 0, MSCCLC_OPC_SCALE};
    Spinner spin;
    for (u32 b = 0; b < gridDim.x; ++b)
      for (;;) {
        u32 epoch = loadVolatile(&args.state.blockEpoch[b]);
        if (epoch == ctx.flag || spin.poll(ctx, site, ctx.flag, epoch))
          break;
      }
    fenceSystem();
  }
  __syncthreads();
  if (ctx.failed())
    return;
  T *p = static_cast<T *>(args.scale.buf);
  const double factor = args.scale.factor;
  mapElements(p, p, args.scale.count,
              [factor](T x) { return scale(x, factor); });
}

/// Grid-stride `dst = src * scalar` in T's arithmetic (ncclPreMulSum: each
/// rank's input is multiplied by its scalar before the sum). The scalar is
/// one T in device memory, read when the kernel runs, or (deviceScalar
/// null) the low bytes of hostScalarBits.
__device__ __forceinline__ void premulBuffer(void *dst, const void *src, u64 n,
                                             const void *deviceScalar,
                                             u64 hostScalarBits) {
  // Every T is at most 8 bytes; the host packs the value little-endian.
  const T f = deviceScalar ? *static_cast<const T *>(deviceScalar)
                           : *reinterpret_cast<const T *>(&hostScalarBits);
  // The staging is always 16-byte aligned, so the vectors serve.
  mapElements(static_cast<T *>(dst), static_cast<const T *>(src), n,
              [f](T x) { return Op_prod::apply(x, f); });
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_DEVICE_H
