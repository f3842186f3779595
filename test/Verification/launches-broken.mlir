// RUN: mscl-opt %s -split-input-file -mscl-check-launches -verify-diagnostics -o /dev/null
// Programs race-free in one launch (mscl-check-sync accepts them) that race
// with the caller of a rank between two launches, one per case.

// A peer reads rank 1's input with nothing telling it that rank 1's
// kernel, and so the caller's write of that input before it, has started;
// rank 1 has no channel to rank 0 to signal that on.
mscl.program @peer_reads_input_before_start attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{this access reads <rank 1, input[0]> before rank 1 is known to have started its kernel: its caller may still be writing the input there (on rank 1's stream, ordered before rank 1's own kernel only); declare a channel from rank 1 to rank 0, signal it in every launch (e.g. at the start of the kernel) and wait for that signal on rank 0 before this access}}
      mscl.get @hb01 to <rank 0, output[1]> from <rank 1, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// A peer reads rank 1's input after rank 1 started, but nothing orders the
// read before rank 1's kernel ends and its caller writes the next input.
mscl.program @peer_reads_input_after_end attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.wait [@hb01]
      // expected-error @+1 {{this access reads <rank 1, input[0]> while the caller of rank 1 may already be writing the next input: nothing orders the access before the end of rank 1's kernel; signal @hb01 on rank 0 after the access and wait on @hb10 on rank 1 before its kernel ends}}
      mscl.get @hb01 to <rank 0, output[1]> from <rank 1, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.signal [@hb10]
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
    }
  }
}
