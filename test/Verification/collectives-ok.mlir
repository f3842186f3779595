// RUN: mscl-opt %s -split-input-file -mscl-check-sync -mscl-check-collective -verify-diagnostics -o /dev/null
// Every collective kind, proved; in-place aliasing included.

// In-place all-gather: input@r[0] is output@r[r].
mscl.program @allgather_inplace attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64,
    inplace} {
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, output[0]>
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, output[1]>
      mscl.wait [@c10]
    }
  }
}

// -----

// Reduce-scatter reading the peer's input directly (read_reduce).
mscl.program @reducescatter_read attributes {collective = #mscl.collective<reducescatter>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[1]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.read_reduce to <rank 0, output[0]> from [<rank 0, input[0]>] remote [@c01 <rank 1, input[0]>]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.read_reduce to <rank 1, output[0]> from [<rank 1, input[1]>] remote [@c10 <rank 0, input[1]>]
    }
  }
}

// -----

// In-place reduce-scatter: output@r[0] is input@r[r]; reduce_put sends the
// partial sum straight to the owner.
mscl.program @reducescatter_inplace attributes {collective = #mscl.collective<reducescatter>,
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
      mscl.reduce to <rank 1, input[1]> from [<rank 1, input[1]>, <rank 1, s[0]>]
    }
  }
}

// -----

// Broadcast from root 1 by get: the others pull the root's input.
mscl.program @broadcast_get attributes {collective = #mscl.collective<broadcast>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64,
    root = 1 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.channel @m01 memory HB 0 -> 1
  mscl.channel @m21 memory HB 2 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.get @m01 to <rank 0, output[0:2]> from <rank 1, input[0:2]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[0:2]> from <rank 1, input[0:2]>
    }
  }
  mscl.rank 2 {
    mscl.threadblock 0 {
      mscl.get @m21 to <rank 2, output[0]> from <rank 1, input[0]>
      mscl.get @m21 to <rank 2, output[1]> from <rank 1, input[1]>
    }
  }
}

// -----

// All-to-all, 2 ranks, 1 chunk per peer.
mscl.program @alltoall attributes {collective = #mscl.collective<alltoall>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.channel @c01 port 0 -> 1
  mscl.channel @c10 port 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.put_with_signal @c01 to <rank 1, output[0]> from <rank 0, input[1]>
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.copy to <rank 1, output[1]> from <rank 1, input[1]>
      mscl.put_with_signal @c10 to <rank 0, output[1]> from <rank 1, input[0]>
      mscl.wait [@c10]
    }
  }
}

// -----

// SwitchChannel all-reduce: each rank reduces its chunk through the switch
// and broadcasts it; HB signals order the group before and after.
mscl.program @allreduce_switch attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.channel @c01 memory HB 0 -> 1
  mscl.channel @c10 memory HB 1 -> 0
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.signal [@c01]
      mscl.wait [@c01]
      mscl.switch_reduce @sw to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.switch_broadcast @sw to <rank 0, output[0]> from <rank 0, output[0]>
      mscl.signal [@c01]
      mscl.wait [@c01]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.signal [@c10]
      mscl.wait [@c10]
      mscl.switch_reduce @sw to <rank 1, output[1]> from <rank 1, input[1]>
      mscl.switch_broadcast @sw to <rank 1, output[1]> from <rank 1, output[1]>
      mscl.signal [@c10]
      mscl.wait [@c10]
    }
  }
}

// -----

// A custom collective has no postcondition to prove.
// expected-remark @+1 {{custom collective: no postcondition to prove}}
mscl.program @custom attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
}
