// In a pipeline an operation on a run of chunks works one chunk at a time:
// iteration t moves slice t of every chunk of the run (docs/backend.md), and
// the trip count is ceil(ceil(count/K) * sizeof(dtype) / unit).
// RUN: mscclc --simulate --single-launch %s --schedules 20 --bytes 8,1000,8K | FileCheck %s
// RUN: mscclc --simulate --single-launch %s --schedules 1 --bytes 1K --trace %t.json > /dev/null
// RUN: python3 %S/Inputs/trace_summary.py %t.json | FileCheck %s --check-prefix=TRACE
// CHECK: simulation: pipeline_runs, 2 ranks, 20 schedules x 3 sizes: PASS
// 1 KB = 128 elements per rank, 64 per chunk, 16 per 64-byte slice: 4
// iterations of (2 puts + signal + wait) and one copy per block.
// TRACE: slices per track: 17
// One launch only (--single-launch): rank 1's caller may read the output before
// a put landed; the test is of pipeline trip counts.
mscl.program @pipeline_runs attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[4]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.pipeline unit 64 {
        mscl.put @hb_0_1 to <rank 1, output[0:2]> from <rank 0, input[0:2]>
        mscl.signal [@hb_0_1]
        mscl.wait [@hb_0_1]
      }
      mscl.copy to <rank 0, output[0:2]> from <rank 0, input[0:2]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.pipeline unit 64 {
        mscl.put @hb_1_0 to <rank 0, output[2:4]> from <rank 1, input[0:2]>
        mscl.signal [@hb_1_0]
        mscl.wait [@hb_1_0]
      }
      mscl.copy to <rank 1, output[2:4]> from <rank 1, input[0:2]>
    }
  }
}
