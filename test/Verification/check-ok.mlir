// RUN: mscl-opt %s -split-input-file -mscl-check-sync -mscl-check-collective -verify-diagnostics -o /dev/null
// Correct programs: both checks stay silent.

// 1PA all-reduce on LL packets, 3 ranks, summing in rank order on every
// rank (the same bits everywhere).
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

// -----

// 2PA all-reduce on HB memory channels, 2 ranks: reduce-scatter into
// scratch, reduce, all-gather into the peer's output.
mscl.program @allreduce_2pa attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, s[0]> from <rank 0, input[1]>
      mscl.wait [@c01]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>]
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put @c10 to <rank 0, s[1]> from <rank 1, input[0]>
      mscl.signal [@c10]
      mscl.wait [@c10]
      mscl.reduce to <rank 1, output[1]> from [<rank 1, input[1]>, <rank 1, s[0]>]
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, output[1]>
      mscl.wait [@c10]
    }
  }
}

// -----

// Ring all-gather on port channels, 3 ranks; each forwards what it got.
mscl.program @allgather_ring attributes {collective = #mscl.collective<allgather>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 3 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[3]
  mscl.channel @p01 port 0 -> 1
  mscl.channel @p12 port 1 -> 2
  mscl.channel @p20 port 2 -> 0
  mscl.channel @p02 port 0 -> 2
  mscl.channel @p10 port 1 -> 0
  mscl.channel @p21 port 2 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.put_with_signal @p01 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.wait [@p02]
      mscl.put_with_signal @p01 to <rank 1, output[2]> from <rank 0, output[2]>
      mscl.wait [@p02]
      mscl.flush [@p01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
      mscl.put_with_signal @p12 to <rank 2, output[1]> from <rank 1, output[1]>
      mscl.wait [@p10]
      mscl.put_with_signal @p12 to <rank 2, output[0]> from <rank 1, output[0]>
      mscl.wait [@p10]
      mscl.flush [@p12]
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.copy to <rank 2, output[2]> from <rank 2, input[0]>
      mscl.put_with_signal @p20 to <rank 0, output[2]> from <rank 2, output[2]>
      mscl.wait [@p21]
      mscl.put_with_signal @p20 to <rank 0, output[1]> from <rank 2, output[1]>
      mscl.wait [@p21]
      mscl.flush [@p20]
    }
  }
}

// -----

// A port put's source reused after its flush.
mscl.program @flush_then_reuse attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[4]
  mscl.buffer @stage scratch[1]
  mscl.channel @p01 port 0 -> 1
  mscl.channel @p10 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0:2]> from <rank 0, input[0:2]>
      mscl.copy to <rank 0, stage[0]> from <rank 0, input[0]>
      mscl.put @p01 to <rank 1, output[0]> from <rank 0, stage[0]>
      mscl.flush [@p01]
      mscl.copy to <rank 0, stage[0]> from <rank 0, input[1]>
      mscl.put_with_signal_and_flush @p01 to <rank 1, output[1]> from <rank 0, stage[0]>
      mscl.wait [@p01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[2:4]> from <rank 1, input[0:2]>
      mscl.put_with_signal @p10 to <rank 0, output[2:4]> from <rank 1, input[0:2]>
      mscl.wait [@p10]
    }
  }
}

// -----

// Pipelines on both sides, one signal and one wait per iteration each way.
mscl.program @pipelined attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1048576 {
        mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
        mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[0]>
        mscl.wait [@c01]
      }
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.pipeline unit 1048576 {
        mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
        mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, input[0]>
        mscl.wait [@c10]
      }
    }
  }
}

// -----

// Three thread blocks on rank 0 (one a group of two), two on rank 1, each
// with its own channels (ids). Rank 0's tb 2 reads s[0], which tb 0 wrote:
// blocks of one rank are unordered, but tb 0's signal reaches rank 1, whose
// tb 0 signals tb 2 afterwards, which orders the two.
mscl.program @blocks attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[2]
  mscl.channel @a01 memory HB 0 -> 1
  mscl.channel @a10 memory HB 1 -> 0
  mscl.channel @b01 memory HB 0 -> 1 id 1
  mscl.channel @b10 memory HB 1 -> 0 id 1
  mscl.channel @x01 memory HB 0 -> 1 id 2
  mscl.channel @x10 memory HB 1 -> 0 id 2
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.signal [@a01]
    }
    mscl.threadblock 2 {
      mscl.wait [@x01]
      mscl.reduce to <rank 0, output[0]> from [<rank 0, s[0]>, <rank 0, s[1]>]
      mscl.put @b01 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.put_with_signal @b01 to <rank 1, s[1]> from <rank 0, input[1]>
      mscl.wait [@b01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@a10]
      mscl.put_with_signal @x10 to <rank 0, s[1]> from <rank 1, input[0]>
    }
    mscl.threadblock 1 {
      mscl.wait [@b10]
      mscl.reduce to <rank 1, output[1]> from [<rank 1, input[1]>, <rank 1, s[1]>]
      mscl.put_with_signal @b10 to <rank 0, output[1]> from <rank 1, output[1]>
    }
  }
}
