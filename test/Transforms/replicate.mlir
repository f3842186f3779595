// RUN: mscl-opt %s -split-input-file -mscl-replicate | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-replicate | mscl-opt -split-input-file | FileCheck %s
// RUN: mscl-opt %s -split-input-file -mscl-replicate=instances=3 | FileCheck %s --check-prefix=THREE
// RUN: mscl-opt %s -split-input-file -mscl-replicate -mscl-replicate | FileCheck %s
// RUN: not mscl-opt %s -split-input-file -mscl-replicate=instances=5000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: 'mscl.program' op cannot replicate 5000 times; instances must be in 1..4096

// K = 2 from the program. User chunk j -> j*2 + i (ranges split per chunk),
// scratch chunk j of M -> i*M + j (ranges stay), channel ids id*2 + i,
// thread block (group G) b -> b*2 + i*G; switch channels are shared.
// CHECK-LABEL: mscl.program @twice
// CHECK-SAME: chunks = 4 : i64
// CHECK-SAME: input_chunks = 4 : i64
// CHECK-SAME: instances = 1 : i64
// CHECK-SAME: output_chunks = 8 : i64
// CHECK-NEXT: mscl.buffer @input input[4]
// CHECK-NEXT: mscl.buffer @output output[8]
// CHECK-NEXT: mscl.buffer @s scratch[6]
// CHECK-NEXT: mscl.buffer @pk scratch[4] packet
// CHECK-NEXT: mscl.channel @hb01 memory HB 0 -> 1 id 2
// CHECK-NEXT: mscl.channel @hb01_i1 memory HB 0 -> 1 id 3
// CHECK-NEXT: mscl.channel @hb10 memory HB 1 -> 0{{$}}
// CHECK-NEXT: mscl.channel @hb10_i1 memory HB 1 -> 0 id 1
// CHECK-NEXT: mscl.channel @ll01 memory LL 0 -> 1{{$}}
// CHECK-NEXT: mscl.channel @ll01_i1 memory LL 0 -> 1 id 1
// CHECK-NEXT: mscl.switch_channel @sw ranks [0, 1]{{$}}
// CHECK: mscl.rank 0 {
// CHECK-NEXT: mscl.threadblock 0 {
// CHECK-NEXT: mscl.put @hb01 to <rank 1, s[1:3]> from <rank 0, s[0:2]>
// CHECK-NEXT: mscl.copy to <rank 0, output[2]> from <rank 0, input[0]>
// CHECK-NEXT: mscl.copy to <rank 0, output[4]> from <rank 0, input[2]>
// CHECK-NEXT: mscl.pipeline unit 512 {
// CHECK-NEXT: mscl.put @ll01 to <rank 1, pk[0]> from <rank 0, output[0]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.signal [@hb01]
// CHECK-NEXT: mscl.switch_reduce @sw to <rank 0, output[6]> from <rank 0, input[2]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.threadblock 1 {
// CHECK-NEXT: mscl.put @hb01_i1 to <rank 1, s[4:6]> from <rank 0, s[3:5]>
// CHECK-NEXT: mscl.copy to <rank 0, output[3]> from <rank 0, input[1]>
// CHECK-NEXT: mscl.copy to <rank 0, output[5]> from <rank 0, input[3]>
// CHECK-NEXT: mscl.pipeline unit 512 {
// CHECK-NEXT: mscl.put @ll01_i1 to <rank 1, pk[2]> from <rank 0, output[1]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.signal [@hb01_i1]
// CHECK-NEXT: mscl.switch_reduce @sw to <rank 0, output[7]> from <rank 0, input[3]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.threadblock 4 group 2 {
// CHECK-NEXT: mscl.copy to <rank 0, s[2]> from <rank 0, input[0]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.threadblock 6 group 2 {
// CHECK-NEXT: mscl.copy to <rank 0, s[5]> from <rank 0, input[1]>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: mscl.rank 1 {
// CHECK-NEXT: mscl.threadblock 0 {
// CHECK-NEXT: mscl.wait [@hb10]
// CHECK: mscl.threadblock 1 {
// CHECK-NEXT: mscl.wait [@hb10_i1]

// THREE-LABEL: mscl.program @twice
// THREE-SAME: chunks = 6 : i64
// THREE: mscl.channel @hb01_i2 memory HB 0 -> 1 id 5
// THREE: mscl.threadblock 2 {
// THREE-NEXT: mscl.put @hb01_i2 to <rank 1, s[7:9]> from <rank 0, s[6:8]>
// THREE-NEXT: mscl.copy to <rank 0, output[5]> from <rank 0, input[2]>
// THREE: mscl.threadblock 6 group 2
// THREE: mscl.threadblock 8 group 2
// THREE: mscl.threadblock 10 group 2
mscl.program @twice attributes {collective = #mscl.collective<allgather>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 2 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 4 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[4]
  mscl.buffer @s scratch[3]
  mscl.buffer @pk scratch[2] packet
  mscl.channel @hb01 memory HB 0 -> 1 id 1
  mscl.channel @hb10 memory HB 1 -> 0
  mscl.channel @ll01 memory LL 0 -> 1
  mscl.switch_channel @sw ranks [0, 1]
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put @hb01 to <rank 1, s[1:3]> from <rank 0, s[0:2]>
      mscl.copy to <rank 0, output[1:3]> from <rank 0, input[0:2]>
      mscl.pipeline unit 512 {
        mscl.put @ll01 to <rank 1, pk[0]> from <rank 0, output[0]>
      }
      mscl.signal [@hb01]
      mscl.switch_reduce @sw to <rank 0, output[3]> from <rank 0, input[1]>
    }
    mscl.threadblock 2 group 2 {
      mscl.copy to <rank 0, s[2]> from <rank 0, input[0]>
    }
  }
  mscl.rank 1 {
    mscl.threadblock 0 {
      mscl.wait [@hb10]
    }
  }
}

// -----

// instances = 1: nothing changes.
// CHECK-LABEL: mscl.program @once
// CHECK-SAME: chunks = 2 : i64
// CHECK: mscl.channel @hb01 memory HB 0 -> 1{{$}}
// CHECK-NOT: _i1
mscl.program @once attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.signal [@hb01]
    }
  }
}


// -----

// A put_with_signal of a user range splits into puts and one
// put_with_signal on the last chunk: the peer still gets one signal.
// CHECK-LABEL: mscl.program @signal
// CHECK: mscl.threadblock 0 {
// CHECK-NEXT: mscl.put @hb01 to <rank 1, s[0]> from <rank 0, input[0]>
// CHECK-NEXT: mscl.put_with_signal_and_flush @hb01 to <rank 1, s[1]> from <rank 0, input[2]>
// CHECK-NEXT: }
// CHECK-NEXT: mscl.threadblock 1 {
// CHECK-NEXT: mscl.put @hb01_i1 to <rank 1, s[2]> from <rank 0, input[1]>
// CHECK-NEXT: mscl.put_with_signal_and_flush @hb01_i1 to <rank 1, s[3]> from <rank 0, input[3]>
// CHECK-NEXT: }
mscl.program @signal attributes {collective = #mscl.collective<allreduce>,
    ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 2 : i64,
    chunks = 2 : i64, input_chunks = 2 : i64, output_chunks = 2 : i64} {
  mscl.buffer @input input[2]
  mscl.buffer @output output[2]
  mscl.buffer @s scratch[2]
  mscl.channel @hb01 memory HB 0 -> 1
  mscl.rank 0 {
    mscl.threadblock 0 {
      mscl.put_with_signal_and_flush @hb01 to <rank 1, s[0:2]> from <rank 0, input[0:2]>
    }
  }
}
