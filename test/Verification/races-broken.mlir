// RUN: mscl-opt %s -split-input-file -mscl-check-sync -verify-diagnostics -o /dev/null
// The corpus of racy programs for mscl-check-sync: reads before the
// covering wait, unordered writes, unordered write/read pairs, reuse of a
// port put's source before its flush, LL reads without their LL put.

// Read before wait: rank 1 copies the chunk before waiting for it.
mscl.program @read_before_wait attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{written by this put on @c01 (rank 0 thread block 0)}}
      mscl.put_with_signal @c01 to <rank 1, s[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reads <rank 1, s[0]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
      // expected-note @+1 {{the data is visible only after this wait, which does not happen before the read}}
      mscl.wait [@c10]
    }
  }
}

// -----

// The wait is in another thread block of the reading rank: blocks of one
// rank are unordered, so the read is not covered.
mscl.program @wait_in_other_block attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 port 0 -> 1
  mscl.channel @c10 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{written by this put on @c01 (rank 0 thread block 0)}}
      mscl.put_with_signal_and_flush @c01 to <rank 1, s[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the data is visible only after this wait, which does not happen before the read}}
      mscl.wait [@c10]
    }
    mscl.threadblock 1 {
      // expected-error @+1 {{reads <rank 1, s[0]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
    }
  }
}

// -----

// A put that no signal on its own channel publishes: the signal on another
// channel does not cover it.
mscl.program @put_without_signal attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @d01 memory HB 0 -> 1 id 1
  mscl.channel @d10 memory HB 1 -> 0 id 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{written by this put on @c01 (rank 0 thread block 0), which no later signal on @c01 publishes}}
      mscl.put @c01 to <rank 1, s[0]> from <rank 0, input[0]>
    }
    mscl.threadblock 1 {
      mscl.signal [@d01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@d10]
      // expected-error @+1 {{reads <rank 1, s[0]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
    }
  }
}

// -----

// Write-write race: two thread blocks of rank 0 write output[0].
mscl.program @write_write_blocks attributes {collective = #mscl.collective<custom>,
    ranks = 1 : i64, gpus_per_node = 1 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the unordered write}}
      mscl.copy to <rank 0, output[0:2]> from <rank 0, input[0:2]>
    }
    mscl.threadblock 1 {
      // expected-error @+1 {{writes <rank 0, output[1]>, which rank 0 thread block 0 also writes; nothing orders the two writes}}
      mscl.copy to <rank 0, output[1]> from <rank 0, input[0]>
    }
  }
}

// -----

// Write-write race across ranks: rank 0's put lands in output[0] of rank 1
// while rank 1 writes it locally, with no wait in between.
mscl.program @write_write_put attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the unordered write (a put on @c01)}}
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{writes <rank 1, output[0]>, which rank 0 thread block 0 also writes; nothing orders the two writes}}
      mscl.copy to <rank 1, output[0]> from <rank 1, input[0]>
      mscl.wait [@c10]
    }
  }
}

// -----

// Write after an unordered read: rank 1 overwrites s[0] while rank 0 may
// still be reading it remotely.
mscl.program @write_after_read attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the unordered read}}
      mscl.get @c01 to <rank 0, output[0]> from <rank 1, s[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{writes <rank 1, s[0]> while rank 0 thread block 0 may still be reading it; nothing orders the read before the write}}
      mscl.copy to <rank 1, s[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// Read while another block writes: the reading block of rank 0 is not
// ordered after the writing one.
mscl.program @read_while_written attributes {collective = #mscl.collective<custom>,
    ranks = 1 : i64, gpus_per_node = 1 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the unordered write}}
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
    }
    mscl.threadblock 1 {
      // expected-error @+1 {{reads <rank 0, s[0]> while rank 0 thread block 0 may still be writing it; nothing orders the write before the read}}
      mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
    }
  }
}

// -----

// Reuse before flush: the port put's source is overwritten before the
// flush that tells the proxy finished reading it.
mscl.program @reuse_before_flush attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @stage scratch[1]
  mscl.channel @p01 port 0 -> 1
  mscl.channel @p10 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, stage[0]> from <rank 0, input[0]>
      // expected-note @+1 {{the put on @p01 (rank 0 thread block 0); flush @p01 before reusing its source}}
      mscl.put @p01 to <rank 1, output[0]> from <rank 0, stage[0]>
      // expected-error @+1 {{overwrites <rank 0, stage[0]>, the source of a port-channel put that may still be reading it}}
      mscl.copy to <rank 0, stage[0]> from <rank 0, input[1]>
      mscl.put_with_signal_and_flush @p01 to <rank 1, output[1]> from <rank 0, stage[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@p10]
    }
  }
}

// -----

// An LL read of a packet chunk that no LL put writes.
mscl.program @ll_read_without_put attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[2] packet
  mscl.channel @l01 memory LL 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @l01 to <rank 1, recv[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reads packet chunk <rank 1, recv[1]>, which no LL put writes; the read would spin forever}}
      mscl.reduce to <rank 1, output[0]> from [<rank 1, input[0]>, <rank 1, recv[0]>, <rank 1, recv[1]>]
    }
  }
}

// -----

// Two LL puts write one packet chunk in one launch.
mscl.program @ll_double_put attributes {collective = #mscl.collective<custom>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[3] packet
  mscl.channel @l02 memory LL 0 -> 2
  mscl.channel @l12 memory LL 1 -> 2
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{first written here by rank 0 thread block 0}}
      mscl.put @l02 to <rank 2, recv[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{LL put writes packet chunk <rank 2, recv[0]> a second time; each packet chunk takes exactly one LL put per launch}}
      mscl.put @l12 to <rank 2, recv[0]> from <rank 1, input[0]>
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.copy to <rank 2, output[0]> from <rank 2, recv[0]>
    }
  }
}

// -----

// A deadlock through an LL read: rank 1 spins on packets that rank 0 only
// sends after waiting for rank 1.
mscl.program @ll_deadlock attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @recv scratch[1] packet
  mscl.channel @l01 memory LL 0 -> 1
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{deadlock: rank 0 thread block 0 waits here forever, waiting on @c01 for a signal from rank 1 (rank 1 thread block 0, on @c10); 2 thread blocks wait for each other}}
      mscl.wait [@c01]
      mscl.put @l01 to <rank 1, recv[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{rank 1 thread block 0 is blocked here, waiting for the LL put that writes <rank 1, recv[0]> (rank 0 thread block 0)}}
      mscl.copy to <rank 1, output[0]> from <rank 1, recv[0]>
      mscl.signal [@c10]
    }
  }
}

// -----

// Twenty-one reads before the covering wait: the first twenty are
// reported, the last only counted.
// expected-error @+1 {{1 more race report not shown}}
mscl.program @too_many_races attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[21]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[1]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[2]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[3]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[4]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[5]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[6]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[7]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[8]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[9]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[10]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[11]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[12]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[13]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[14]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[15]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[16]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[17]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[18]> from <rank 0, input[0]>
      // expected-note @+1 {{written by this put on @hb01 (rank 0 thread block 0), which no later signal on @hb01 publishes}}
      mscl.put @hb01 to <rank 1, s[19]> from <rank 0, input[0]>
      mscl.put @hb01 to <rank 1, s[20]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-error @+1 {{reads <rank 1, s[0]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
      // expected-error @+1 {{reads <rank 1, s[1]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[1]>
      // expected-error @+1 {{reads <rank 1, s[2]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[2]>
      // expected-error @+1 {{reads <rank 1, s[3]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[3]>
      // expected-error @+1 {{reads <rank 1, s[4]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[4]>
      // expected-error @+1 {{reads <rank 1, s[5]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[5]>
      // expected-error @+1 {{reads <rank 1, s[6]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[6]>
      // expected-error @+1 {{reads <rank 1, s[7]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[7]>
      // expected-error @+1 {{reads <rank 1, s[8]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[8]>
      // expected-error @+1 {{reads <rank 1, s[9]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[9]>
      // expected-error @+1 {{reads <rank 1, s[10]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[10]>
      // expected-error @+1 {{reads <rank 1, s[11]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[11]>
      // expected-error @+1 {{reads <rank 1, s[12]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[12]>
      // expected-error @+1 {{reads <rank 1, s[13]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[13]>
      // expected-error @+1 {{reads <rank 1, s[14]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[14]>
      // expected-error @+1 {{reads <rank 1, s[15]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[15]>
      // expected-error @+1 {{reads <rank 1, s[16]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[16]>
      // expected-error @+1 {{reads <rank 1, s[17]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[17]>
      // expected-error @+1 {{reads <rank 1, s[18]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[18]>
      // expected-error @+1 {{reads <rank 1, s[19]> before the wait that makes the put writing it visible}}
      mscl.copy to <rank 1, output[0]> from <rank 1, s[19]>
      mscl.copy to <rank 1, output[0]> from <rank 1, s[20]>
    }
  }
}
