// A scatter whose root sends rank 1 block 0 of its input instead of
// block 1: rank 1's output is wrong, reported at the put that wrote it.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 80 --dtype i32 2>&1 | FileCheck %s
// CHECK: fail-scatter-wrong-block.mlir:[[@LINE+12]]:7: error: wrong result of scatter (i32): rank 1 output[0] element 0: expected {{-?[0-9]+}}, got {{-?[0-9]+}} (10 of 10 elements wrong)
mscl.program @scatter_wrong_block attributes {collective = #mscl.collective<scatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.wait [@c01]
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.signal [@c10]
      mscl.wait [@c10]
    }
  }
}
