// RUN: mscl-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the mscl dialect's declarations, chunk syntax and
// program structure, one per case (invalid.mlir holds the operation checks).

// channel endpoint beyond the program's ranks
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.channel' op connects ranks outside 0..1}}
  mscl.channel @c memory HB 0 -> 2
}

// -----

// switch group member beyond the program's ranks
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.switch_channel' op group holds ranks outside 0..1}}
  mscl.switch_channel @sw ranks [0, 2]
}

// -----

// an op other than a declaration or rank at program level
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'builtin.module' op is not allowed at program level}}
  builtin.module {}
}

// -----

// program without user buffers
// expected-error @+1 {{'mscl.program' op declares neither @input nor @output}}
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @s scratch[1]
}

// -----

// out-of-place program missing its input buffer
// expected-error @+1 {{'mscl.program' op an out-of-place program declares both @input and @output}}
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @output output[1]
}

// -----

// switch op on a rank outside the switch group
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 4 : i64, gpus_per_node = 4 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 2 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.switch_reduce' op runs on rank 2, outside the group of @sw}}
      mscl.switch_reduce @sw to <rank 2, output[0]> from <rank 2, input[0]>
    }
  }
}

// -----

// non-mscl op inside a thread block
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'builtin.module' op is not an mscl thread-block operation}}
      builtin.module {}
    }
  }
}

// -----

// non-mscl op inside a pipeline
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1024 {
        // expected-error @+1 {{'builtin.module' op is not an mscl thread-block operation}}
        builtin.module {}
      }
    }
  }
}

// -----

// rank region beyond the program's ranks
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.rank' op rank 2 is outside 0..1}}
  mscl.rank 2 {
  }
}

// -----

// non-thread-block op directly in a rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    // expected-error @+1 {{'builtin.module' op must be inside an mscl.threadblock}}
    builtin.module {}
  }
}

// -----

// chunk with an empty buffer name
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{custom op 'mscl.copy' chunk needs a buffer name}}
      mscl.copy to <rank 0, ""[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// chunk on a negative rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{custom op 'mscl.copy' chunk rank must be non-negative, got -1}}
      mscl.copy to <rank -1, output[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// chunk at a negative index
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{custom op 'mscl.copy' chunk index must be non-negative, got -1}}
      mscl.copy to <rank 0, output[-1]> from <rank 0, input[0]>
    }
  }
}

// -----

// chunk range that holds no chunk
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{custom op 'mscl.copy' chunk range must hold at least one chunk}}
      mscl.copy to <rank 0, output[0:0]> from <rank 0, input[0]>
    }
  }
}

// -----

// packet flag on a user buffer
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.buffer' op only scratch buffers hold LL packets}}
  mscl.buffer @input input[1] packet
  mscl.buffer @output output[1]
}

// -----

// scratch buffer taking a user buffer's name
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.buffer' op a scratch buffer may not be named @input}}
  mscl.buffer @input scratch[1]
  mscl.buffer @output output[1]
}

// -----

// memory channel without a protocol
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.channel' op memory channel needs a protocol (LL or HB)}}
  mscl.channel @c memory 0 -> 1
}

// -----

// switch group of one rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.switch_channel' op switch group needs at least two ranks}}
  mscl.switch_channel @sw ranks [0]
}

// -----

// switch group with a negative rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.switch_channel' op negative rank -1 in group}}
  mscl.switch_channel @sw ranks [-1, 0]
}

// -----

// read_reduce whose channel and remote lists differ in length (only the
// generic form, or a pass building the op, can write this)
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.read_reduce' op needs one channel per remote chunk}}
      "mscl.read_reduce"() <{channels = [@hb01, @hb01], dst = #mscl.chunk<rank 0, output[0]>, remotes = [#mscl.chunk<rank 1, input[0]>], srcs = [#mscl.chunk<rank 0, input[0]>]}> : () -> ()
    }
  }
}

// -----

// reduce_put whose channel and destination lists differ in length (only
// the generic form, or a pass building the op, can write this)
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.reduce_put' op needs one channel per destination}}
      "mscl.reduce_put"() <{channels = [], dsts = [#mscl.chunk<rank 1, output[0]>], srcs = [#mscl.chunk<rank 0, input[0]>]}> : () -> ()
    }
  }
}

// -----

// reduce_put without destinations
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.reduce_put' op needs at least one remote destination}}
      mscl.reduce_put [] from [<rank 0, input[0]>]
    }
  }
}
