// RUN: mscl-opt %s -split-input-file -mscl-check-sync -mscl-check-collective -verify-diagnostics -o /dev/null
// reduce, gather and scatter, proved: only the root's output is required of
// reduce and gather, and the other ranks' outputs stay unwritten.

// Reduce to root 1: rank 0 sends its input into the root's scratch.
mscl.program @reduce_root1 attributes {collective = #mscl.collective<reduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64,
    root = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, recv[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, recv[0]>]
    }
  }
}

// -----

// In-place gather to root 0: input@r[0] is output@r[r]; rank 1's buffer
// keeps only its input.
mscl.program @gather_inplace attributes {collective = #mscl.collective<gather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64,
    inplace} {
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, output[1]>
    }
  }
}

// -----

// In-place scatter from root 0: output@r[0] is input@r[r]; the root's own
// block is already in place.
mscl.program @scatter_inplace attributes {collective = #mscl.collective<scatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64,
    inplace} {
  mscl.buffer @input input[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, input[1]> from <rank 0, input[1]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
    }
  }
}
