//===- Sync.h - Time-outs, error records and semaphores for device code --===//
//
// Every spin in an mscclc kernel (semaphore wait, LL packet read, full FIFO,
// flush) goes through `Spinner`, which gives up after `timeoutNs` of the
// vendor's clock (timerNs), when the host sets the abort flag, or as soon
// as another
// block of the rank recorded an error. Giving up records the first error of
// the launch (rank, block, channel, op, .mscl line) and lets the kernel run
// to its end without waiting again, so a missing peer never hangs the GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_SYNC_H
#define MSCCLC_DEVICE_SYNC_H

#include "mscclc/device/Types.h"

namespace mscclc {
namespace dev {

/// Where a spin happens, for the error record.
struct Site {
  u32 line;        ///< .mscl source line
  u32 channelKind; ///< MSCCLC_CHAN_*
  u32 channel;     ///< index in the plan's list of that kind
  u32 op;          ///< MSCCLC_OPC_*
};

__device__ __forceinline__ u32 loadVolatile(const u32 *p) {
  return *reinterpret_cast<const volatile u32 *>(p);
}

/// Per-launch context every helper gets: error reporting and the LL flag.
struct Ctx {
  MscclcErrorRecord *error;
  const volatile u32 *abortFlag;
  u64 timeoutNs;
  u32 rank;
  u32 flag; ///< LL flag of this launch for this block (epoch + 1)

  __device__ Ctx(const MscclcKernelArgs &args, u32 kernelRank)
      : error(args.error), abortFlag(args.abortFlag),
        timeoutNs(args.timeoutNs), rank(kernelRank), flag(0) {}

  /// Records an error unless one is recorded already (the first one wins).
  __device__ void fail(u32 code, const Site &site, u64 expected,
                       u64 observed) const {
    if (atomicCAS(&error->code, MSCCLC_ERR_NONE, code) != MSCCLC_ERR_NONE)
      return;
    error->rank = rank;
    error->block = blockIdx.x;
    error->channelKind = site.channelKind;
    error->channel = site.channel;
    error->op = site.op;
    error->line = site.line;
    error->expected = expected;
    error->observed = observed;
    fenceSystem();
  }

  /// Whether any block of this rank failed (then every spin gives up).
  __device__ bool failed() const { return loadVolatile(&error->code) != 0; }
};

/// Bounded spinning: call `poll` after each unsuccessful check; it returns
/// true when the caller must give up (the error is then recorded).
struct Spinner {
  u64 start = 0;
  u32 iter = 0;

  /// Cheap on most iterations; every 256th looks at failures, the abort
  /// flag and the clock.
  __device__ __forceinline__ bool poll(const Ctx &ctx, const Site &site,
                                       u64 expected, u64 observed) {
    if ((iter++ & 255u) != 0)
      return false;
    return check(ctx, site, expected, observed);
  }

  __device__ MSCCLC_OP_INLINE bool check(const Ctx &ctx, const Site &site,
                                         u64 expected, u64 observed) {
    if (ctx.failed())
      return true;
    if (ctx.abortFlag && *ctx.abortFlag) {
      ctx.fail(MSCCLC_ERR_ABORTED, site, expected, observed);
      return true;
    }
    if (ctx.timeoutNs) {
      u64 now = timerNs();
      if (!start)
        start = now;
      else if (now - start > ctx.timeoutNs) {
        ctx.fail(MSCCLC_ERR_TIMEOUT, site, expected, observed);
        return true;
      }
    }
    return false;
  }
};

/// Kernel entry checks; returns false (after recording why) when the
/// arguments do not match the kernel.
__device__ __forceinline__ bool checkArgs(const MscclcKernelArgs &args,
                                          u32 rank, u32 nranks, u32 blocks) {
  u32 code = MSCCLC_ERR_NONE;
  if (args.abiVersion != MSCCLC_ABI_VERSION)
    code = MSCCLC_ERR_ABI_MISMATCH;
  else if (args.rank != rank || args.nranks != nranks || gridDim.x != blocks)
    code = MSCCLC_ERR_BAD_ARGS;
  if (code == MSCCLC_ERR_NONE)
    return true;
  if (threadIdx.x == 0 && args.error) {
    Ctx ctx(args, rank);
    Site site = {0, MSCCLC_CHAN_NONE, 0, MSCCLC_OPC_ENTRY};
    ctx.fail(code, site, args.abiVersion, args.rank);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Semaphores: monotonic u64 counters, incremented by signals, never reset.
//===----------------------------------------------------------------------===//

/// Signal through a memory channel: make every earlier write of the block
/// visible system-wide, then add one to the peer's semaphore. Called by one
/// thread after a block barrier (the barrier makes the other threads' puts
/// part of this thread's history; the fence is cumulative).
__device__ __forceinline__ void signalSemaphore(u64 *peerSemaphore) {
  fenceSystem();
  incrementRelaxedSys(peerSemaphore);
}

/// The spin of waitSemaphore (outlined with MSCCLC_OUTLINE_OPS).
__device__ MSCCLC_OP_INLINE bool waitSemaphoreSpin(const Ctx &ctx,
                                                   const Site &site,
                                                   const u64 *semaphore,
                                                   u64 expected) {
  Spinner spin;
  for (;;) {
    u64 v = loadAcquireSys(semaphore);
    if (static_cast<i64>(v - expected) >= 0)
      return true;
    if (spin.poll(ctx, site, expected, v))
      return false;
  }
}

/// Waits until the local semaphore reaches `expected` (acquire). Called by
/// one thread; the caller then runs a block barrier. Returns false on
/// time-out or abort.
__device__ __forceinline__ bool waitSemaphore(const Ctx &ctx, const Site &site,
                                              const u64 *semaphore,
                                              u64 expected) {
  if (static_cast<i64>(loadAcquireSys(semaphore) - expected) >= 0)
    return true;
  return waitSemaphoreSpin(ctx, site, semaphore, expected);
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_SYNC_H
