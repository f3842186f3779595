// RUN: mscl-opt %s -mscl-batch-signals | FileCheck %s
// RUN: mscl-opt %s -mscl-batch-signals | mscl-opt | FileCheck %s

// CHECK-LABEL: mscl.program @p
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @a memory HB 0 -> 1
  mscl.channel @b memory HB 0 -> 2
  mscl.channel @c port 0 -> 1
  mscl.channel @d port 0 -> 2
  mscl.channel @a2 memory HB 0 -> 1 id 1
  mscl.channel @b2 memory HB 0 -> 2 id 1
  mscl.rank 0 {
    // put_with_signal and put + signal pairs on HB channels: the puts, then
    // one signal. A channel seen twice starts a new run.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.put @a to <rank 1, s[0]>
    // CHECK-NEXT: mscl.put @b to <rank 2, s[0]>
    // CHECK-NEXT: mscl.signal [@a, @b]
    // CHECK-NEXT: mscl.put_with_signal @a to <rank 1, s[1]>
    // CHECK-NEXT: mscl.wait [@a]
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.put_with_signal @a to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.put @b to <rank 2, s[0]> from <rank 0, input[1]>
      mscl.signal [@b]
      mscl.put_with_signal @a to <rank 1, s[1]> from <rank 0, input[2]>
      mscl.wait [@a]
    }
    // Port channels keep one FIFO entry per put_with_signal; a lone HB
    // put_with_signal and a put whose signal is not next stay as they are.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.put_with_signal @c
    // CHECK-NEXT: mscl.put_with_signal @d
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.put_with_signal @a2
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.put @b2
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.signal [@b2]
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.put_with_signal @c to <rank 1, s[2]> from <rank 0, input[0]>
      mscl.put_with_signal @d to <rank 2, s[2]> from <rank 0, input[0]>
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.put_with_signal @a2 to <rank 1, s[3]> from <rank 0, input[1]>
      mscl.copy to <rank 0, output[1]> from <rank 0, input[1]>
      mscl.put @b2 to <rank 2, s[3]> from <rank 0, input[2]>
      mscl.copy to <rank 0, output[2]> from <rank 0, input[2]>
      mscl.signal [@b2]
    }
  }
}
