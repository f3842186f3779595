// RUN: mscl-opt %s -split-input-file -mscl-check-sync -verify-diagnostics -o /dev/null
// The corpus of broken programs for mscl-check-sync: each case is rejected
// with its own message at the operation at fault, notes at the other side.

// Missing wait: rank 1 never waits for rank 0's signal.
mscl.program @missing_wait attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{signal on @c01 has no matching wait: rank 1 never waits on @c10, its other end}}
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// Missing signal: rank 1 waits twice, rank 0 signals once.
mscl.program @missing_signal attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@c10]
      // expected-error @+1 {{wait on @c10 has no matching signal: rank 1 waits on @c10 2 times but rank 0 signals @c01 only 1 time}}
      mscl.wait [@c10]
    }
  }
}

// -----

// A wait whose other end is not declared at all.
mscl.program @no_other_end attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{wait on @c10 has no matching signal: no channel from rank 0 to rank 1 of the same kind, protocol and id is declared}}
      mscl.wait [@c10]
    }
  }
}

// -----

// Wrong peer: rank 0 signals rank 1, but rank 2 is the one waiting for it.
mscl.program @wrong_peer attributes {collective = #mscl.collective<allgather>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 3 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[3]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.channel @c02 memory HB 0 -> 2
  mscl.channel @c20 memory HB 2 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @c02 to <rank 2, output[0]> from <rank 0, input[0]>
      // expected-error @+2 {{signal on @c01 has no matching wait: rank 1 never waits on @c10, its other end}}
      // expected-note @+1 {{rank 0 signals rank 1 here instead; was the signal sent to the wrong peer?}}
      mscl.signal [@c01]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      // expected-error @+2 {{wait on @c20 has no matching signal: rank 0 never signals @c02, its other end}}
      // expected-note @+1 {{rank 2 waits for a signal from rank 0 here; was the signal sent to the wrong peer?}}
      mscl.wait [@c20]
      mscl.copy to <rank 2, output[2]> from <rank 2, output[0]>
    }
  }
}

// -----

// Signals in a pipeline (once per iteration) against a single wait.
mscl.program @pipeline_mismatch attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 4096 {
        // expected-error @+1 {{signals on @c01 do not pair up with the waits on @c10 in every pipeline iteration: signals 1 per iteration of a pipeline (unit 4096); waits 1 outside pipelines}}
        mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the first wait that would consume it}}
      mscl.wait [@c10]
    }
  }
}

// -----

// Deadlock: both ranks wait before they signal.
mscl.program @deadlock_pair attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{deadlock: rank 0 thread block 0 waits here forever, waiting on @c01 for a signal from rank 1 (rank 1 thread block 0, on @c10); 2 thread blocks wait for each other}}
      mscl.wait [@c01]
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{rank 1 thread block 0 is blocked here, waiting on @c10 for a signal from rank 0 (rank 0 thread block 0, on @c01)}}
      mscl.wait [@c10]
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, input[0]>
    }
  }
}

// -----

// Deadlock: a cycle through three ranks (each waits for its predecessor
// before signalling its successor); a second block of rank 0 waits behind it.
mscl.program @deadlock_ring attributes {collective = #mscl.collective<custom>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.channel @c12 memory HB 1 -> 2
  mscl.channel @c21 memory HB 2 -> 1
  mscl.channel @c20 memory HB 2 -> 0
  mscl.channel @c02 memory HB 0 -> 2
  mscl.channel @d01 memory HB 0 -> 1 id 1
  mscl.channel @d10 memory HB 1 -> 0 id 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{deadlock: rank 0 thread block 0 waits here forever, waiting on @c02 for a signal from rank 2 (rank 2 thread block 0, on @c20); 3 thread blocks wait for each other (1 more thread block is blocked behind them)}}
      mscl.wait [@c02]
      mscl.signal [@c01]
    }
    mscl.threadblock 1 {
      mscl.wait [@d01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{rank 1 thread block 0 is blocked here, waiting on @c10 for a signal from rank 0 (rank 0 thread block 0, on @c01)}}
      mscl.wait [@c10]
      mscl.signal [@c12, @d10]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      // expected-note @+1 {{rank 2 thread block 0 is blocked here, waiting on @c21 for a signal from rank 1 (rank 1 thread block 0, on @c12)}}
      mscl.wait [@c21]
      mscl.signal [@c20]
    }
  }
}

// -----

// A signal inside a pipeline whose other end no rank waits on.
mscl.program @pipeline_signal_unwaited attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1024 {
        // expected-error @+1 {{signal on @hb01 has no matching wait: rank 1 never waits on @hb10, its other end, in each iteration of this signal's pipeline}}
        mscl.signal [@hb01]
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1024 {
        mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
      }
    }
  }
}

// -----

// A wait inside a pipeline whose other end no rank signals.
mscl.program @pipeline_wait_unsignalled attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1024 {
        // expected-error @+1 {{wait on @hb10 has no matching signal: rank 0 never signals @hb01, its other end, in each iteration of this wait's pipeline}}
        mscl.wait [@hb10]
      }
    }
  }
}
