// RUN: mscl-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the mscl dialect, one per case.
// chunk out of bounds
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op destination reaches chunk 2 of 's', which has 2 chunks}}
      mscl.put @hb01 to <rank 1, s[1:3]> from <rank 0, input[0:2]>
    }
  }
}

// -----

// unknown buffer
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.copy' op source names unknown buffer 'nope'}}
      mscl.copy to <rank 0, output[0]> from <rank 0, nope[0]>
    }
  }
}

// -----

// rank out of range
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.copy' op source is on rank 5 but the program has 2 ranks}}
      mscl.copy to <rank 0, output[0]> from <rank 5, input[0]>
    }
  }
}

// -----

// local op on remote chunk
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.copy' op source must be on rank 0, not rank 1}}
      mscl.copy to <rank 0, output[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// put destination on wrong rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op destination must be on rank 1, not rank 0}}
      mscl.put @hb01 to <rank 0, s[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// channel used on wrong rank
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.signal' op uses channel @hb10 from rank 1 on rank 0}}
      mscl.signal [@hb10]
    }
  }
}

// -----

// unknown channel
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.wait' op names unknown channel @nope}}
      mscl.wait [@nope]
    }
  }
}

// -----

// LL put into plain buffer
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op destination of an LL put must be a packet buffer, not 's'}}
      mscl.put @ll01 to <rank 1, s[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// HB put into packet buffer
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op destination is in packet buffer 'pk', which only LL puts may write}}
      mscl.put @hb01 to <rank 1, pk[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// signal on LL
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.signal' op on LL channel @ll01: LL data carries its own flags; synchronise over an HB or port channel}}
      mscl.signal [@ll01]
    }
  }
}

// -----

// put_with_signal on LL
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put_with_signal' op signals on LL channel @ll01}}
      mscl.put_with_signal @ll01 to <rank 1, pk[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// count mismatch
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op source spans 2 chunk(s) but the destination spans 1}}
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, input[0:2]>
    }
  }
}

// -----

// copy overlap
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.copy' op source and destination overlap}}
      mscl.copy to <rank 0, s[0:2]> from <rank 0, s[1:3]>
    }
  }
}

// -----

// switch op on p2p channel
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.switch_reduce' op needs a switch channel, @hb01 is not one}}
      mscl.switch_reduce @hb01 to <rank 0, output[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// p2p op on switch channel
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put' op needs a memory or port channel, but @sw is a switch channel}}
      mscl.put @sw to <rank 1, s[0]> from <rank 0, input[0]>
    }
  }
}

// -----

// get over port
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.get' op reads need a memory channel}}
      mscl.get @port01 to <rank 0, s[0]> from <rank 1, input[0]>
    }
  }
}

// -----

// duplicate channel
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.signal' op names channel @hb01 twice}}
      mscl.signal [@hb01, @hb01]
    }
  }
}

// -----

// reduce writes packet buffer
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.reduce' op destination is in packet buffer 'pk'}}
      mscl.reduce to <rank 0, pk[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
    }
  }
}

// -----

// read_reduce arity
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.read_reduce' op needs at least one remote chunk}}
      mscl.read_reduce to <rank 0, output[0]> from [<rank 0, input[0]>] remote []
    }
  }
}

// -----

// nested pipeline
mscl.program @p attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.buffer @s scratch[2]
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @port01 port 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 64 {
        // expected-error @+1 {{'mscl.pipeline' op pipelines do not nest}}
        mscl.pipeline unit 64 {
        }
      }
    }
  }
}

// -----

// expected-error @+1 {{'mscl.program' op rank count 3 is not a multiple of gpus_per_node 2}}
mscl.program @bad_shape attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
}

// -----

mscl.program @self_channel attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  // expected-error @+1 {{'mscl.channel' op connects rank 1 to itself}}
  mscl.channel @c memory HB 1 -> 1
}

// -----

mscl.program @port_protocol attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.channel' op port channels take no protocol}}
  mscl.channel @c port LL 0 -> 1
}

// -----

mscl.program @tb_overlap attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 group 2 {
    }
    // expected-error @+1 {{'mscl.threadblock' op thread block 1 already belongs to the block starting at 0 on rank 0}}
    mscl.threadblock 1 {
    }
  }
}

// -----

mscl.program @dup_rank attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
  }
  // expected-error @+1 {{'mscl.rank' op rank 0 appears twice}}
  mscl.rank 0 {
  }
}

// -----

mscl.program @wrong_chunks attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.buffer' op has 4 chunks but the program says input_chunks = 1}}
  mscl.buffer @input input[4]
  mscl.buffer @output output[1]
}

// -----

mscl.program @misnamed attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.buffer' op the input buffer must be named @input}}
  mscl.buffer @in input[1]
}

// -----

mscl.program @bad_chunk attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{chunk range must hold at least one chunk}}
      mscl.copy to <rank 0, output[0:0]> from <rank 0, input[0]>
    }
  }
}

// -----

mscl.program @bad_group attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  // expected-error @+1 {{'mscl.switch_channel' op group ranks must be sorted and distinct}}
  mscl.switch_channel @sw ranks [1, 0]
}

// -----

mscl.program @shared_channel attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @c memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.signal [@c]
    }
    mscl.threadblock 1 {
      // expected-error @+1 {{'mscl.signal' op uses channel @c in thread block 1, but thread block 0 uses it too; give each block its own channel (id)}}
      mscl.signal [@c]
    }
  }
}

// -----

// reduce_put over a port channel: the block's threads store the reduction
// into the peer, which a port channel's proxy cannot do. The verifier
// refuses it, so no later stage (simulator, plan, CUDA) meets it.
mscl.program @reduce_put_port attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @p01 port 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.reduce_put' op reduces into the peer through port channel @p01; a reduction's result is stored through a memory channel, a port channel only copies}}
      mscl.reduce_put [@p01 <rank 1, output[0]>] from [<rank 0, input[0]>]
    }
  }
}

// -----

// A signal on an LL channel and the wait on its other end are one mistake:
// one error, at the signal, with a note at the wait.
mscl.program @ll_signal_and_wait attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.buffer @s scratch[1] packet
  mscl.channel @c01 memory LL 0 -> 1
  mscl.channel @c10 memory LL 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      // expected-error @+1 {{'mscl.put_with_signal' op signals on LL channel @c01; LL packets carry their own flags}}
      mscl.put_with_signal @c01 to <rank 1, s[0]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      // expected-note @+1 {{the wait on its other end @c10 is on an LL channel too}}
      mscl.wait [@c10]
      mscl.copy to <rank 1, output[0]> from <rank 1, s[0]>
    }
  }
}
