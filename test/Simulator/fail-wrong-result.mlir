// Rank 1 copies its input instead of reducing: its output is wrong, and the
// error points at the copy that wrote the wrong element.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 40 --dtype i32 2>&1 | FileCheck %s
// CHECK: fail-wrong-result.mlir:[[@LINE+20]]:7: error: wrong result of allreduce (sum, i32): rank 1 output[0] element 0: expected {{-?[0-9]+}}, got {{-?[0-9]+}} (10 of 10 elements wrong)
// CHECK: simulation: wrong_result, 2 ranks, 2 schedules x 1 sizes: FAIL (size 40 B = 10 elements of i32, sum, timed schedule 0, --seed 1)
mscl.program @wrong_result attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@hb_0_1]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @hb_1_0 to <rank 0, s[0]> from <rank 1, input[0]>
      mscl.signal [@hb_1_0]
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
    }
  }
}
