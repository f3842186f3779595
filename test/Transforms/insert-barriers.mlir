// RUN: mscl-opt %s -split-input-file -mscl-insert-barriers | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-insert-barriers | mscl-opt -split-input-file -mscl-test-dependence | FileCheck %s --check-prefix=SEP

// After insertion no dependence is left unseparated.
// SEP-NOT: {{(RAW|WAR|WAW) [0-9]+ <[^>]*>( loop)?"}}

// CHECK-LABEL: mscl.program @straight
mscl.program @straight attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @port01 port 0 -> 1
  mscl.rank 0 {
    // A RAW: the put reads what the copy wrote.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, s[0]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put @hb01
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, s[0]>
    }
    // Independent chunks: nothing to separate.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.copy
    // CHECK-NEXT: mscl.reduce
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.copy to <rank 0, output[1]> from <rank 0, input[1]>
      mscl.copy to <rank 0, output[2]> from <rank 0, input[1]>
      mscl.reduce to <rank 0, output[3]> from [<rank 0, input[1]>, <rank 0, input[3]>]
    }
  }
}

// -----

// Implied barriers: a signal starts with one, a wait and a flush end with
// one, put_with_signal has one after its put.
// CHECK-LABEL: mscl.program @implied
mscl.program @implied attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @port01 port 0 -> 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.put @port01
    // CHECK-NEXT: mscl.flush
    // CHECK-NEXT: mscl.copy to <rank 0, input[0]>
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: mscl.copy to <rank 0, s[1]> from <rank 0, input[0]>
    // CHECK-NEXT: mscl.wait
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, s[1]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put_with_signal @hb01 to <rank 1, s[2]> from <rank 0, output[1]>
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, input[3]>
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.put @port01 to <rank 1, s[0]> from <rank 0, input[0]>
      mscl.flush [@port01]
      mscl.copy to <rank 0, input[0]> from <rank 0, input[1]>
      mscl.signal [@hb01]
      mscl.copy to <rank 0, s[1]> from <rank 0, input[0]>
      mscl.wait [@hb01]
      mscl.copy to <rank 0, output[1]> from <rank 0, s[1]>
      mscl.put_with_signal @hb01 to <rank 1, s[2]> from <rank 0, output[1]>
      mscl.copy to <rank 0, output[1]> from <rank 0, input[3]>
    }
  }
}

// -----

// The fewest barriers: one barrier placed as late as possible separates
// both pairs; an existing barrier is used, not duplicated.
// CHECK-LABEL: mscl.program @fewest
mscl.program @fewest attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, s[0]>
    // CHECK-NEXT: mscl.copy to <rank 0, s[1]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, s[1]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.reduce to <rank 0, output[0]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.copy to <rank 0, s[3]> from <rank 0, output[0]>
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.copy to <rank 0, s[1]> from <rank 0, input[1]>
      mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
      mscl.copy to <rank 0, output[1]> from <rank 0, s[1]>
      mscl.barrier
      mscl.reduce to <rank 0, output[0]> from [<rank 0, output[0]>, <rank 0, output[1]>]
      mscl.copy to <rank 0, s[3]> from <rank 0, output[0]>
    }
  }
}

// -----

// Pipelines: an edge from before the body is cut before the pipeline (one
// barrier per launch, not per iteration); edges inside the body and from
// the previous iteration get barriers in the body.
// CHECK-LABEL: mscl.program @pipeline
mscl.program @pipeline attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.buffer @pk scratch[4] packet
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.channel @ll01b memory LL 0 -> 1 id 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[2]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.pipeline
    // CHECK-NEXT: mscl.copy to <rank 0, output[3]> from <rank 0, output[2]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.copy to <rank 0, s[2:4]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put @ll01
    // CHECK-NEXT: }
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[2]> from <rank 0, input[2]>
      mscl.pipeline unit 1024 {
        mscl.copy to <rank 0, output[3]> from <rank 0, output[2]>
        mscl.copy to <rank 0, s[2:4]> from <rank 0, output[2:4]>
        mscl.put @ll01 to <rank 1, pk[1]> from <rank 0, s[3]>
      }
    }
    // Only a loop-carried edge (the packet chunk rewritten by every
    // iteration): one barrier in the body.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.pipeline
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put @ll01b
    // CHECK-NEXT: }
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.pipeline unit 1024 {
        mscl.put @ll01b to <rank 1, pk[0]> from <rank 0, input[0]>
      }
    }
    // Same chunks in every iteration, separated by a wait: nothing to add
    // inside. After the body the copy still needs a barrier: the body's wait
    // does not run when the pipeline makes zero trips.
    // CHECK: mscl.threadblock 2 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[0]>
    // CHECK-NEXT: mscl.pipeline
    // CHECK-NEXT: mscl.copy to <rank 0, s[0]> from <rank 0, input[1]>
    // CHECK-NEXT: mscl.wait
    // CHECK-NEXT: mscl.copy to <rank 0, input[1]> from <rank 0, s[0]>
    // CHECK-NEXT: }
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, output[0]>
    mscl.threadblock 2 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.pipeline unit 1024 {
        mscl.copy to <rank 0, s[0]> from <rank 0, input[1]>
        mscl.wait [@hb01]
        mscl.copy to <rank 0, input[1]> from <rank 0, s[0]>
      }
      mscl.copy to <rank 0, output[1]> from <rank 0, output[0]>
    }
  }
}
