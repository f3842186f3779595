// Rank 1 copies the scratch chunk that rank 0 puts into without waiting
// for rank 0's signal.
// RUN: not mscclc --simulate %s --schedules 5 --bytes 64 2>&1 | FileCheck %s
// CHECK: fail-read-before-signal.mlir:[[@LINE+23]]:7: error: read of data that no signal covered: rank 1 tb 0 reads rank 1 s[0]
// CHECK: fail-read-before-signal.mlir:[[@LINE+13]]:7: note: the put is mscl.put of rank 0 tb 0
// CHECK: simulation: read_before_signal, 2 ranks, 5 schedules x 1 sizes: FAIL
mscl.program @read_before_signal attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[1]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.put @hb_0_1 to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.signal [@hb_0_1]
      mscl.put @hb_0_1 to <rank 1, output[0]> from <rank 0, input[0]>
      mscl.signal [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
      mscl.wait [@hb_1_0]
      mscl.wait [@hb_1_0]
    }
  }
}
