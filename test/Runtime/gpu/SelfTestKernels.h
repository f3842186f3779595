//===- SelfTestKernels.h - Hand-written ABI kernels for runtime tests -*- C++ -*-===//
//
// Three small kernels written directly against docs/kernel-abi.md, so the
// runtime (IPC exchange, semaphores, proxy FIFO, copy engines, time-outs,
// error records, graphs) is tested independently of the code generator:
//  - selftest_hb: all-reduce over HB memory channels. Each rank puts its
//    input into slot `rank` of every peer's scratch, signals, waits for all
//    peers, sums, then signals+waits once more so no peer overwrites a slot
//    that is still being read.
//  - selftest_port: all-gather over port channels: one put|signal trigger
//    per peer (split below 2^27 bytes), wait, then flush.
//  - selftest_ll8: all-gather in LL8 packets (mscclc/device/Packet.h; the
//    packets of generated HIP code) over LL memory channels: the
//    input goes 4 bytes per packet into every peer's scratch, each rank
//    reads its peers' packets into the output.
// Compiled by NVRTC with -DMSCCLC_DTYPE=<f32|f16|bf16|i32>.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TEST_RUNTIME_SELFTESTKERNELS_H
#define MSCCLC_TEST_RUNTIME_SELFTESTKERNELS_H

namespace gputest {

inline const char *selfTestSource() {
  return R"CUDA(
#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Packet.h"
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define DT_f32 1
#define DT_f16 2
#define DT_bf16 3
#define DT_i32 4
#if CAT(DT_, MSCCLC_DTYPE) == DT_f32
typedef float T;
#elif CAT(DT_, MSCCLC_DTYPE) == DT_f16
typedef __half T;
#elif CAT(DT_, MSCCLC_DTYPE) == DT_bf16
typedef __nv_bfloat16 T;
#else
typedef int T;
#endif

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned long long loadAcquire(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ void recordError(const MscclcKernelArgs &a, unsigned code, unsigned kind,
                            unsigned ch, unsigned op, unsigned long long expected,
                            unsigned long long observed) {
  if (atomicCAS(&a.error->code, 0u, code) == 0u) {
    a.error->rank = a.rank;
    a.error->block = blockIdx.x;
    a.error->channelKind = kind;
    a.error->channel = ch;
    a.error->op = op;
    a.error->line = 0;
    a.error->expected = expected;
    a.error->observed = observed;
    __threadfence_system();
  }
}

/// Whether a spin that started at `start` must give up: the host aborted
/// (recorded), the time-out passed (recorded) or the launch failed already.
__device__ bool giveUp(const MscclcKernelArgs &a, unsigned long long start,
                       unsigned kind, unsigned ch, unsigned op,
                       unsigned long long expected, unsigned long long observed) {
  if (a.abortFlag && *a.abortFlag) {
    recordError(a, MSCCLC_ERR_ABORTED, kind, ch, op, expected, observed);
    return true;
  }
  if (a.timeoutNs && nowNs() - start > a.timeoutNs) {
    recordError(a, MSCCLC_ERR_TIMEOUT, kind, ch, op, expected, observed);
    return true;
  }
  return *(volatile unsigned *)&a.error->code != 0;
}

/// Spins until *sem >= expected; false when giveUp says so.
__device__ bool waitAtLeast(const MscclcKernelArgs &a, const unsigned long long *sem,
                            unsigned long long expected, unsigned kind, unsigned ch) {
  unsigned long long start = nowNs();
  for (unsigned spins = 0;; ++spins) {
    unsigned long long v = loadAcquire(sem);
    if (v >= expected)
      return true;
    if ((spins & 1023) == 0 &&
        giveUp(a, start, kind, ch, MSCCLC_OPC_WAIT, expected, v))
      return false;
  }
}

__device__ __forceinline__ void signalPeer(unsigned long long *peerSem) {
  __threadfence_system();
  atomicAdd_system(peerSem, 1ull);
}

__device__ __forceinline__ T addT(T x, T y) { return x + y; }

/// Checks the argument block; false (after recording) when it is wrong.
__device__ bool entryOk(const MscclcKernelArgs &a, unsigned rank, unsigned nranks) {
  if (a.abiVersion != MSCCLC_ABI_VERSION) {
    if (threadIdx.x == 0)
      recordError(a, MSCCLC_ERR_ABI_MISMATCH, 0, 0, MSCCLC_OPC_ENTRY,
                  MSCCLC_ABI_VERSION, a.abiVersion);
    return false;
  }
  if (a.rank != rank || a.nranks != nranks) {
    if (threadIdx.x == 0)
      recordError(a, MSCCLC_ERR_BAD_ARGS, 0, 0, MSCCLC_OPC_ENTRY, rank, a.rank);
    return false;
  }
  return true;
}

/// HB all-reduce, N ranks, one block, scratch slot p = rank p's input.
__device__ void hbAllReduce(const MscclcKernelArgs &a, unsigned rank, unsigned N) {
  __shared__ int failed;
  if (!entryOk(a, rank, N))
    return;
  if (threadIdx.x == 0)
    failed = 0;
  const unsigned long long n = a.count;
  const T *in = (const T *)a.input;
  T *out = (T *)a.output;
  // N-1 channels, channel i goes to peer (rank + 1 + i) % N.
  for (unsigned i = 0; i + 1 < N; ++i) {
    unsigned peer = (rank + 1 + i) % N;
    (void)peer;
    T *dst = (T *)a.memoryChannels[i].peerScratch + (unsigned long long)rank * n;
    for (unsigned long long j = threadIdx.x; j < n; j += blockDim.x)
      dst[j] = in[j];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned i = 0; i + 1 < N; ++i)
      signalPeer((unsigned long long *)a.memoryChannels[i].peerSemaphore);
    for (unsigned i = 0; i + 1 < N && !failed; ++i) {
      unsigned long long expect = a.state.waitCounters[i] + 1;
      if (!waitAtLeast(a, (const unsigned long long *)a.memoryChannels[i].semaphore,
                       expect, MSCCLC_CHAN_MEMORY, i))
        failed = 1;
      else
        a.state.waitCounters[i] = expect;
    }
  }
  __syncthreads();
  if (failed)
    return;
  const T *scratch = (const T *)a.scratch;
  for (unsigned long long j = threadIdx.x; j < n; j += blockDim.x) {
    T acc = in[j];
    for (unsigned p = 0; p < N; ++p)
      if (p != rank)
        acc = addT(acc, scratch[(unsigned long long)p * n + j]);
    out[j] = acc;
  }
  __syncthreads();
  // Second round: we are done reading our scratch; peers may refill it.
  if (threadIdx.x == 0) {
    for (unsigned i = 0; i + 1 < N; ++i)
      signalPeer((unsigned long long *)a.memoryChannels[i].peerSemaphore);
    for (unsigned i = 0; i + 1 < N; ++i) {
      unsigned long long expect = a.state.waitCounters[i] + 1;
      if (!waitAtLeast(a, (const unsigned long long *)a.memoryChannels[i].semaphore,
                       expect, MSCCLC_CHAN_MEMORY, i))
        break;
      a.state.waitCounters[i] = expect;
    }
  }
}

__device__ unsigned long long pushTrigger(const MscclcKernelArgs &a,
                                          unsigned long long fst,
                                          unsigned long long snd, unsigned ch,
                                          bool *ok) {
  const MscclcFifo &f = a.fifo;
  unsigned long long i = atomicAdd((unsigned long long *)f.head, 1ull);
  unsigned long long start = nowNs();
  while (i - *f.tail >= f.capacity) {
    if (giveUp(a, start, MSCCLC_CHAN_PORT, ch, MSCCLC_OPC_FIFO_PUSH, i,
               *f.tail)) {
      *ok = false;
      return i;
    }
  }
  MscclcTrigger *slot = &f.triggers[i % f.capacity];
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(fst),
               "l"(snd)
               : "memory");
  return i;
}

__device__ unsigned long long trig1(unsigned long long dstOff, unsigned dstBuf,
                                    unsigned srcBuf, unsigned type, unsigned id) {
  return (dstOff & ((1ull << 36) - 1)) | ((unsigned long long)dstBuf << 36) |
         ((unsigned long long)srcBuf << 38) | ((unsigned long long)type << 40) |
         ((unsigned long long)id << 43);
}
__device__ unsigned long long trig2(unsigned long long srcOff, unsigned long long size) {
  return (srcOff & ((1ull << 36) - 1)) | (size << 36) | (1ull << 63);
}

/// Port all-gather: our input into block `rank` of every peer's output.
__device__ void portAllGather(const MscclcKernelArgs &a, unsigned rank, unsigned N) {
  __shared__ int failed;
  if (!entryOk(a, rank, N))
    return;
  const unsigned long long bytes = a.count * sizeof(T);
  if (threadIdx.x == 0) {
    failed = 0;
    bool ok = true;
    const unsigned long long maxPut = 1ull << 26;
    for (unsigned i = 0; i + 1 < N && ok; ++i) {
      unsigned id = a.portChannels[i].proxyId;
      unsigned long long done = 0;
      do {
        unsigned long long part = bytes - done < maxPut ? bytes - done : maxPut;
        bool last = done + part == bytes;
        unsigned type = last ? 3u : 1u; // put (+ signal on the last part)
        pushTrigger(a, trig1(rank * bytes + done, MSCCLC_BUF_OUTPUT, MSCCLC_BUF_INPUT,
                             type, id),
                    trig2(done, part), i, &ok);
        done += part;
      } while (done < bytes && ok);
    }
    if (!ok)
      failed = 1;
  }
  const T *in = (const T *)a.input;
  T *out = (T *)a.output + (unsigned long long)rank * a.count;
  for (unsigned long long j = threadIdx.x; j < a.count; j += blockDim.x)
    out[j] = in[j];
  __syncthreads();
  if (threadIdx.x == 0 && !failed) {
    for (unsigned i = 0; i + 1 < N; ++i) {
      unsigned long long expect = a.state.waitCounters[i] + 1;
      if (!waitAtLeast(a, (const unsigned long long *)a.portChannels[i].semaphore,
                       expect, MSCCLC_CHAN_PORT, i)) {
        failed = 1;
        break;
      }
      a.state.waitCounters[i] = expect;
    }
    // Flush: our input may change once the kernel is over.
    for (unsigned i = 0; i + 1 < N && !failed; ++i) {
      bool ok = true;
      unsigned long long slot =
          pushTrigger(a, trig1(0, 0, 0, 4u, a.portChannels[i].proxyId), trig2(0, 0), i, &ok);
      unsigned long long start = nowNs();
      while (ok && *a.fifo.tail <= slot)
        if (giveUp(a, start, MSCCLC_CHAN_PORT, i, MSCCLC_OPC_FLUSH, slot + 1,
                   *a.fifo.tail))
          ok = false;
      if (!ok)
        failed = 1;
    }
  }
}

/// Word w (4 bytes, zero-padded at the end) of a `bytes`-long buffer.
__device__ unsigned loadWord(const unsigned char *p, unsigned long long bytes,
                             unsigned long long w) {
  unsigned v = 0;
  for (unsigned b = 0; b < 4 && 4 * w + b < bytes; ++b)
    v |= (unsigned)p[4 * w + b] << (8 * b);
  return v;
}
__device__ void storeWord(unsigned char *p, unsigned long long bytes,
                          unsigned long long w, unsigned v) {
  for (unsigned b = 0; b < 4 && 4 * w + b < bytes; ++b)
    p[4 * w + b] = (unsigned char)(v >> (8 * b));
}

/// LL8 all-gather: block `rank` of every output holds rank's input. Packet
/// w of sender s for this launch sits at index 2 * (s * words + w) + parity:
/// the parities alternate packet by packet, so a peer one launch ahead
/// never overwrites a packet of this launch, even when the count (and with
/// it `words`) changed in between. 2 * N * words LL8 packets fit in the
/// plan's N packet chunks (sized for LL16, 8 data bytes per 16).
__device__ void ll8AllGather(const MscclcKernelArgs &a, unsigned rank, unsigned N) {
  if (!entryOk(a, rank, N))
    return;
  mscclc::dev::Ctx ctx(a, rank);
  ctx.flag = a.state.blockEpoch[0] + 1; // never 0: scratch starts zeroed
  const unsigned long long bytes = a.count * sizeof(T);
  const unsigned long long words = (bytes + 3) / 4;
  const unsigned parity = ctx.flag & 1u;
  const unsigned char *in = (const unsigned char *)a.input;
  unsigned char *out = (unsigned char *)a.output;
  for (unsigned i = 0; i + 1 < N; ++i) {
    mscclc::dev::LL8Packet *dst =
        (mscclc::dev::LL8Packet *)a.memoryChannels[i].peerScratch;
    for (unsigned long long w = threadIdx.x; w < words; w += blockDim.x)
      mscclc::dev::storeLL8(dst + 2 * (rank * words + w) + parity,
                            loadWord(in, bytes, w), ctx.flag);
  }
  for (unsigned long long j = threadIdx.x; j < bytes; j += blockDim.x)
    out[rank * bytes + j] = in[j];
  const mscclc::dev::LL8Packet *mine = (const mscclc::dev::LL8Packet *)a.scratch;
  for (unsigned i = 0; i + 1 < N; ++i) {
    unsigned peer = (rank + 1 + i) % N;
    mscclc::dev::Site site = {0, MSCCLC_CHAN_MEMORY, i, MSCCLC_OPC_LL_READ};
    for (unsigned long long w = threadIdx.x; w < words; w += blockDim.x)
      storeWord(out + peer * bytes, bytes, w,
                mscclc::dev::readLL8(ctx, site,
                                     mine + 2 * (peer * words + w) + parity,
                                     ctx.flag));
  }
  // Every thread read the old epoch before it moves on.
  __syncthreads();
  if (threadIdx.x == 0)
    a.state.blockEpoch[0] = ctx.flag;
}

#define RANK_KERNELS(R)                                                        \
  extern "C" __global__ void selftest_hb_rank##R(const __grid_constant__ MscclcKernelArgs a) { \
    hbAllReduce(a, R, a.nranks);                                               \
  }                                                                            \
  extern "C" __global__ void selftest_port_rank##R(const __grid_constant__ MscclcKernelArgs a) { \
    portAllGather(a, R, a.nranks);                                             \
  }                                                                            \
  extern "C" __global__ void selftest_ll8_rank##R(const __grid_constant__ MscclcKernelArgs a) { \
    ll8AllGather(a, R, a.nranks);                                              \
  }
RANK_KERNELS(0)
RANK_KERNELS(1)
RANK_KERNELS(2)
RANK_KERNELS(3)
RANK_KERNELS(4)
RANK_KERNELS(5)
RANK_KERNELS(6)
RANK_KERNELS(7)
)CUDA";
}

} // namespace gputest

#endif // MSCCLC_TEST_RUNTIME_SELFTESTKERNELS_H
