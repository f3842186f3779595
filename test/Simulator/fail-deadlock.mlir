// Both ranks wait before signalling: every block blocks.
// RUN: not mscclc --simulate %s --schedules 3 2>&1 | FileCheck %s
// CHECK: fail-deadlock.mlir:[[@LINE+13]]:7: error: deadlock: every remaining thread block is blocked
// CHECK: note: rank 0 tb 0 waits for signal #1 on @hb_1_0 from rank 1, which has sent 0
// CHECK: note: rank 1 tb 0 waits for signal #1 on @hb_0_1 from rank 0, which has sent 0
// CHECK: simulation: deadlock, 2 ranks, 3 schedules x {{[0-9]+}} sizes: FAIL
mscl.program @deadlock attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@hb_0_1]
      mscl.signal [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@hb_1_0]
      mscl.signal [@hb_1_0]
    }
  }
}
