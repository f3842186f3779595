// A reduce that stages rank 0's input in rank 0's own output: only the
// root's output belongs to a reduce (NCCL lets the others pass no receive
// buffer), so the simulator refuses the write even though the root's
// result is right.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 40 --dtype i32 2>&1 | FileCheck %s
// CHECK: fail-reduce-nonroot.mlir:[[@LINE+14]]:7: error: wrong result of reduce: the operation shown writes rank 0 output[0] element 0, but only the root's (rank 1) output belongs to the collective; other ranks may pass no receive buffer
// CHECK: simulation: reduce_writes_nonroot, 2 ranks, 2 schedules x 1 sizes: FAIL
mscl.program @reduce_writes_nonroot attributes {collective = #mscl.collective<reduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64,
    root = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@c01]
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.barrier
      mscl.put_with_signal @c01 to <rank 1, recv[0]> from <rank 0, output[0]>
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.signal [@c10]
      mscl.wait [@c10]
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, recv[0]>]
      mscl.signal [@c10]
    }
  }
}
