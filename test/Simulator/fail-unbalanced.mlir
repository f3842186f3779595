// Two signals meet one wait: the next launch would start with a stale
// semaphore count. The error is at the second signal, the one no wait
// consumes, not at the first (which is matched).
// RUN: not mscclc --simulate %s --schedules 2 --bytes 64 2>&1 | FileCheck %s
// CHECK: fail-unbalanced.mlir:[[@LINE+11]]:7: error: unbalanced semaphore: 2 signal(s) on @hb_0_1 but 1 wait(s) on its other end @hb_1_0
mscl.program @unbalanced attributes {collective = #mscl.collective<custom>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[1]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.signal [@hb_0_1]
      mscl.signal [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@hb_1_0]
    }
  }
}
