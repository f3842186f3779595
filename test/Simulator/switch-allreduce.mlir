// SwitchChannel all-reduce: each rank reduces its chunk through the switch
// and broadcasts it back; HB signals order the phases.
// RUN: mscclc --simulate --single-launch %s --schedules 20 | FileCheck %s
// CHECK: simulation: switch_allreduce, 2 ranks, 20 schedules x {{[0-9]+}} sizes: PASS
// One launch only (--single-launch): the switch reads peers' inputs with no
// handshake, while their callers may still write them.
mscl.program @switch_allreduce attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.switch_reduce @sw to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.barrier
      mscl.switch_broadcast @sw to <rank 0, output[0]> from <rank 0, output[0]>
      mscl.signal [@hb_0_1]
      mscl.wait [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.switch_reduce @sw to <rank 1, output[1]> from <rank 1, input[1]>
      mscl.barrier
      mscl.switch_broadcast @sw to <rank 1, output[1]> from <rank 1, output[1]>
      mscl.signal [@hb_1_0]
      mscl.wait [@hb_1_0]
    }
  }
}
