// RUN: mscl-opt %s -split-input-file -mscl-check-collective -verify-diagnostics -o /dev/null
// The corpus of programs that run but compute the wrong thing: each is
// rejected at the operation that last wrote the wrong output chunk.

// A missing contribution: rank 2 forgets rank 1's packet in its sum.
mscl.program @missing_contribution attributes {collective = #mscl.collective<allreduce>,
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
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, recv[0]>, <rank 1, recv[2]>]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.put @c20 to <rank 0, recv[2]> from <rank 2, input[0]>
      mscl.put @c21 to <rank 1, recv[2]> from <rank 2, input[0]>
      // expected-error @+1 {{allreduce postcondition fails: rank 2 output chunk 0 misses the contribution of rank 1 input chunk 0}}
      mscl.reduce to <rank 2, output[0]> from [<rank 2, input[0]>, <rank 2, recv[0]>]
    }
  }
}

// -----

// A double-counted contribution: rank 0 adds its own input twice (once
// directly, once through the copy it made), and rank 1's output misses
// rank 0 because of it too.
mscl.program @double_counted attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.put_with_signal @c01 to <rank 1, s[0]> from <rank 0, input[0]>
      // expected-error @+1 {{allreduce postcondition fails: rank 0 output chunk 0 counts rank 0's contribution (input chunk 0) twice (and 1 more difference)}}
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, s[0]>]
    }
  }
}

// -----

// An output chunk nobody writes.
// expected-error @+1 {{allgather postcondition fails: rank 1 output chunk 0 is never written}}
mscl.program @never_written attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, input[0]>
    }
  }
}

// -----

// The wrong chunk: rank 0 puts its input where rank 1's own belongs and
// never fills its own slot; rank 0 then overwrites a slot with a scratch
// chunk nobody wrote.
// expected-error @+1 {{allgather postcondition fails: rank 0 output chunk 0 is never written}}
mscl.program @wrong_chunk attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{allgather postcondition fails: rank 1 output chunk 1 holds the contribution of rank 0 input chunk 0, which does not belong there (and 1 more difference)}}
      mscl.put_with_signal @c01 to <rank 1, output[1]> from <rank 0, input[0]>
      mscl.wait [@c01]
      // expected-error @+1 {{allgather postcondition fails: rank 0 output chunk 1 holds uninitialised data (a chunk read before anything wrote it)}}
      mscl.copy to <rank 0, output[1]> from <rank 0, s[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{allgather postcondition fails: rank 1 output chunk 0 misses the contribution of rank 0 input chunk 0 (and 1 more difference)}}
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
      mscl.wait [@c10]
      mscl.signal [@c10]
    }
  }
}

// -----

// In-place reduce-scatter that reduces into the wrong slot of the shared
// buffer: output@1[0] is input@1[1], but rank 1 reduces into input[0].
// Nothing writes the right slot, so the error is at the program.
// expected-error @+1 {{reducescatter postcondition fails: rank 1 output chunk 0 misses the contribution of rank 0 input chunk 1}}
mscl.program @inplace_wrong_slot attributes {collective = #mscl.collective<reducescatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64,
    inplace} {
  mscl.buffer @input input[2]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, s[0]> from <rank 0, input[1]>
      mscl.wait [@c01]
      mscl.reduce to <rank 0, input[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c10 to <rank 0, s[0]> from <rank 1, input[0]>
      mscl.wait [@c10]
      mscl.reduce to <rank 1, input[0]> from [<rank 1, input[0]>, <rank 1, s[0]>]
    }
  }
}

// -----

// A broadcast that sends the wrong rank's data.
mscl.program @broadcast_wrong_root attributes {collective = #mscl.collective<broadcast>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64,
    root = 0 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @m01 memory HB 0 -> 1
  mscl.channel @m10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{broadcast postcondition fails: rank 0 output chunk 0 misses the contribution of rank 0 input chunk 0 (and 1 more difference)}}
      mscl.get @m01 to <rank 0, output[0]> from <rank 1, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{broadcast postcondition fails: rank 1 output chunk 0 misses the contribution of rank 0 input chunk 0 (and 1 more difference)}}
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// A program that deadlocks cannot be proved correct.
// expected-error @+1 {{cannot prove the allgather postcondition: the program does not run to completion (mscl-check-sync reports why)}}
mscl.program @deadlocks attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@c01]
      mscl.signal [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
      mscl.signal [@c10]
    }
  }
}

// -----

// An in-place allgather whose one user buffer holds only the input view:
// the gathered output does not fit.
// expected-error @+1 {{in-place allgather: the user buffer has 1 chunks, expected 2}}
mscl.program @inplace_short_buffer attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64,
    inplace} {
  mscl.buffer @input input[1]
}

// -----

// Nothing is written: the first ten wrong output chunks are reported
// (grouped into one error), the other two only counted.
// expected-error @+3 {{allreduce postcondition fails: rank 0 output chunk 0 is never written}}
// expected-note @+2 {{reported once: the same error occurs here 9 more time(s) (for ranks 0, 1)}}
// expected-error @+1 {{2 more output chunks are wrong}}
mscl.program @nothing_written attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 6 : i64, input_chunks = 6 : i64, output_chunks = 6 : i64} {
  mscl.buffer @input input[6]
  mscl.buffer @output output[6]
}
