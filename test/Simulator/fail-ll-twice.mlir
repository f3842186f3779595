// Two LL puts write the same packet chunk in one launch.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 64 2>&1 | FileCheck %s
// CHECK: error: LL packets written twice: rank 2 recv[0] {{.*}} receives packets with flag 0 from two LL puts
// CHECK: note: the other put
mscl.program @ll_twice attributes {collective = #mscl.collective<custom>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[1] packet
  mscl.channel @ll_0_2 memory LL 0 -> 2
  mscl.channel @ll_1_2 memory LL 1 -> 2
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @ll_0_2 to <rank 2, recv[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @ll_1_2 to <rank 2, recv[0]> from <rank 1, input[0]>
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.copy to <rank 2, output[0]> from <rank 2, recv[0]>
    }
  }
}
