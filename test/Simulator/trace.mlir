// The trace is Chrome trace-event JSON: a track per rank and thread block,
// a slice per operation, flow arrows from signals to waits.
// RUN: mscclc --simulate %S/allreduce-2pa-hb.mlir --schedules 2 --bytes 4K --trace %t.json | FileCheck %s
// RUN: python3 -m json.tool %t.json > /dev/null
// RUN: python3 %S/Inputs/trace_summary.py %t.json | FileCheck %s --check-prefix=TRACE
// CHECK: estimated time {{[0-9.]+}} us at 4 KB
// CHECK: PASS
// TRACE: tracks: (0, 0) (1, 0) (2, 0) (3, 0)
// TRACE: slices per track: 12
// TRACE: ops: barrier put reduce signal wait
// TRACE: flows: 24 starts, 24 finishes, all matched
