//===- allreduce_2pa_hb.cu - Hand-written 2PA HB all-reduce --------------===//
//
// The reference for stdlib/allreduce_2pa_hb.mscl, launched with that
// program's plan (one block per rank, memory channel i to peer
// i < r ? i : i + 1, wait slot i per channel, scratch `recv[N]` plain at
// offset 0). Hand-written tricks: the reduce of our chunk and its
// all-gather are one pass (each reduced vector is stored locally and to
// every peer straight from registers), and signals/waits to all peers run
// in parallel threads. Synchronisation is the same as the generated code:
// signal after the reduce-scatter puts, wait, reduce + all-gather, signal,
// wait; two signals per channel and launch.
//
// Build: nvcc -std=c++17 -arch=sm_90 -I runtime/include -DMSCCLC_DTYPE=f32
//
//===----------------------------------------------------------------------===//

#include "mscclc/device/Device.h"

using namespace mscclc::dev;

#define MSCCLC_REF_MAX_RANKS 64

namespace {

/// Signals every peer (one thread each) after a block barrier.
__device__ __forceinline__ void signalAll(const MscclcKernelArgs &args,
                                          u32 peers) {
  __syncthreads();
  if (threadIdx.x < peers)
    signalSemaphore(args.memoryChannels[threadIdx.x].peerSemaphore);
}

/// Waits for one more signal from every peer (one thread each).
__device__ __forceinline__ void waitAll(const Ctx &ctx,
                                        const MscclcKernelArgs &args,
                                        u32 peers, u64 expected) {
  if (threadIdx.x < peers) {
    const Site site = {0, MSCCLC_CHAN_MEMORY, threadIdx.x, MSCCLC_OPC_WAIT};
    waitSemaphore(ctx, site, args.memoryChannels[threadIdx.x].semaphore,
                  expected);
  }
  __syncthreads();
}

} // namespace

extern "C" __global__ void __launch_bounds__(1024)
    mscclc_ref_allreduce_2pa_hb(const __grid_constant__ MscclcKernelArgs args) {
  const u32 rank = args.rank, nranks = args.nranks, peers = nranks - 1;
  if (!checkArgs(args, rank, nranks, 1) || nranks > MSCCLC_REF_MAX_RANKS)
    return;
  Ctx ctx(args, rank);
  beginBlock(ctx, args);
  const u64 count = args.count;
  const u64 ce = mscclc_scratch_chunk_elems(count, nranks);
  T *in = static_cast<T *>(args.input);
  T *out = static_cast<T *>(args.output);
  T *recv = static_cast<T *>(args.scratch);
  auto peerOf = [rank](u32 i) { return i < rank ? i : i + 1; };
  // Every channel has one wait slot (index i); all advance together.
  const u64 base = threadIdx.x < peers ? loadWaitCounter(args, threadIdx.x) : 0;

  // Reduce-scatter: chunk p of our input into slot `rank` of p's recv.
  for (u32 i = 0; i < peers; ++i) {
    const u32 p = peerOf(i);
    const u64 b = mscclc_chunk_begin(p, count, nranks);
    const u64 n = umin(mscclc_chunk_begin(p + 1, count, nranks) - b, ce);
    const Operands<1, 0, 1, 0> o = {
        {in + b}, {}, {at(args.memoryChannels[i].peerScratch, 0) + rank * ce}, {}};
    plainOp<1, 1>(o, n);
  }
  signalAll(args, peers);
  waitAll(ctx, args, peers, base + 1);

  // Reduce our chunk over input + N-1 slots, store it locally and into
  // every peer's output in the same pass.
  const u64 b = mscclc_chunk_begin(rank, count, nranks);
  const u64 n = umin(mscclc_chunk_begin(rank + 1, count, nranks) - b, ce);
  // Destination d: 0 is our output, i + 1 is peer i's output (re-read from
  // the L1-cached channel array; a run-time indexed pointer array would
  // live on the stack).
  auto dst = [&](u32 d) {
    return (d == 0 ? out : static_cast<T *>(args.memoryChannels[d - 1].peerOutput)) + b;
  };
  const T *src = in + b;
  constexpr u64 perVec = 16 / sizeof(T);
  const bool aligned =
      ((reinterpret_cast<u64>(src) | reinterpret_cast<u64>(recv) | (ce * sizeof(T))) & 15) == 0;
  if (aligned) {
    const u64 nvec = n / perVec;
    for (u64 v = threadIdx.x; v < nvec; v += blockDim.x) {
      uint4 acc = loadVec(src + v * perVec);
      for (u32 p = 0; p < nranks; ++p)
        if (p != rank)
          acc = reduceLanes<T, RedOp>(acc, loadVec(recv + p * ce + v * perVec));
      for (u32 d = 0; d < nranks; ++d)
        storeVec(dst(d) + v * perVec, acc);
    }
  }
  for (u64 e = (aligned ? n / perVec * perVec : 0) + threadIdx.x; e < n;
       e += blockDim.x) {
    T acc = loadElem(src + e);
    for (u32 p = 0; p < nranks; ++p)
      if (p != rank)
        acc = RedOp::apply(acc, loadElem(recv + p * ce + e));
    for (u32 d = 0; d < nranks; ++d)
      storeElem(dst(d) + e, acc);
  }
  signalAll(args, peers);
  waitAll(ctx, args, peers, base + 2);

  endBlock(ctx, args);
  if (threadIdx.x < peers)
    args.state.waitCounters[threadIdx.x] = base + 2;
}
