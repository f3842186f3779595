// RUN: mscl-opt %s -split-input-file -mscl-elide-barriers | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-elide-barriers | mscl-opt -split-input-file -mscl-test-dependence | FileCheck %s --check-prefix=SEP

// Elision never leaves a dependence that was separated unseparated.
// SEP-NOT: {{(RAW|WAR|WAW) [0-9]+ <[^>]*>( loop)?"}}

// CHECK-LABEL: mscl.program @redundant
mscl.program @redundant attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[4]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.channel @hb01b memory HB 0 -> 1 id 1
  mscl.rank 0 {
    // At the start and end of a block, back to back, next to a wait or a
    // signal, and with no conflicting accesses around: all go. Of two
    // barriers between a writer and a reader, the later one stays.
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, s[0]>
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put @hb01 to <rank 1, s[0]> from <rank 0, s[0]>
    // CHECK-NEXT: mscl.wait
    // CHECK-NEXT: mscl.copy to <rank 0, s[0]> from <rank 0, input[2]>
    // CHECK-NEXT: mscl.signal
    // CHECK-NEXT: mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.barrier
      mscl.copy to <rank 0, s[0]> from <rank 0, input[0]>
      mscl.barrier
      mscl.copy to <rank 0, output[1]> from <rank 0, input[1]>
      mscl.barrier
      mscl.barrier
      mscl.put @hb01 to <rank 1, s[0]> from <rank 0, s[0]>
      mscl.barrier
      mscl.wait [@hb01]
      mscl.barrier
      mscl.copy to <rank 0, s[0]> from <rank 0, input[2]>
      mscl.signal [@hb01]
      mscl.barrier
      mscl.copy to <rank 0, output[0]> from <rank 0, s[0]>
      mscl.barrier
    }
    // Needed barriers stay.
    // CHECK: mscl.threadblock 1 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[2]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.copy to <rank 0, output[2]> from <rank 0, input[0]>
    // CHECK-NEXT: }
    mscl.threadblock 1 {
      mscl.copy to <rank 0, output[2]> from <rank 0, input[3]>
      mscl.barrier
      mscl.put @hb01b to <rank 1, s[2]> from <rank 0, output[2]>
      mscl.barrier
      mscl.copy to <rank 0, output[2]> from <rank 0, input[0]>
    }
  }
}

// -----

// Pipelines: a barrier carrying a loop-carried edge stays; a barrier before
// the pipeline that cuts an edge into the body stays; one in the body with
// nothing to do goes.
// CHECK-LABEL: mscl.program @pipeline
mscl.program @pipeline attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 4 : i64, input_chunks = 4 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[4]
  mscl.buffer @output output[4]
  mscl.buffer @pk scratch[4] packet
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.rank 0 {
    // CHECK: mscl.threadblock 0 {
    // CHECK-NEXT: mscl.copy to <rank 0, output[0]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.pipeline
    // CHECK-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, output[0]>
    // CHECK-NEXT: mscl.barrier
    // CHECK-NEXT: mscl.put @ll01
    // CHECK-NEXT: }
    // CHECK-NEXT: }
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.barrier
      mscl.pipeline unit 4096 {
        mscl.copy to <rank 0, output[1]> from <rank 0, output[0]>
        mscl.barrier
        mscl.put @ll01 to <rank 1, pk[0]> from <rank 0, input[2]>
        mscl.barrier
      }
    }
  }
}
