// RUN: mscl-opt %s -split-input-file -mscl-check-sync -mscl-check-collective -verify-diagnostics -o /dev/null
// Wrong reduce, gather and scatter programs: each error names the rank, the
// output chunk and what is wrong, at the operation that last wrote it.

// A reduce that also leaves a copy in a non-root rank's output (the user
// may pass no receive buffer there).
mscl.program @reduce_writes_nonroot attributes {collective = #mscl.collective<reduce>,
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
      // expected-error @+1 {{reduce postcondition fails: rank 0 output chunk 0 is written, but only the root's output belongs to the reduce (other ranks may pass no receive buffer): keep partial results in scratch}}
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.put_with_signal @c01 to <rank 1, recv[0]> from <rank 0, output[0]>
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

// A reduce whose root forgets its own input.
mscl.program @reduce_misses_root attributes {collective = #mscl.collective<reduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @c10 memory HB 1 -> 0
  mscl.channel @c01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reduce postcondition fails: rank 0 output chunk 0 misses the contribution of rank 0 input chunk 0}}
      mscl.put_with_signal @c10 to <rank 0, output[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// A gather whose root never receives rank 1's block.
// expected-error @+1 {{gather postcondition fails: rank 0 output chunk 1 is never written}}
mscl.program @gather_missing_block attributes {collective = #mscl.collective<gather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
    }
  }
}

// -----

// A scatter that sends the root's block 0 to rank 1 instead of block 1.
mscl.program @scatter_wrong_block attributes {collective = #mscl.collective<scatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      // expected-error @+1 {{scatter postcondition fails: rank 1 output chunk 0 holds the contribution of rank 0 input chunk 0, which does not belong there (and 1 more difference)}}
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
    }
  }
}

// -----

// A scatter whose rank 1 uses its own input, not the root's.
mscl.program @scatter_own_input attributes {collective = #mscl.collective<scatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{scatter postcondition fails: rank 1 output chunk 0 misses the contribution of rank 0 input chunk 1 (and 1 more difference)}}
      mscl.copy to <rank 1, output[0]> from <rank 1, input[1]>
    }
  }
}

// -----

// Buffer shapes that are no gather.
// expected-error @+1 {{cannot state the gather postcondition: input_chunks = 1 and output_chunks = 1 do not fit a gather over 2 ranks}}
mscl.program @gather_shape attributes {collective = #mscl.collective<gather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
}
