// Two thread blocks of rank 0 write the same output chunk, unordered.
// RUN: not mscclc --simulate %s --schedules 2 --bytes 64 2>&1 | FileCheck %s
// CHECK: error: write race: rank 0 tb {{[01]}} writes rank 0 output[0] (elements 0..15) while rank 0 tb {{[01]}} writes it too
// CHECK: note: written by mscl.copy of rank 0 tb {{[01]}}
mscl.program @write_race attributes {collective = #mscl.collective<allreduce>,
    ranks = 1 : i64, gpus_per_node = 1 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
    }
    mscl.threadblock 1 {
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
    }
  }
}
