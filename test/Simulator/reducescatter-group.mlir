// A thread-block group of 2: each block puts, signals and waits for its
// slice; a wait needs one increment from each block of the peer group.
// RUN: mscclc --simulate --single-launch %s --schedules 30 | FileCheck %s
// CHECK: simulation: reducescatter_group, 3 ranks, 30 schedules x {{[0-9]+}} sizes: PASS
// One launch only (--single-launch): a peer's next launch rewrites scratch a
// slow rank still reads.

mscl.program @reducescatter_group attributes {collective = #mscl.collective<reducescatter>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 3 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[3]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[3]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_0_2 memory HB 0 -> 2
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.channel @hb_1_2 memory HB 1 -> 2
  mscl.channel @hb_2_0 memory HB 2 -> 0
  mscl.channel @hb_2_1 memory HB 2 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
        mscl.put @hb_0_1 to <rank 1, s[0]> from <rank 0, input[1]>
        mscl.put @hb_0_2 to <rank 2, s[0]> from <rank 0, input[2]>
        mscl.signal [@hb_0_1, @hb_0_2]
        mscl.wait [@hb_0_1, @hb_0_2]
        mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>, <rank 0, s[2]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 group 2 {
        mscl.put @hb_1_0 to <rank 0, s[1]> from <rank 1, input[0]>
        mscl.put @hb_1_2 to <rank 2, s[1]> from <rank 1, input[2]>
        mscl.signal [@hb_1_0, @hb_1_2]
        mscl.wait [@hb_1_0, @hb_1_2]
        mscl.reduce to <rank 1, output[0]> from [<rank 1, input[1]>, <rank 1, s[0]>, <rank 1, s[2]>]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 group 2 {
        mscl.put @hb_2_0 to <rank 0, s[2]> from <rank 2, input[0]>
        mscl.put @hb_2_1 to <rank 1, s[2]> from <rank 2, input[1]>
        mscl.signal [@hb_2_0, @hb_2_1]
        mscl.wait [@hb_2_0, @hb_2_1]
        mscl.reduce to <rank 2, output[0]> from [<rank 2, input[2]>, <rank 2, s[0]>, <rank 2, s[1]>]
    }
  }
}

