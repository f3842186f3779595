// RUN: mscl-opt %s -mlir-disable-threading -mscl-replicate=instances=2 -mscl-fuse-reduce-put | FileCheck %s
// RUN: mscl-opt %s -mscl-optimize=instances=2 | FileCheck %s

// Two programs in one module, run by the same pass instances one after the
// other: nothing of the first leaks into the second. In @second, @t[0] is
// read by a copy, so its reduce_put keeps the store (in @first nothing
// reads it); the channel @c of @second is its own.
// CHECK-LABEL: mscl.program @first
// CHECK: mscl.reduce to <rank 0, t[0]>
// CHECK-LABEL: mscl.program @second
// CHECK: mscl.channel @c memory HB 0 -> 1 id 2
// CHECK: mscl.reduce_put [@c <rank 1, s[0]>] from [<rank 0, input[0]>, <rank 0, input[2]>] store <rank 0, t[0]>
mscl.program @first attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[1]
  mscl.buffer @t scratch[1]
  mscl.channel @c memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, t[0]> from [<rank 0, input[0]>, <rank 0, input[1]>]
      mscl.signal [@c]
    }
  }
}
mscl.program @second attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[1]
  mscl.buffer @t scratch[1]
  mscl.channel @c memory HB 0 -> 1 id 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, t[0]> from [<rank 0, input[0]>, <rank 0, input[1]>]
      mscl.put @c to <rank 1, s[0]> from <rank 0, t[0]>
      mscl.copy to <rank 0, output[0]> from <rank 0, t[0]>
    }
  }
}
