// RUN: mscl-opt %s -split-input-file -mscl-merge-reduce | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-merge-reduce | mscl-opt -split-input-file | FileCheck %s

// CHECK-LABEL: mscl.program @merge
mscl.program @merge attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @a memory HB 0 -> 1
  mscl.channel @b memory HB 0 -> 2
  mscl.channel @a2 memory HB 0 -> 1 id 1
  mscl.channel @b2 memory HB 0 -> 2 id 1
  mscl.rank 0 {
    // Three reduces into one destination, an independent op in between.
    // The third adds the partial sum to s[2], (s2 + ((in0 + s0) + s1)),
    // which no list of sources reduced left to right computes: it stays.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[3]>
    // CHECK-NEXT: mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>, <rank 0, s[1]>]
    // CHECK-NEXT: mscl.reduce to <rank 0, output[0]> from [<rank 0, s[2]>, <rank 0, output[0]>]
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
      mscl.copy to <rank 0, output[3]> from <rank 0, input[3]>
      mscl.reduce to <rank 0, output[0]> from [<rank 0, output[0]>, <rank 0, s[1]>]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, s[2]>, <rank 0, output[0]>]
    }
    // read_reduces from two peers; a copy that starts the accumulation.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.read_reduce to <rank 0, output[1]> from [<rank 0, input[1]>] remote [@a <rank 1, input[1]>, @b <rank 2, input[1]>]
    // CHECK-NEXT: mscl.reduce to <rank 0, output[2]> from [<rank 0, input[2]>, <rank 0, s[3]>]
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.read_reduce to <rank 0, output[1]> from [<rank 0, input[1]>] remote [@a <rank 1, input[1]>]
      mscl.read_reduce to <rank 0, output[1]> from [<rank 0, output[1]>] remote [@b <rank 2, input[1]>]
      mscl.copy to <rank 0, output[2]> from <rank 0, input[2]>
      mscl.reduce to <rank 0, output[2]> from [<rank 0, output[2]>, <rank 0, s[3]>]
    }
    // A reduce and a read_reduce: one read_reduce.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.read_reduce to <rank 0, input[3]> from [<rank 0, s[0]>, <rank 0, s[1]>] remote [@a2 <rank 1, s[3]>]
    // CHECK-NEXT: }
    mscl.threadblock 2 {
      mscl.reduce to <rank 0, input[3]> from [<rank 0, s[0]>, <rank 0, s[1]>]
      mscl.read_reduce to <rank 0, input[3]> from [<rank 0, input[3]>] remote [@a2 <rank 1, s[3]>]
    }
  }
}

// -----

// CHECK-LABEL: mscl.program @keep
mscl.program @keep attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @a memory HB 0 -> 1
  mscl.channel @b memory HB 0 -> 1 id 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // The second overwrites instead of accumulating.
    // CHECK-NEXT: mscl.reduce to <rank 0, output[0]>
    // CHECK-NEXT: mscl.reduce to <rank 0, output[0]>
    // An op in between reads the partial result.
    // CHECK-NEXT: mscl.reduce to <rank 0, output[1]>
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.reduce to <rank 0, output[1]>
    // A signal in between (a peer may read the partial result).
    // CHECK-NEXT: mscl.reduce to <rank 0, output[2]>
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: mscl.reduce to <rank 0, output[2]>
    // Sources overlapping the destination other than as the accumulator.
    // CHECK-NEXT: mscl.reduce to <rank 0, s[0:2]>
    // CHECK-NEXT: mscl.reduce to <rank 0, s[0:2]> from [<rank 0, s[0:2]>, <rank 0, s[1:3]>]
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>]
      mscl.reduce to <rank 0, output[1]> from [<rank 0, input[1]>, <rank 0, s[1]>]
      mscl.copy to <rank 0, s[3]> from <rank 0, output[1]>
      mscl.reduce to <rank 0, output[1]> from [<rank 0, output[1]>, <rank 0, s[2]>]
      mscl.reduce to <rank 0, output[2]> from [<rank 0, input[2]>, <rank 0, s[2]>]
      mscl.signal [@a]
      mscl.reduce to <rank 0, output[2]> from [<rank 0, output[2]>, <rank 0, s[0]>]
      mscl.reduce to <rank 0, s[0:2]> from [<rank 0, input[0:2]>, <rank 0, input[2:4]>]
      mscl.reduce to <rank 0, s[0:2]> from [<rank 0, s[0:2]>, <rank 0, s[1:3]>]
    }
    // Both read over one channel.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.read_reduce
    // CHECK-NEXT: mscl.read_reduce
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.read_reduce to <rank 0, input[0]> from [<rank 0, s[0]>] remote [@b <rank 1, input[0]>]
      mscl.read_reduce to <rank 0, input[0]> from [<rank 0, input[0]>] remote [@b <rank 1, input[1]>]
    }
  }
}

// -----

// Merges keep the order of summation: read_reduce reduces its local
// sources first, so "read_reduce, then add a local source" (x0 + x1) + x2
// is not one read_reduce (that would be (x0 + x2) + x1); a copy's one
// source takes the accumulator's place wherever it stands.
// CHECK-LABEL: mscl.program @order
mscl.program @order attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 3 : i64, input_chunks = 3 : i64, output_chunks = 3 : i64} {
  mscl.buffer @input input[3]
  mscl.buffer @output output[3]
  mscl.channel @a memory HB 2 -> 0
  mscl.channel @b memory HB 2 -> 1
  mscl.channel @c memory HB 2 -> 0 id 1
  mscl.rank 2 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.read_reduce to <rank 2, output[0]> from [] remote [@a <rank 0, input[0]>, @b <rank 1, input[0]>]
    // CHECK-NEXT: mscl.reduce to <rank 2, output[0]> from [<rank 2, output[0]>, <rank 2, input[0]>]
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.read_reduce to <rank 2, output[0]> from [] remote [@a <rank 0, input[0]>, @b <rank 1, input[0]>]
      mscl.reduce to <rank 2, output[0]> from [<rank 2, output[0]>, <rank 2, input[0]>]
    }
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.reduce to <rank 2, output[1]> from [<rank 2, input[2]>, <rank 2, input[1]>]
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.copy to <rank 2, output[1]> from <rank 2, input[1]>
      mscl.reduce to <rank 2, output[1]> from [<rank 2, input[2]>, <rank 2, output[1]>]
    }
    // A local accumulator first, then remote sources: one read_reduce.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.read_reduce to <rank 2, output[2]> from [<rank 2, input[2]>] remote [@c <rank 0, input[2]>]
    // CHECK-NEXT: }
    mscl.threadblock 2 {
      mscl.copy to <rank 2, output[2]> from <rank 2, input[2]>
      mscl.read_reduce to <rank 2, output[2]> from [<rank 2, output[2]>] remote [@c <rank 0, input[2]>]
    }
  }
}
