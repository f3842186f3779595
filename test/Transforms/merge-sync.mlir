// RUN: mscl-opt %s -mscl-merge-sync | FileCheck %s
// RUN: mscl-opt %s -mscl-merge-sync | mscl-opt | FileCheck %s

// CHECK-LABEL: mscl.program @p
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[3]
  mscl.channel @a memory HB 0 -> 1
  mscl.channel @b memory HB 0 -> 2
  mscl.channel @c port 0 -> 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.signal [@a, @b, @c]
    // CHECK-NEXT: mscl.wait [@a, @b]
    // CHECK-NEXT: mscl.flush [@c, @a]
    // CHECK-NEXT: mscl.signal [@a]
    // CHECK-NEXT: mscl.signal [@a, @b]
    // CHECK-NEXT: mscl.put
    // CHECK-NEXT: mscl.wait [@b]
    // CHECK-NEXT: mscl.pipeline
    // CHECK-NEXT: mscl.wait [@a, @b]
    // CHECK-NEXT: }
    // CHECK-NEXT: mscl.wait [@c]
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.signal [@a]
      mscl.signal [@b, @c]
      mscl.wait [@a]
      mscl.wait [@b]
      mscl.flush [@c]
      mscl.flush [@a]
      // The same channel twice is two signals: kept apart.
      mscl.signal [@a]
      mscl.signal [@a]
      mscl.signal [@b]
      // Not adjacent: kept apart.
      mscl.put @a to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.wait [@b]
      mscl.pipeline unit 1024 {
        mscl.wait [@a]
        mscl.wait [@b]
      }
      mscl.wait [@c]
    }
  }
}
