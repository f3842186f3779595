// RUN: mscclc %s --emit=cuda --verify-diagnostics -o %t
// RUN: not test -s %t
// Constructs the CUDA backend refuses are reported at the op, and nothing
// is emitted.

mscl.program @get_ll attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reads peer memory through @ll01, which needs an HB memory channel}}
      mscl.get @ll01 to <rank 0, output[0]> from <rank 1, input[0]>
    }
  }
}
