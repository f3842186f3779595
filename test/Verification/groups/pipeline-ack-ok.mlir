// RUN: mscl-opt %s -mscl-check-sync -mscl-check-collective -o /dev/null
// RUN: mscclc --simulate %s --schedules 40 --bytes 4,1000,40000 | FileCheck %s
// Broadcast through one staging chunk, pipelined, by thread-block groups
// of two on both ranks. Rank 1 acknowledges each slice after its wait, so
// rank 0's next signal follows a wait that needed both of rank 1's blocks,
// each of which had waited for both of rank 0's: the groups cannot drift
// apart, and the staging slice is reused only after rank 1 read it.
// CHECK: simulation: pipeline_ack, 2 ranks, 40 schedules x 3 sizes: PASS

mscl.program @pipeline_ack attributes {collective = #mscl.collective<broadcast>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64, root = 0 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @stage scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.pipeline unit 256 {
        mscl.put @c01 to <rank 1, stage[0]> from <rank 0, input[0]>
        mscl.signal [@c01]
        mscl.wait [@c01]
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 group 2 {
      mscl.pipeline unit 256 {
        mscl.wait [@c10]
        mscl.copy to <rank 1, output[0]> from <rank 1, stage[0]>
        mscl.signal [@c10]
      }
    }
  }
}
