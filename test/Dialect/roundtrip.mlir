// RUN: mscl-opt %s | FileCheck %s
// RUN: mscl-opt %s | mscl-opt | FileCheck %s
// RUN: mscl-opt %s -mlir-print-op-generic | mscl-opt | FileCheck %s

// CHECK-LABEL: mscl.program @every_op
// CHECK-SAME: collective = #mscl.collective<allreduce>
// CHECK: mscl.buffer @input input[2]
// CHECK: mscl.buffer @output output[2]
// CHECK: mscl.buffer @recv scratch[4] packet
// CHECK: mscl.buffer @tmp scratch[2]{{$}}
// CHECK: mscl.channel @ll01 memory LL 0 -> 1
// CHECK: mscl.channel @hb01 memory HB 0 -> 1 id 3
// CHECK: mscl.channel @hb10 memory HB 1 -> 0{{$}}
// CHECK: mscl.channel @port01 port 0 -> 1
// CHECK: mscl.switch_channel @sw ranks [0, 1]
// CHECK: mscl.threadblock 0 group 2 {
// CHECK-NEXT: mscl.put @ll01 to <rank 1, recv[0:2]> from <rank 0, input[0:2]>
// CHECK-NEXT: mscl.put_with_signal @hb01 to <rank 1, tmp[0]> from <rank 0, input[0]>
// CHECK-NEXT: mscl.put_with_signal_and_flush @port01 to <rank 1, tmp[1]> from <rank 0, input[1]>
// CHECK-NEXT: mscl.get @hb01 to <rank 0, tmp[0]> from <rank 1, input[0]>
// CHECK-NEXT: mscl.signal [@hb01, @port01]
// CHECK-NEXT: mscl.wait [@hb01]
// CHECK-NEXT: mscl.flush [@port01]
// CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, recv[3]>
// CHECK-NEXT: mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, recv[1]>]
// CHECK-NEXT: mscl.read_reduce to <rank 0, output[1]> from [<rank 0, output[1]>] remote [@hb01 <rank 1, input[1]>]
// CHECK-NEXT: mscl.reduce_put [@ll01 <rank 1, recv[2]>] from [<rank 0, input[1]>, <rank 0, tmp[1]>] store <rank 0, output[1]>
// CHECK-NEXT: mscl.switch_reduce @sw to <rank 0, output[0]> from <rank 0, input[0]>
// CHECK-NEXT: mscl.switch_broadcast @sw to <rank 0, output[0]> from <rank 0, output[0]>
// CHECK-NEXT: mscl.barrier
// CHECK-NEXT: mscl.pipeline unit 1024 {
// CHECK-NEXT: mscl.wait [@hb01]
// CHECK-NEXT: }
// CHECK: mscl.threadblock 2 {
mscl.program @every_op attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @recv scratch[4] packet
  mscl.buffer @tmp scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1 id 3
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.put @ll01 to <rank 1, recv[0:2]> from <rank 0, input[0:2]>
      mscl.put_with_signal @hb01 to <rank 1, tmp[0]> from <rank 0, input[0]>
      mscl.put_with_signal_and_flush @port01 to <rank 1, tmp[1]> from <rank 0, input[1]>
      mscl.get @hb01 to <rank 0, tmp[0]> from <rank 1, input[0]>
      mscl.signal [@hb01, @port01]
      mscl.wait [@hb01]
      mscl.flush [@port01]
      mscl.copy to <rank 0, output[1]> from <rank 0, recv[3]>
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, recv[1]>]
      mscl.read_reduce to <rank 0, output[1]> from [<rank 0, output[1]>] remote [@hb01 <rank 1, input[1]>]
      mscl.reduce_put [@ll01 <rank 1, recv[2]>] from [<rank 0, input[1]>, <rank 0, tmp[1]>] store <rank 0, output[1]>
      mscl.switch_reduce @sw to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.switch_broadcast @sw to <rank 0, output[0]> from <rank 0, output[0]>
      mscl.barrier
      mscl.pipeline unit 1024 {
        mscl.wait [@hb01]
      }
    }
    mscl.threadblock 2 {
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.signal [@hb10]
    }
  }
}


// In-place programs declare only the shared buffer.
// CHECK-LABEL: mscl.program @inplace
// CHECK-SAME: inplace
// CHECK-NOT: mscl.buffer @input
mscl.program @inplace attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 1 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64,
    inplace} {
  mscl.buffer @output output[2]
}
