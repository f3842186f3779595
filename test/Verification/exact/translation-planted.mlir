// Class: a pass changing the summation order, caught by translation
// validation. mscl-test-reorder-sources is a wrong pass on purpose: it
// swaps two sources of rank 2's reduction (same contributions, another
// order). With --mscl-validate-translation (tests validate after every
// pass) the run fails naming the pass, the rank, the chunk and both
// expressions; without the planted pass it passes.
//
// RUN: not mscl-opt %s -mscl-test-reorder-sources -mscl-validate-translation -o /dev/null 2>&1 | FileCheck %s
// RUN: mscl-opt %s -mscl-merge-reduce -mscl-insert-barriers -mscl-validate-translation -o /dev/null
// CHECK: translation-planted.mlir:{{[0-9]+}}:{{[0-9]+}}: error: internal error: translation validation fails after mscl-test-reorder-sources on @allreduce_1pa: rank 2 output chunk 0 is computed as ((in@0[0] + in@2[0]) + in@1[0]), but before the passes as ((in@0[0] + in@1[0]) + in@2[0])

mscl.program @allreduce_1pa attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[3] packet
  mscl.channel @c01 memory LL 0 -> 1
  mscl.channel @c02 memory LL 0 -> 2
  mscl.channel @c10 memory LL 1 -> 0
  mscl.channel @c12 memory LL 1 -> 2
  mscl.channel @c20 memory LL 2 -> 0
  mscl.channel @c21 memory LL 2 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @c01 to <rank 1, recv[0]> from <rank 0, input[0]>
      mscl.put @c02 to <rank 2, recv[0]> from <rank 0, input[0]>
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, recv[1]>, <rank 0, recv[2]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @c10 to <rank 0, recv[1]> from <rank 1, input[0]>
      mscl.put @c12 to <rank 2, recv[1]> from <rank 1, input[0]>
      mscl.reduce to <rank 1, output[0]> from [<rank 1, recv[0]>, <rank 1, input[0]>, <rank 1, recv[2]>]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.put @c20 to <rank 0, recv[2]> from <rank 2, input[0]>
      mscl.put @c21 to <rank 1, recv[2]> from <rank 2, input[0]>
      mscl.reduce to <rank 2, output[0]> from [<rank 2, recv[0]>, <rank 2, recv[1]>, <rank 2, input[0]>]
    }
  }
}
