// RUN: mscclc --simulate %s --schedules 30 | FileCheck %s
// Every rank sums x_0 + x_1 + x_2 + x_3 in rank order, its own input in its
// place, so all get the same bits.
// CHECK: estimated time {{.*}} at 1 MB
// CHECK: simulation: allreduce_1pa, 4 ranks, 30 schedules x {{[0-9]+}} sizes: PASS

mscl.program @allreduce_1pa attributes {collective = #mscl.collective<allreduce>,
    ranks = 4 : i64, gpus_per_node = 4 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[4] packet
  mscl.channel @ll_0_1 memory LL 0 -> 1
  mscl.channel @ll_0_2 memory LL 0 -> 2
  mscl.channel @ll_0_3 memory LL 0 -> 3
  mscl.channel @ll_1_0 memory LL 1 -> 0
  mscl.channel @ll_1_2 memory LL 1 -> 2
  mscl.channel @ll_1_3 memory LL 1 -> 3
  mscl.channel @ll_2_0 memory LL 2 -> 0
  mscl.channel @ll_2_1 memory LL 2 -> 1
  mscl.channel @ll_2_3 memory LL 2 -> 3
  mscl.channel @ll_3_0 memory LL 3 -> 0
  mscl.channel @ll_3_1 memory LL 3 -> 1
  mscl.channel @ll_3_2 memory LL 3 -> 2
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @ll_0_1 to <rank 1, recv[0]> from <rank 0, input[0]>
      mscl.put @ll_0_2 to <rank 2, recv[0]> from <rank 0, input[0]>
      mscl.put @ll_0_3 to <rank 3, recv[0]> from <rank 0, input[0]>
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, recv[1]>, <rank 0, recv[2]>, <rank 0, recv[3]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @ll_1_0 to <rank 0, recv[1]> from <rank 1, input[0]>
      mscl.put @ll_1_2 to <rank 2, recv[1]> from <rank 1, input[0]>
      mscl.put @ll_1_3 to <rank 3, recv[1]> from <rank 1, input[0]>
      mscl.reduce to <rank 1, output[0]> from [<rank 1, recv[0]>, <rank 1, input[0]>, <rank 1, recv[2]>, <rank 1, recv[3]>]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.put @ll_2_0 to <rank 0, recv[2]> from <rank 2, input[0]>
      mscl.put @ll_2_1 to <rank 1, recv[2]> from <rank 2, input[0]>
      mscl.put @ll_2_3 to <rank 3, recv[2]> from <rank 2, input[0]>
      mscl.reduce to <rank 2, output[0]> from [<rank 2, recv[0]>, <rank 2, recv[1]>, <rank 2, input[0]>, <rank 2, recv[3]>]
    }
  }
  mscl.rank 3 {
    mscl.threadblock 0 {
      mscl.put @ll_3_0 to <rank 0, recv[3]> from <rank 3, input[0]>
      mscl.put @ll_3_1 to <rank 1, recv[3]> from <rank 3, input[0]>
      mscl.put @ll_3_2 to <rank 2, recv[3]> from <rank 3, input[0]>
      mscl.reduce to <rank 3, output[0]> from [<rank 3, recv[0]>, <rank 3, recv[1]>, <rank 3, recv[2]>, <rank 3, input[0]>]
    }
  }
}

