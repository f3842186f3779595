// Packets written in pipeline iterations 0, 1, ... carry flags 0, 1, ...;
// a read outside the pipeline expects flag 0 on the whole chunk.
// RUN: not mscclc --simulate %s --schedules 3 --bytes 4K 2>&1 | FileCheck %s
// CHECK: fail-ll-flag.mlir:[[@LINE+17]]:7: error: LL packets with a later flag: rank 1 tb 0 reads rank 1 recv[0] (elements 0..1023) expecting flag 0, but some packets carry the flag of a later pipeline iteration
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
