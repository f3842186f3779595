// --emit=dot draws clusters per rank and block, program order, data edges
// and signal -> wait edges.
// RUN: mscclc --emit=dot %s | FileCheck %s
// CHECK: digraph "dot_example" {
// CHECK: subgraph cluster_rank0 {
// CHECK: subgraph cluster_r0_tb0 {
// CHECK: n0 [label="put_with_signal @hb_0_1 to <rank 1, output[0]> from <rank 0, input[0]>"];
// CHECK: subgraph cluster_rank1 {
// CHECK-DAG: n0 -> n4 [color=blue, label="@hb_0_1", fontsize=8];
// CHECK-DAG: n0 -> n7;
mscl.program @dot_example attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[1]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[1]
  mscl.channel @hb_0_1 memory HB 0 -> 1
  mscl.channel @hb_1_0 memory HB 1 -> 0
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal @hb_0_1 to <rank 1, output[0]> from <rank 0, input[0]>
      mscl.copy to <rank 0, output[0]> from <rank 0, input[0]>
      mscl.wait [@hb_0_1]
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.put_with_signal @hb_1_0 to <rank 0, output[1]> from <rank 1, input[0]>
      mscl.wait [@hb_1_0]
      mscl.copy to <rank 1, output[1]> from <rank 1, input[0]>
      mscl.barrier
      mscl.copy to <rank 1, s[0]> from <rank 1, output[0]>
    }
  }
}
