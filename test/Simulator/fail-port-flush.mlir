// The source of a port put is overwritten before a flush on its channel.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 64 2>&1 | FileCheck %s
// CHECK: fail-port-flush.mlir:[[@LINE+16]]:7: error: port put source overwritten before flush: rank 0 tb 0 writes rank 0 s[0] (elements 0..15), the source of a put on @port_0_1 that no flush has completed
// CHECK: fail-port-flush.mlir:[[@LINE+13]]:7: note: the put is mscl.put of rank 0 tb 0
mscl.program @port_flush attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @port_0_1 port 0 -> 1
  mscl.channel @port_1_0 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.barrier
      mscl.put @port_0_1 to <rank 1, output[0]> from <rank 0, s[0]>
      mscl.barrier
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.signal [@port_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@port_1_0]
    }
  }
}
