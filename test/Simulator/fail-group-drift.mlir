// A thread-block group in a pipeline, synchronised only by counting
// semaphores: a wait needs G increments, and one fast block of the peer
// group can supply two rounds before the slow one supplies its first, so
// the waiter reads a slice that is still to come. Only some schedules
// expose it.
// RUN: not mscclc --simulate %s --schedules 20 --bytes 1000 2>&1 | FileCheck %s
// The static proof finds it too, at each rank's signal: nothing between one
// iteration's signal and the next waits for both blocks of the group.
// RUN: mscl-opt %s -mscl-check-sync -verify-diagnostics -o /dev/null
// CHECK: error: {{write race|read of data that no signal covered}}
// CHECK: simulation: group_drift, 3 ranks, 20 schedules x 1 sizes: FAIL (size 1000 B = 83 elements of f32, sum, adversarial schedule

mscl.program @group_drift attributes {collective = #mscl.collective<reducescatter>,
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
      mscl.pipeline unit 256 {
        mscl.put @hb_0_1 to <rank 1, s[0]> from <rank 0, input[1]>
        mscl.put @hb_0_2 to <rank 2, s[0]> from <rank 0, input[2]>
        // expected-error @+3 {{signal on @hb_0_1 may be sent by one block of rank 0 thread block 0 (group of 2) before another block of the group sent its previous signal on @hb_0_1}}
        // expected-note @+2 {{the previous signal is this one, in the previous pipeline iteration}}
        // expected-note @+1 {{wait, between the two signals, for a signal that rank 1 sends after its wait on @hb_1_0, or give each block its own channel}}
        mscl.signal [@hb_0_1, @hb_0_2]
        mscl.wait [@hb_0_1, @hb_0_2]
        mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>, <rank 0, s[2]>]
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 group 2 {
      mscl.pipeline unit 256 {
        mscl.put @hb_1_0 to <rank 0, s[1]> from <rank 1, input[0]>
        mscl.put @hb_1_2 to <rank 2, s[1]> from <rank 1, input[2]>
        // expected-error @+3 {{signal on @hb_1_0 may be sent by one block of rank 1 thread block 0 (group of 2) before another block of the group sent its previous signal on @hb_1_0}}
        // expected-note @+2 {{the previous signal is this one, in the previous pipeline iteration}}
        // expected-note @+1 {{wait, between the two signals, for a signal that rank 0 sends after its wait on @hb_0_1, or give each block its own channel}}
        mscl.signal [@hb_1_0, @hb_1_2]
        mscl.wait [@hb_1_0, @hb_1_2]
        mscl.reduce to <rank 1, output[0]> from [<rank 1, input[1]>, <rank 1, s[0]>, <rank 1, s[2]>]
      }
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 group 2 {
      mscl.pipeline unit 256 {
        mscl.put @hb_2_0 to <rank 0, s[2]> from <rank 2, input[0]>
        mscl.put @hb_2_1 to <rank 1, s[2]> from <rank 2, input[1]>
        // expected-error @+3 {{signal on @hb_2_0 may be sent by one block of rank 2 thread block 0 (group of 2) before another block of the group sent its previous signal on @hb_2_0}}
        // expected-note @+2 {{the previous signal is this one, in the previous pipeline iteration}}
        // expected-note @+1 {{wait, between the two signals, for a signal that rank 0 sends after its wait on @hb_0_2, or give each block its own channel}}
        mscl.signal [@hb_2_0, @hb_2_1]
        mscl.wait [@hb_2_0, @hb_2_1]
        mscl.reduce to <rank 2, output[0]> from [<rank 2, input[2]>, <rank 2, s[0]>, <rank 2, s[1]>]
      }
    }
  }
}

