// Packets written in pipeline iterations 0, 1, ... each land in their own
// slice of the chunk, all with the launch's flag (as the kernels write
// them): a read outside the pipeline takes the whole chunk, every packet
// carrying the flag it expects. One launch only (--single-launch): rank 0
// never hears from rank 1, so back to back it could run two launches ahead.
// RUN: mscclc --simulate %s --single-launch --schedules 3 --bytes 4K,12,4100 | FileCheck %s
// CHECK: PASS
mscl.program @ll_flag attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[1] packet
  mscl.channel @ll_0_1 memory LL 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1024 {
        mscl.put @ll_0_1 to <rank 1, recv[0]> from <rank 0, input[0]>
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[0]> from <rank 1, recv[0]>
    }
  }
}
