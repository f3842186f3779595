// In-place all-gather: rank r's input is output[r] (NCCL's in-place layout).
// RUN: mscclc --simulate --single-launch %s --schedules 20 --dtype bf16 | FileCheck %s
// CHECK: simulation: inplace_allgather, 2 ranks, 20 schedules x {{[0-9]+}} sizes: PASS
// One launch only (--single-launch): peers write into rank 1's one buffer with
// no handshake, while its caller may still write the input.
mscl.program @inplace_allgather attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64,
    inplace} {
  mscl.buffer @output output[2]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @hb_0_1 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.wait [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal @hb_1_0 to <rank 0, output[1]> from <rank 1, output[1]>
      mscl.wait [@hb_1_0]
    }
  }
}
