// RUN: mscl-opt %s -mscl-fuse-put-signal | FileCheck %s
// RUN: mscl-opt %s -mscl-fuse-put-signal | mscl-opt | FileCheck %s

// CHECK-LABEL: mscl.program @p
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @port01 port 0 -> 1
  mscl.channel @hb01b memory HB 0 -> 1 id 1
  mscl.channel @port01b port 0 -> 1 id 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.put_with_signal @hb01 to <rank 1, s[0]> from <rank 0, input[0]>
    // CHECK-NEXT: mscl.put_with_signal_and_flush @port01 to <rank 1, s[1]> from <rank 0, input[1]>
    // CHECK-NEXT: mscl.put_with_signal_and_flush @port01 to <rank 1, s[2]> from <rank 0, input[2]>
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.signal [@hb01]
      mscl.put @port01 to <rank 1, s[1]> from <rank 0, input[1]>
      mscl.signal [@port01]
      mscl.flush [@port01]
      mscl.put_with_signal @port01 to <rank 1, s[2]> from <rank 0, input[2]>
      mscl.flush [@port01]
    }
    // Not fused: a signal on another channel or on several, a put not
    // directly before its signal, a flush of several channels.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.put @hb01b
    // CHECK-NEXT: mscl.signal [@port01b]
    // CHECK-NEXT: mscl.put @hb01b
    // CHECK-NEXT: mscl.signal [@hb01b, @port01b]
    // CHECK-NEXT: mscl.put @hb01b
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.signal [@hb01b]
    // CHECK-NEXT: mscl.put_with_signal @port01b
    // CHECK-NEXT: mscl.flush [@port01b, @hb01b]
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.put @hb01b to <rank 1, s[3]> from <rank 0, input[3]>
      mscl.signal [@port01b]
      mscl.put @hb01b to <rank 1, s[3]> from <rank 0, input[3]>
      mscl.signal [@hb01b, @port01b]
      mscl.put @hb01b to <rank 1, s[3]> from <rank 0, input[3]>
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.signal [@hb01b]
      mscl.put @port01b to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.signal [@port01b]
      mscl.flush [@port01b, @hb01b]
    }
  }
}
