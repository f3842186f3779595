//===- allreduce_1pa_ll.cu - Hand-written 1PA LL all-reduce --------------===//
//
// The reference that generated code is measured against: the same algorithm
// as stdlib/allreduce_1pa.mscl, with the same plan (mscclc --emit=plan:
// grid, channel order, scratch layout, LL flags), so one harness launches
// both. Written the way one would by hand: every input packet is loaded
// once and stored to all peers, and the reduce reads all peers' packets in
// one pass. Rank-generic: the rank and rank count come from the arguments.
//
// Assumes the plan's order: rank r's memory channel i goes to peer
// i < r ? i : i + 1 (ascending peers), and scratch `recv[N]` packet buffer
// at offset 0 with slot p holding rank p's input.
//
// Build: nvcc -std=c++17 -arch=sm_90 -I runtime/include -DMSCCLC_DTYPE=f32
// (or NVRTC with the same options).
//
//===----------------------------------------------------------------------===//

#include "mscclc/device/Device.h"

using namespace mscclc::dev;

/// Ranks supported (bounds the loops; any count up to this works).
#define MSCCLC_REF_MAX_RANKS 64

extern "C" __global__ void __launch_bounds__(1024)
    mscclc_ref_allreduce_1pa_ll(const __grid_constant__ MscclcKernelArgs args) {
  const u32 rank = args.rank, nranks = args.nranks;
  if (!checkArgs(args, rank, nranks, 1) || nranks > MSCCLC_REF_MAX_RANKS)
    return;
  Ctx ctx(args, rank);
  beginBlock(ctx, args);
  const u64 count = args.count;
  const u64 ppc = mscclc_packets_per_chunk(count, 1, sizeof(T));
  const u64 par = packetParity(ctx);
  const T *in = static_cast<const T *>(args.input);
  T *out = static_cast<T *>(args.output);
  const u64 bytes = count * sizeof(T);
  const u64 packets = (bytes + 7) / 8;
  constexpr u64 perPacket = 8 / sizeof(T);
  const Site site = {0, MSCCLC_CHAN_NONE, 0, MSCCLC_OPC_LL_READ};

  // Our slot in peer i's recv buffer: packetsAt(peerScratch, 0) + slot.
  // Peer pointers are re-read from the (L1-cached) channel array rather
  // than kept in a run-time indexed array, which would live on the stack.
  const u64 slot = (par * nranks + rank) * ppc;
  const LL16Packet *recv = packetsAt(args.scratch, 0) + par * nranks * ppc;

  // Send: one load, N-1 packet stores.
  for (u64 q = threadIdx.x; q < packets; q += blockDim.x) {
    const u32 valid = static_cast<u32>(umin(8, bytes - q * 8));
    const uint2 v = loadStep<uint2>(in + q * perPacket, valid);
    for (u32 i = 0; i + 1 < nranks; ++i)
      storeLL16(packetsAt(args.memoryChannels[i].peerScratch, 0) + slot + q,
                v, ctx.flag);
  }
  // Receive: our input plus every peer's packets, in one pass.
  for (u64 q = threadIdx.x; q < packets; q += blockDim.x) {
    const u32 valid = static_cast<u32>(umin(8, bytes - q * 8));
    uint2 acc = loadStep<uint2>(in + q * perPacket, valid);
    for (u32 p = 0; p < nranks; ++p)
      if (p != rank)
        acc = reduceLanes<T, RedOp>(
            acc, readLL16(ctx, site, recv + p * ppc + q, ctx.flag));
    storeStep(out + q * perPacket, acc, valid);
  }
  endBlock(ctx, args);
}
