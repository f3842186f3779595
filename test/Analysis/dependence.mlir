// RUN: mscl-opt %s -split-input-file -mscl-test-dependence | FileCheck %s

// Straight-line edges: RAW, WAR, WAW; a barrier, a signal (barrier before)
// and a wait (barrier after) separate; remote chunks count like local ones.
// CHECK-LABEL: mscl.program @straight
mscl.program @straight attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // CHECK: mscl.copy {{.*}}dep_id = 0 : i64, dep_reads = ["<rank 0, input[0]>"], dep_writes = ["<rank 0, s[0]>"]}
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      // CHECK-NEXT: mscl.put {{.*}}dep_id = 1 : i64, dep_in = ["RAW 0 <rank 0, s[0]>"], dep_reads = ["<rank 0, s[0]>"], dep_writes = ["remote <rank 1, s[1]>"]}
      mscl.put @hb01 to <rank 1, s[1]> from <rank 0, s[0]>
      // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["WAR 0 <rank 0, input[0]>"]
      mscl.copy to <rank 0, input[0]> from <rank 0, input[1]>
      // CHECK-NEXT: mscl.barrier {dep_id = 3 : i64}
      mscl.barrier
      // A write after two readers and a writer: WAW and both WARs, separated.
      // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["WAW 0 <rank 0, s[0]> sep", "WAR 1 <rank 0, s[0]> sep"]
      mscl.copy to <rank 0, s[0]> from <rank 0, input[2]>
      // The peer's chunk: WAW with the put, separated by the barrier.
      // CHECK-NEXT: mscl.put {{.*}}dep_in = ["RAW 4 <rank 0, s[0]>", "WAW 1 <rank 1, s[1]> sep"]
      mscl.put @hb01 to <rank 1, s[1]> from <rank 0, s[0]>
      // CHECK-NEXT: mscl.signal [@hb01] {dep_id = 6 : i64}
      mscl.signal [@hb01]
      // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["WAW 4 <rank 0, s[0]> sep", "WAR 5 <rank 0, s[0]> sep"]
      mscl.copy to <rank 0, s[0]> from <rank 0, input[3]>
      // CHECK-NEXT: mscl.wait
      mscl.wait [@hb01]
      // Partial overlap of ranges: the edge names the common chunks.
      // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["RAW 7 <rank 0, s[0]> sep"]
      mscl.copy to <rank 0, output[0:2]> from <rank 0, s[0:2]>
      // CHECK-NEXT: mscl.reduce {{.*}}dep_in = ["RAW 9 <rank 0, output[1]>"]
      mscl.reduce to <rank 0, output[2]> from [<rank 0, output[1]>, <rank 0, input[2]>]
      // Reading and writing one chunk in one op is no edge with itself.
      // CHECK-NEXT: mscl.reduce {{.*}}dep_in = ["RAW 10 <rank 0, output[2]>", "WAW 10 <rank 0, output[2]>"]
      mscl.reduce to <rank 0, output[2]> from [<rank 0, output[2]>, <rank 0, input[3]>]
      // Disjoint chunks: no edge.
      // CHECK-NEXT: mscl.copy
      // CHECK-NOT: dep_in
      // CHECK-SAME: }
      mscl.copy to <rank 0, output[3]> from <rank 0, input[1]>
    }
    // Other thread blocks are not ordered with this one: no edges across.
    // CHECK: mscl.threadblock 1
    // CHECK-NEXT: mscl.copy {{.*}}dep_id = 0 : i64
    // CHECK-NOT: dep_in
    // CHECK-SAME: }
    mscl.threadblock 1 {
      mscl.copy to <rank 0, s[3]> from <rank 0, s[0]>
    }
  }
}

// -----

// Accesses of every data op; switch ops touch the chunk on every member.
// CHECK-LABEL: mscl.program @accesses
mscl.program @accesses attributes {collective = #mscl.collective<allreduce>,
    ranks = 3 : i64, gpus_per_node = 3 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @pk scratch[2] packet
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb02 memory HB 0 -> 2
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.switch_channel @sw ranks [0, 1, 2]
  mscl.rank 0 {
    mscl.threadblock 0 {
      // CHECK: mscl.get {{.*}}dep_reads = ["remote <rank 1, input[0]>"], dep_writes = ["<rank 0, output[0]>"]
      mscl.get @hb01 to <rank 0, output[0]> from <rank 1, input[0]>
      // CHECK: mscl.read_reduce {{.*}}dep_reads = ["<rank 0, input[1]>", "remote <rank 1, input[1]>", "remote <rank 2, input[1]>"], dep_writes = ["<rank 0, output[1]>"]
      mscl.read_reduce to <rank 0, output[1]> from [<rank 0, input[1]>] remote [@hb01 <rank 1, input[1]>, @hb02 <rank 2, input[1]>]
      // CHECK: mscl.reduce_put {{.*}}dep_reads = ["<rank 0, input[0]>", "<rank 0, pk[0]>"], dep_writes = ["remote <rank 1, pk[1]>", "<rank 0, output[0]>"]
      mscl.reduce_put [@ll01 <rank 1, pk[1]>] from [<rank 0, input[0]>, <rank 0, pk[0]>] store <rank 0, output[0]>
      // CHECK: mscl.switch_reduce {{.*}}dep_reads = ["<rank 0, input[0]>", "remote <rank 1, input[0]>", "remote <rank 2, input[0]>"], dep_writes = ["<rank 0, output[1]>"]
      mscl.switch_reduce @sw to <rank 0, output[1]> from <rank 0, input[0]>
      // CHECK: mscl.switch_broadcast {{.*}}dep_reads = ["<rank 0, output[1]>"], dep_writes = ["<rank 0, output[0]>", "remote <rank 1, output[0]>", "remote <rank 2, output[0]>"]
      mscl.switch_broadcast @sw to <rank 0, output[0]> from <rank 0, output[1]>
    }
  }
}

// -----

// Pipelines: edges into the body from before it; loop-carried edges only
// where iterations can meet (ranges with different starts, packet
// buffers); after the body, the state before it still counts (zero trips).
// CHECK-LABEL: mscl.program @pipeline
mscl.program @pipeline attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.buffer @pk scratch[4] packet
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      // CHECK: mscl.copy {{.*}}dep_id = 0 : i64
      mscl.copy to <rank 0, output[2]> from <rank 0, input[2]>
      // CHECK-NEXT: mscl.pipeline unit 1024 attributes {dep_id = 1 : i64}
      mscl.pipeline unit 1024 {
        // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["RAW 0 <rank 0, output[2]>", "WAR 3 <rank 0, output[3]> loop"]
        mscl.copy to <rank 0, output[3]> from <rank 0, output[2]>
        // Op 2 writes output[3], this reads output[2:4]: a RAW in one
        // iteration, and a WAR across iterations since the starts differ.
        // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["RAW 0 <rank 0, output[2]>", "RAW 2 <rank 0, output[3]>", "WAR 4 <rank 0, s[3]> loop"]
        mscl.copy to <rank 0, s[2:4]> from <rank 0, output[2:4]>
        // Packet chunks are rewritten every iteration: WAW with itself.
        // CHECK-NEXT: mscl.put {{.*}}dep_in = ["RAW 3 <rank 0, s[3]>", "WAW 4 <rank 1, pk[1]> loop"]
        mscl.put @ll01 to <rank 1, pk[1]> from <rank 0, s[3]>
        // CHECK-NEXT: mscl.copy {{.*}}dep_id = 5 : i64
        // CHECK-NOT: dep_in
        // CHECK-SAME: }
        mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
        // Same chunk ranges in every iteration: no loop-carried edge.
        // CHECK-NEXT: mscl.copy {{.*}}dep_in = ["RAW 5 <rank 0, output[0]>", "WAR 5 <rank 0, input[0]>"]
        mscl.copy to <rank 0, input[0]> from <rank 0, output[0]>
      }
      // The writer before the pipeline and the one in it both count.
      // CHECK: mscl.copy {{.*}}dep_in = ["RAW 0 <rank 0, output[2]>", "RAW 2 <rank 0, output[3]>", "WAR 0 <rank 0, input[2]>"]
      mscl.copy to <rank 0, input[2:4]> from <rank 0, output[2:4]>
    }
  }
}
