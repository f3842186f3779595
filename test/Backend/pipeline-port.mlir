// RUN: mscclc %s --emit=cuda | FileCheck %s

// A pipelined HB exchange (two-chunk runs, so chunk by chunk) and a
// port channel put that signals and flushes.

// CHECK-LABEL: mscclc_pipe_rank0(
// CHECK: mscl.pipeline unit 65536 {...}
// CHECK-NEXT: {{^ *{$}}
// CHECK-NEXT: const u64 pu = pipelineUnitElems(65536);
// CHECK-NEXT: const u64 trips = mscclc_pipeline_trips(ce, pu);
// CHECK-NEXT: for (u64 t = 0; t < trips; ++t) {
// CHECK: mscl.put @hb01 to <rank 1, tmp[0:2]> from <rank 0, input[0:2]>
// CHECK: for (u64 k = 0; k < 2; ++k) { // chunk by chunk
// CHECK-NEXT: const u64 n = umin((ub(k + 1) - ub(k)), ce);
// CHECK-NEXT: const Range r = pipelineSlice(n, t, pu);
// CHECK: {in + ub(k) + r.begin},
// CHECK: {at(args.memoryChannels[0].peerScratch, off_tmp) + k * cs + r.begin},
// CHECK: mscl.signal [@hb01]
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: if (threadIdx.x == 0) signalSemaphore(args.memoryChannels[0].peerSemaphore);
// CHECK: mscl.wait [@hb01]
// CHECK-NEXT: wm0 += 1;
// CHECK: mscl.put_with_signal_and_flush @p01 to <rank 1, tmp[1]> from <rank 0, output[1]>
// CHECK: __syncthreads();
// CHECK-NEXT: if (threadIdx.x == 0) {
// CHECK-NEXT: const u64 last = portPut(ctx, Site{{.*}}MSCCLC_CHAN_PORT, 0, MSCCLC_OPC_FIFO_PUSH}, args.fifo,
// CHECK-NEXT: args.portChannels[0].proxyId, MSCCLC_TRIGGER_SIGNAL | MSCCLC_TRIGGER_FLUSH,
// CHECK-NEXT: MSCCLC_BUF_SCRATCH, off_tmp + (1 * cs + r.begin) * sizeof(T),
// CHECK-NEXT: MSCCLC_BUF_OUTPUT, (ub(1) + r.begin) * sizeof(T),
// CHECK-NEXT: r.size() * sizeof(T));
// CHECK-NEXT: fifoSync(ctx, Site{{.*}}MSCCLC_CHAN_PORT, 0, MSCCLC_OPC_FLUSH}, args.fifo, last);
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();

mscl.program @pipe attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @tmp scratch[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @p01 port 0 -> 1
  mscl.channel @p10 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 65536 {
        mscl.put @hb01 to <rank 1, tmp[0:2]> from <rank 0, input[0:2]>
        mscl.signal [@hb01]
        mscl.wait [@hb01]
      }
    }
    mscl.threadblock 1 {
      mscl.put_with_signal_and_flush @p01 to <rank 1, tmp[1]> from <rank 0, output[1]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.pipeline unit 65536 {
        mscl.put @hb10 to <rank 0, tmp[0:2]> from <rank 1, input[0:2]>
        mscl.signal [@hb10]
        mscl.wait [@hb10]
      }
    }
    mscl.threadblock 1 {
      mscl.wait [@p10]
    }
  }
}
