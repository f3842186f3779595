// RUN: mscclc %s --emit=cuda --verify-diagnostics -o %t
// RUN: not test -s %t
// Constructs the CUDA backend refuses are reported at the op, and nothing
// is emitted.

mscl.program @reduce_put_port attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @p01 port 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reduce_put needs memory channels; @p01 is a port channel}}
      mscl.reduce_put [@p01 <rank 1, output[0]>] from [<rank 0, input[0]>]
    }
  }
}
