// RUN: mscclc %s --emit=cuda | FileCheck %s
// RUN: mscclc %s --emit=plan | FileCheck %s --check-prefix=PLAN

// 2PA all-reduce on 2 ranks over HB memory channels, each rank's work on a
// thread-block group of 2: reduce-scatter (put + signal, wait, reduce),
// then all-gather (put + signal, wait).

// CHECK-LABEL: mscclc_allreduce_2pa_hb_rank0(
// CHECK: if (!checkArgs(args, 0, 2, 2))
// CHECK: T *const s_tmp = at(args.scratch, off_tmp);
// CHECK: case 0: case 1: { // thread-block group of 2
// CHECK-NEXT: const u32 g = blockIdx.x - 0;
// CHECK-NEXT: const u64 gs = mscclc_group_stripe(ce, 0, 2, sizeof(T));
// CHECK-NEXT: u64 wm0 = loadWaitCounter(args, 0 + g); // @hb01
// CHECK: mscl.put_with_signal @hb01 to <rank 1, tmp[0]> from <rank 0, input[1]>
// CHECK: const Range whole = {0, n};
// CHECK-NEXT: for (Range r = groupFirst(whole, g, 2, gs); !r.done(); r = groupNext(whole, r, 2, gs)) {
// CHECK: {in + ub(1) + r.begin},
// CHECK: {at(args.memoryChannels[0].peerScratch, off_tmp) + r.begin},
// CHECK: __syncthreads();
// CHECK-NEXT: if (threadIdx.x == 0) signalSemaphore(args.memoryChannels[0].peerSemaphore);
// CHECK: mscl.wait [@hb01]
// CHECK-NEXT: wm0 += 2;
// CHECK-NEXT: if (threadIdx.x == 0)
// CHECK-NEXT: waitSemaphore(ctx, Site{{.*}}MSCCLC_CHAN_MEMORY, 0, MSCCLC_OPC_WAIT}, args.memoryChannels[0].semaphore, wm0);
// CHECK-NEXT: __syncthreads();
// CHECK: mscl.reduce to <rank 0, output[0]>
// CHECK: const Operands<2, 0, 1, 0> o = {
// CHECK-NEXT: {in + r.begin, s_tmp + r.begin},
// CHECK: mscl.barrier
// CHECK-NEXT: __syncthreads();
// CHECK: endBlock(ctx, args);
// CHECK-NEXT: storeWaitCounter(args, 0 + g, wm0);
// CHECK-NEXT: return;
// CHECK-LABEL: mscclc_allreduce_2pa_hb_rank1(

// PLAN: "kernel": "mscclc_allreduce_2pa_hb_rank0",
// PLAN-NEXT: "blocks": 2,
// PLAN-NEXT: "waitSlots": 2,
// PLAN: "protocol": "HB",
// PLAN: "group": 2,
// PLAN-NEXT: "waitSlot": 0,
// PLAN-NEXT: "signals": true,
// PLAN-NEXT: "waits": true,
// PLAN-NEXT: "peerBuffers": [
// PLAN-NEXT: "output",
// PLAN-NEXT: "scratch"

mscl.program @allreduce_2pa_hb attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @tmp scratch[1]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.put_with_signal @hb01 to <rank 1, tmp[0]> from <rank 0, input[1]>
      mscl.wait [@hb01]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, tmp[0]>]
      mscl.barrier
      mscl.put_with_signal @hb01 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.wait [@hb01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 group 2 {
      mscl.put_with_signal @hb10 to <rank 0, tmp[0]> from <rank 1, input[0]>
      mscl.wait [@hb10]
      mscl.reduce to <rank 1, output[1]> from [<rank 1, input[1]>, <rank 1, tmp[0]>]
      mscl.barrier
      mscl.put_with_signal @hb10 to <rank 0, output[1]> from <rank 1, output[1]>
      mscl.wait [@hb10]
    }
  }
}
