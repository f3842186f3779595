// RUN: mscclc --simulate %s --schedules 30 | FileCheck %s
// CHECK: simulation: allreduce_2pa, 4 ranks, 30 schedules x {{[0-9]+}} sizes: PASS

mscl.program @allreduce_2pa attributes {collective = #mscl.collective<allreduce>,
    ranks = 4 : i64, gpus_per_node = 4 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_0_2 memory HB 0 -> 2
  mscl.channel @hb_0_3 memory HB 0 -> 3
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.channel @hb_1_2 memory HB 1 -> 2
  mscl.channel @hb_1_3 memory HB 1 -> 3
  mscl.channel @hb_2_0 memory HB 2 -> 0
  mscl.channel @hb_2_1 memory HB 2 -> 1
  mscl.channel @hb_2_3 memory HB 2 -> 3
  mscl.channel @hb_3_0 memory HB 3 -> 0
  mscl.channel @hb_3_1 memory HB 3 -> 1
  mscl.channel @hb_3_2 memory HB 3 -> 2
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @hb_0_1 to <rank 1, s[0]> from <rank 0, input[1]>
      mscl.put @hb_0_2 to <rank 2, s[0]> from <rank 0, input[2]>
      mscl.put @hb_0_3 to <rank 3, s[0]> from <rank 0, input[3]>
      mscl.signal [@hb_0_1, @hb_0_2, @hb_0_3]
      mscl.wait [@hb_0_1, @hb_0_2, @hb_0_3]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>, <rank 0, s[2]>, <rank 0, s[3]>]
      mscl.barrier
      mscl.put @hb_0_1 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.put @hb_0_2 to <rank 2, output[0]> from <rank 0, output[0]>
      mscl.put @hb_0_3 to <rank 3, output[0]> from <rank 0, output[0]>
      mscl.signal [@hb_0_1, @hb_0_2, @hb_0_3]
      mscl.wait [@hb_0_1, @hb_0_2, @hb_0_3]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @hb_1_0 to <rank 0, s[1]> from <rank 1, input[0]>
      mscl.put @hb_1_2 to <rank 2, s[1]> from <rank 1, input[2]>
      mscl.put @hb_1_3 to <rank 3, s[1]> from <rank 1, input[3]>
      mscl.signal [@hb_1_0, @hb_1_2, @hb_1_3]
      mscl.wait [@hb_1_0, @hb_1_2, @hb_1_3]
      mscl.reduce to <rank 1, output[1]> from [<rank 1, input[1]>, <rank 1, s[0]>, <rank 1, s[2]>, <rank 1, s[3]>]
      mscl.barrier
      mscl.put @hb_1_0 to <rank 0, output[1]> from <rank 1, output[1]>
      mscl.put @hb_1_2 to <rank 2, output[1]> from <rank 1, output[1]>
      mscl.put @hb_1_3 to <rank 3, output[1]> from <rank 1, output[1]>
      mscl.signal [@hb_1_0, @hb_1_2, @hb_1_3]
      mscl.wait [@hb_1_0, @hb_1_2, @hb_1_3]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.put @hb_2_0 to <rank 0, s[2]> from <rank 2, input[0]>
      mscl.put @hb_2_1 to <rank 1, s[2]> from <rank 2, input[1]>
      mscl.put @hb_2_3 to <rank 3, s[2]> from <rank 2, input[3]>
      mscl.signal [@hb_2_0, @hb_2_1, @hb_2_3]
      mscl.wait [@hb_2_0, @hb_2_1, @hb_2_3]
      mscl.reduce to <rank 2, output[2]> from [<rank 2, input[2]>, <rank 2, s[0]>, <rank 2, s[1]>, <rank 2, s[3]>]
      mscl.barrier
      mscl.put @hb_2_0 to <rank 0, output[2]> from <rank 2, output[2]>
      mscl.put @hb_2_1 to <rank 1, output[2]> from <rank 2, output[2]>
      mscl.put @hb_2_3 to <rank 3, output[2]> from <rank 2, output[2]>
      mscl.signal [@hb_2_0, @hb_2_1, @hb_2_3]
      mscl.wait [@hb_2_0, @hb_2_1, @hb_2_3]
    }
  }
  mscl.rank 3 {
    mscl.threadblock 0 {
      mscl.put @hb_3_0 to <rank 0, s[3]> from <rank 3, input[0]>
      mscl.put @hb_3_1 to <rank 1, s[3]> from <rank 3, input[1]>
      mscl.put @hb_3_2 to <rank 2, s[3]> from <rank 3, input[2]>
      mscl.signal [@hb_3_0, @hb_3_1, @hb_3_2]
      mscl.wait [@hb_3_0, @hb_3_1, @hb_3_2]
      mscl.reduce to <rank 3, output[3]> from [<rank 3, input[3]>, <rank 3, s[0]>, <rank 3, s[1]>, <rank 3, s[2]>]
      mscl.barrier
      mscl.put @hb_3_0 to <rank 0, output[3]> from <rank 3, output[3]>
      mscl.put @hb_3_1 to <rank 1, output[3]> from <rank 3, output[3]>
      mscl.put @hb_3_2 to <rank 2, output[3]> from <rank 3, output[3]>
      mscl.signal [@hb_3_0, @hb_3_1, @hb_3_2]
      mscl.wait [@hb_3_0, @hb_3_1, @hb_3_2]
    }
  }
}

