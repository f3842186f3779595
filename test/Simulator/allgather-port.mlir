// RUN: mscclc --simulate --single-launch %s --schedules 30 | FileCheck %s
// CHECK: simulation: allgather_port, 3 ranks, 30 schedules x {{[0-9]+}} sizes: PASS
// One launch only (--single-launch): rank 2's caller may read its output before
// the last put's data landed there, nothing in the next launch waits for it.

mscl.program @allgather_port attributes {collective = #mscl.collective<allgather>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 3 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[3]
  mscl.channel @port_0_1 port 0 -> 1
  mscl.channel @port_0_2 port 0 -> 2
  mscl.channel @port_1_0 port 1 -> 0
  mscl.channel @port_1_2 port 1 -> 2
  mscl.channel @port_2_0 port 2 -> 0
  mscl.channel @port_2_1 port 2 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal_and_flush @port_0_1 to <rank 1, output[0]> from <rank 0, input[0]>
      mscl.put_with_signal_and_flush @port_0_2 to <rank 2, output[0]> from <rank 0, input[0]>
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.wait [@port_0_1, @port_0_2]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal_and_flush @port_1_0 to <rank 0, output[1]> from <rank 1, input[0]>
      mscl.put_with_signal_and_flush @port_1_2 to <rank 2, output[1]> from <rank 1, input[0]>
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
      mscl.wait [@port_1_0, @port_1_2]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.put_with_signal_and_flush @port_2_0 to <rank 0, output[2]> from <rank 2, input[0]>
      mscl.put_with_signal_and_flush @port_2_1 to <rank 1, output[2]> from <rank 2, input[0]>
      mscl.copy to <rank 2, output[2]> from <rank 2, input[0]>
      mscl.wait [@port_2_0, @port_2_1]
    }
  }
}

