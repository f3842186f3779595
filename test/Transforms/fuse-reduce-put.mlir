// RUN: mscl-opt %s -split-input-file -mscl-fuse-reduce-put | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-fuse-reduce-put | mscl-opt -split-input-file | FileCheck %s

// CHECK-LABEL: mscl.program @fuse
mscl.program @fuse attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.buffer @t scratch[4]
  mscl.buffer @pk scratch[4] packet
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @ll02 memory LL 0 -> 2
  mscl.channel @hb01b memory HB 0 -> 1 id 1
  mscl.channel @hb02b memory HB 0 -> 2 id 1
  mscl.channel @hb01c memory HB 0 -> 1 id 2
  mscl.rank 0 {
    // Puts of the reduced user chunk to two peers (HB and LL), an
    // independent op in between: one reduce_put that still stores.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[3]>
    // CHECK-NEXT: mscl.reduce_put [@hb01 <rank 1, s[0]>, @ll02 <rank 2, pk[0]>] from [<rank 0, input[0]>, <rank 0, s[1]>] store <rank 0, output[0]>
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[1]>]
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, output[0]>
      mscl.copy to <rank 0, output[3]> from <rank 0, input[3]>
      mscl.put @ll02 to <rank 2, pk[0]> from <rank 0, output[0]>
      mscl.signal [@hb01]
    }
    // A scratch chunk nothing else reads: no store.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.reduce_put [@hb01b <rank 1, s[2]>] from [<rank 0, input[1]>, <rank 0, input[2]>]{{$}}
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.reduce to <rank 0, t[0]> from [<rank 0, input[1]>, <rank 0, input[2]>]
      mscl.put @hb01b to <rank 1, s[2]> from <rank 0, t[0]>
    }
    // A scratch chunk read later: the store stays. A reduce_put with a
    // store takes a later put of the stored chunk.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.reduce_put [@hb02b <rank 2, s[3]>, @hb01c <rank 1, s[1]>] from [<rank 0, input[1]>, <rank 0, input[3]>] store <rank 0, t[1]>
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, t[1]>
    // CHECK-NEXT: }
    mscl.threadblock 2 {
      mscl.reduce to <rank 0, t[1]> from [<rank 0, input[1]>, <rank 0, input[3]>]
      mscl.put @hb02b to <rank 2, s[3]> from <rank 0, t[1]>
      mscl.put @hb01c to <rank 1, s[1]> from <rank 0, t[1]>
      mscl.copy to <rank 0, output[1]> from <rank 0, t[1]>
    }
  }
}

// -----

// CHECK-LABEL: mscl.program @keep
mscl.program @keep attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @port01 port 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb01b memory HB 0 -> 1 id 1
  mscl.channel @hb01c memory HB 0 -> 1 id 2
  mscl.channel @hb01d memory HB 0 -> 1 id 3
  mscl.channel @hb01e memory HB 0 -> 1 id 4
  mscl.rank 0 {
    // A port channel copies from memory: no fusion.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.put @port01
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, output[0]> from [<rank 0, input[0]>, <rank 0, s[0]>]
      mscl.put @port01 to <rank 1, s[0]> from <rank 0, output[0]>
    }
    // A signal in between would then cover different data.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: mscl.put @hb01
    mscl.threadblock 1 {
      mscl.reduce to <rank 0, output[1]> from [<rank 0, input[1]>, <rank 0, s[1]>]
      mscl.signal [@hb01]
      mscl.put @hb01 to <rank 1, s[1]> from <rank 0, output[1]>
    }
    // An op in between writes a source of the reduce.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.put @hb01b
    mscl.threadblock 2 {
      mscl.reduce to <rank 0, output[2]> from [<rank 0, input[2]>, <rank 0, s[2]>]
      mscl.copy to <rank 0, s[2]> from <rank 0, input[3]>
      mscl.put @hb01b to <rank 1, s[2]> from <rank 0, output[2]>
    }
    // The put sends another chunk than the reduced one.
    // CHECK: mscl.threadblock 3 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.put @hb01c
    mscl.threadblock 3 {
      mscl.reduce to <rank 0, output[3]> from [<rank 0, input[3]>, <rank 0, s[3]>]
      mscl.put @hb01c to <rank 1, s[3]> from <rank 0, output[2]>
    }
    // An op in between reads the reduced chunk.
    // CHECK: mscl.threadblock 4 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.put @hb01d
    mscl.threadblock 4 {
      mscl.reduce to <rank 0, s[3]> from [<rank 0, input[3]>, <rank 0, input[0]>]
      mscl.copy to <rank 0, output[3]> from <rank 0, s[3]>
      mscl.put @hb01d to <rank 1, s[3]> from <rank 0, s[3]>
    }
    // A wait in between: the reduce overlaps the wait on purpose.
    // CHECK: mscl.threadblock 5 {
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: mscl.wait
    // CHECK-NEXT: mscl.put @hb01e
    mscl.threadblock 5 {
      mscl.reduce to <rank 0, output[1]> from [<rank 0, input[1]>, <rank 0, input[2]>]
      mscl.wait [@hb01e]
      mscl.put @hb01e to <rank 1, s[1]> from <rank 0, output[1]>
    }
  }
}

// -----

// Puts of one source to several peers: one reduce_put from that source
// alone, without a store, so the source is loaded once for every peer.
// CHECK-LABEL: mscl.program @multi_put
mscl.program @multi_put attributes {collective = #mscl.collective<allreduce>,
    ranks = 4 : i64, gpus_per_node = 4 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.buffer @pk scratch[4] packet
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @ll02 memory LL 0 -> 2
  mscl.channel @hb03 memory HB 0 -> 3
  mscl.channel @hb01b memory HB 0 -> 1 id 1
  mscl.channel @hb02b memory HB 0 -> 2 id 1
  mscl.channel @port01 port 0 -> 1
  mscl.channel @hb02c memory HB 0 -> 2 id 2
  mscl.channel @hb01d memory HB 0 -> 1 id 3
  mscl.channel @hb02d memory HB 0 -> 2 id 3
  mscl.rank 0 {
    // Three peers, HB and LL mixed, an independent copy in between.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[3]>
    // CHECK-NEXT: mscl.reduce_put [@hb01 <rank 1, s[0]>, @ll02 <rank 2, pk[0]>, @hb03 <rank 3, s[0]>] from [<rank 0, input[0]>]{{$}}
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.put @ll02 to <rank 2, pk[0]> from <rank 0, input[0]>
      mscl.copy to <rank 0, output[3]> from <rank 0, input[3]>
      mscl.put @hb03 to <rank 3, s[0]> from <rank 0, input[0]>
      mscl.signal [@hb01, @hb03]
    }
    // The source is rewritten in between: the puts send different data.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.put @hb01b
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.put @hb02b
    mscl.threadblock 1 {
      mscl.put @hb01b to <rank 1, s[1]> from <rank 0, output[1]>
      mscl.copy to <rank 0, output[1]> from <rank 0, input[1]>
      mscl.put @hb02b to <rank 2, s[1]> from <rank 0, output[1]>
    }
    // A port channel copies from memory: no fusion.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.put @port01
    // CHECK-NEXT: mscl.put @hb02c
    mscl.threadblock 2 {
      mscl.put @port01 to <rank 1, s[2]> from <rank 0, input[2]>
      mscl.put @hb02c to <rank 2, s[2]> from <rank 0, input[2]>
    }
    // A wait in between: the first put overlaps the wait on purpose.
    // CHECK: mscl.threadblock 3 {
    // CHECK-NEXT: mscl.put @hb01d
    // CHECK-NEXT: mscl.wait
    // CHECK-NEXT: mscl.put @hb02d
    mscl.threadblock 3 {
      mscl.put @hb01d to <rank 1, s[3]> from <rank 0, input[3]>
      mscl.wait [@hb01d]
      mscl.put @hb02d to <rank 2, s[3]> from <rank 0, input[3]>
    }
  }
}

// -----

// A put that moves more elements than the reduce before it: the reduce of
// user chunk 0 into scratch moves chunk 0's size, the LL put of the scratch
// chunk the scratch size (one element more where chunk 0 has no last
// element). Fused, the put would send a packet fewer than its reader spins
// on at those counts. The put of a user-sized destination fuses.
// CHECK-LABEL: mscl.program @element_counts
mscl.program @element_counts attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[2]
  mscl.buffer @pk scratch[2] packet
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.reduce to <rank 0, s[1]> from [<rank 0, input[0]>, <rank 0, s[0]>]
    // CHECK-NEXT: mscl.put @ll01 to <rank 1, pk[0]> from <rank 0, s[1]>
    // CHECK-NEXT: mscl.reduce_put [@hb01 <rank 1, output[1]>] from [<rank 0, input[1]>, <rank 0, s[0]>] store <rank 0, output[1]>
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, s[1]> from [<rank 0, input[0]>, <rank 0, s[0]>]
      mscl.put @ll01 to <rank 1, pk[0]> from <rank 0, s[1]>
      mscl.reduce to <rank 0, output[1]> from [<rank 0, input[1]>, <rank 0, s[0]>]
      mscl.put @hb01 to <rank 1, output[1]> from <rank 0, output[1]>
    }
  }
}

// -----

// A scratch destination that another block also writes keeps its store
// when the reduce does not read it: dropped, the race between the two
// writers would leave the program the proofs check.
// CHECK-LABEL: mscl.program @other_writer
mscl.program @other_writer attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.reduce_put [@hb01 <rank 1, output[0]>] from [<rank 0, input[0]>, <rank 0, input[1]>] store <rank 0, s[0]>
    mscl.threadblock 0 {
      mscl.reduce to <rank 0, s[0]> from [<rank 0, input[0]>, <rank 0, input[1]>]
      mscl.put @hb01 to <rank 1, output[0]> from <rank 0, s[0]>
    }
    mscl.threadblock 1 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[1]>
    }
  }
}
