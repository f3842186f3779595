// A block reads what its previous operation wrote, with no barrier between.
// RUN: not mscclc --simulate %s --schedules 1 --bytes 64 2>&1 | FileCheck %s
// CHECK: fail-missing-barrier.mlir:[[@LINE+11]]:7: error: race (missing barrier): rank 0 tb 0 reads rank 0 s[0] (elements 0..15) written by an earlier operation of the same thread block
// CHECK: fail-missing-barrier.mlir:[[@LINE+9]]:7: note: written by mscl.copy of rank 0 tb 0
mscl.program @missing_barrier attributes {collective = #mscl.collective<allreduce>,
    ranks = 1 : i64, gpus_per_node = 1 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
    }
  }
}
