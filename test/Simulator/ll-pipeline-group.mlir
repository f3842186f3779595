// LL packets in a pipeline run by a thread-block group: every iteration
// writes its slice with a new flag and the reader spins on that flag
// (fail-ll-flag.mlir reads outside the pipeline).
// RUN: mscclc --simulate %s --schedules 30 --bytes 8,1000,40K | FileCheck %s
// CHECK: simulation: ll_pipeline, 2 ranks, 30 schedules x 3 sizes: PASS
mscl.program @ll_pipeline attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.buffer @recv scratch[1] packet
  mscl.channel @ll_0_1 memory LL 0 -> 1
  mscl.channel @ll_1_0 memory LL 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.pipeline unit 512 {
        mscl.put @ll_0_1 to <rank 1, recv[0]> from <rank 0, input[0]>
        mscl.copy to <rank 0, output[1]> from <rank 0, recv[0]>
      }
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 group 2 {
      mscl.pipeline unit 512 {
        mscl.put @ll_1_0 to <rank 0, recv[0]> from <rank 1, input[0]>
        mscl.copy to <rank 1, output[0]> from <rank 1, recv[0]>
      }
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
    }
  }
}
