// RUN: mscclc %s --emit=cuda | FileCheck %s
// RUN: mscclc %s --emit=plan | FileCheck %s --check-prefix=PLAN

// 1PA all-reduce on 2 ranks: LL puts of the whole input to the peer, then
// a reduce that reads the peer's packets.

// CHECK: #include "mscclc/device/Device.h"
// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(1024)
// CHECK-NEXT: mscclc_allreduce_1pa_rank0(const __grid_constant__ MscclcKernelArgs args) {
// CHECK: if (!checkArgs(args, 0, 2, 1))
// CHECK: const u64 sc = args.scratchCount;
// CHECK: const u64 ppc = mscclc_packets_per_chunk(sc, 1, sizeof(T));
// CHECK: LLPacket *const pk_recv = packetsAt(args.scratch, off_recv) + par * 2 * ppc;
// CHECK: switch (blockIdx.x) {
// CHECK: case 0: {
// CHECK: // allreduce-1pa-ll.mlir:{{[0-9]+}}: mscl.put @ll01 to <rank 1, recv[0]> from <rank 0, input[0]>
// CHECK: const u64 n = umin(ub(1), ce);
// CHECK: const Operands<1, 0, 0, 1> o = {
// CHECK-NEXT: {in + r.begin},
// CHECK-NEXT: {},
// CHECK-NEXT: {},
// CHECK-NEXT: {packetsAt(args.memoryChannels[0].peerScratch, off_recv) + par * 2 * ppc + r.begin * sizeof(T) / MSCCLC_LL_DATA_BYTES}};
// CHECK: mscl.reduce to <rank 0, output[0]>
// CHECK: const Operands<1, 1, 1, 0> o = {
// CHECK-NEXT: {in + r.begin},
// CHECK-NEXT: {pk_recv + 1 * ppc + r.begin * sizeof(T) / MSCCLC_LL_DATA_BYTES},
// CHECK-NEXT: {out + r.begin},
// CHECK-NOT: __syncthreads
// CHECK: endBlock(ctx, args);
// CHECK-LABEL: mscclc_allreduce_1pa_rank1(
// CHECK: extern "C" __global__ void mscclc_allreduce_1pa_premul(void *dst, const void *src, unsigned long long n,
// CHECK-NEXT: const void *deviceScalar, unsigned long long hostScalarBits) {
// CHECK-NEXT: premulBuffer(dst, src, n, deviceScalar, hostScalarBits);

// PLAN: "format": "mscclc-plan",
// PLAN: "name": "allreduce_1pa",
// PLAN: "collective": "allreduce",
// PLAN: "ranks": 2,
// PLAN: "redops": [
// PLAN: "avg",
// PLAN-NEXT: "premulsum"
// PLAN-NOT: "scaleKernel"
// PLAN: "premulKernel": "mscclc_allreduce_1pa_premul",
// PLAN: "scratch": [
// PLAN-NEXT: {
// PLAN-NEXT: "name": "recv",
// PLAN-NEXT: "index": 0,
// PLAN-NEXT: "chunks": 2,
// PLAN-NEXT: "packet": true
// PLAN: "rankPlans": [
// PLAN: "kernel": "mscclc_allreduce_1pa_rank0",
// PLAN-NEXT: "blocks": 1,
// PLAN-NEXT: "waitSlots": 0,
// PLAN-NEXT: "memoryChannels": [
// PLAN-NEXT: {
// PLAN-NEXT: "index": 0,
// PLAN-NEXT: "name": "ll01",
// PLAN-NEXT: "peer": 1,
// PLAN-NEXT: "protocol": "LL",
// PLAN-NEXT: "id": 0,
// PLAN-NEXT: "peerIndex": 0,
// PLAN-NEXT: "block": 0,
// PLAN-NEXT: "group": 1,
// PLAN-NEXT: "waitSlot": -1,
// PLAN-NEXT: "signals": false,
// PLAN-NEXT: "waits": false,
// PLAN-NEXT: "peerBuffers": [
// PLAN-NEXT: "scratch"
// PLAN: "kernel": "mscclc_allreduce_1pa_rank1",

mscl.program @allreduce_1pa attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[2] packet
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @ll10 memory LL 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @ll01 to <rank 1, recv[0]> from <rank 0, input[0]>
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, recv[1]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @ll10 to <rank 0, recv[1]> from <rank 1, input[0]>
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, recv[0]>]
    }
  }
}
