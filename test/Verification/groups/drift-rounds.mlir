// RUN: mscl-opt %s -mscl-check-sync -verify-diagnostics -o /dev/null
// RUN: not mscclc --simulate %s --schedules 40 --bytes 1000 2>&1 | FileCheck %s
// Group drift outside pipelines: rank 0's group of two sends two rounds on
// one channel with nothing in between that waits for both of its blocks.
// One fast block supplies both increments of rank 1's first wait, which
// then reads the slow block's slice of s[0] before its put landed.
// CHECK: error: {{write race|read of data that no signal covered|race}}
// CHECK: simulation: drift_rounds, 2 ranks, 40 schedules x 1 sizes: FAIL

mscl.program @drift_rounds attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.copy to <rank 0, output[0:2]> from <rank 0, input[0:2]>
      mscl.put @c01 to <rank 1, s[0]> from <rank 0, input[0]>
      // expected-note @+1 {{the previous signal on @c01}}
      mscl.signal [@c01]
      mscl.put @c01 to <rank 1, s[1]> from <rank 0, input[1]>
      // expected-error @+2 {{signal on @c01 may be sent by one block of rank 0 thread block 0 (group of 2) before another block of the group sent its previous signal on @c01: nothing in between waits for every block of the group, so rank 1's wait on @c10 may count one block's signals twice and go on before the other blocks' data is visible}}
      // expected-note @+1 {{wait, between the two signals, for a signal that rank 1 sends after its wait on @c10, or give each block its own channel}}
      mscl.signal [@c01]
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[2:4]> from <rank 1, input[0:2]>
      mscl.wait [@c10]
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
      mscl.wait [@c10]
      mscl.copy to <rank 1, output[1]> from <rank 1, s[1]>
      mscl.signal [@c10]
    }
  }
}
