// RUN: python3 %S/Inputs/gen_allpairs.py 3 > %t.mlir
// RUN: mscl-opt %t.mlir -mscl-fuse | FileCheck %s --check-prefix=FUSE
// RUN: mscl-opt %t.mlir -mscl-optimize | FileCheck %s --check-prefix=OPT
// RUN: mscl-opt %t.mlir -mscl-optimize=instances=2 | FileCheck %s --check-prefix=TWO
// RUN: mscl-opt %t.mlir -mscl-optimize=instances=2 | mscl-opt -mscl-test-dependence | FileCheck %s --check-prefix=SEP
// RUN: python3 %S/Inputs/gen_allpairs.py 16 4 > %t16.mlir
// RUN: mscl-opt %t16.mlir -mscl-optimize | mscl-opt -mscl-test-dependence | FileCheck %s --check-prefix=SEP
// RUN: mscl-opt %t16.mlir -mscl-replicate -mscl-insert-barriers -mscl-elide-barriers | mscl-opt -mscl-test-dependence > %t.dep16
// RUN: FileCheck %s --check-prefix=SEP < %t.dep16
// RUN: FileCheck %s --check-prefix=HAS < %t.dep16

// The all-pairs all-reduce of Inputs/gen_allpairs.py through the fusions
// and the whole optimisation pipeline.

// The umbrella fuses: signals and waits merged, copy + reduces into one
// reduce, and that reduce with the puts of its result into one reduce_put.
// No barriers yet.
// FUSE-LABEL: mscl.rank 0 {
// FUSE-NEXT: mscl.threadblock 0 {
// FUSE-NEXT: mscl.put @c0_1 to <rank 1, recv[0]> from <rank 0, input[1]>
// FUSE-NEXT: mscl.put @c0_2 to <rank 2, recv[0]> from <rank 0, input[2]>
// FUSE-NEXT: mscl.signal [@c0_1, @c0_2]
// FUSE-NEXT: mscl.wait [@c0_1, @c0_2]
// FUSE-NEXT: mscl.reduce_put [@c0_1 <rank 1, gather[0]>, @c0_2 <rank 2, gather[0]>] from [<rank 0, input[0]>, <rank 0, recv[1]>, <rank 0, recv[2]>] store <rank 0, output[0]>
// FUSE-NEXT: mscl.signal [@c0_1, @c0_2]
// FUSE-NEXT: mscl.wait [@c0_1, @c0_2]
// FUSE-NEXT: mscl.copy to <rank 0, output[1]> from <rank 0, gather[1]>
// FUSE-NEXT: mscl.copy to <rank 0, output[2]> from <rank 0, gather[2]>
// FUSE-NEXT: }

// Every dependence is covered by the implied barriers of signal and wait.
// OPT-LABEL: mscl.rank 2 {
// OPT-NOT: mscl.barrier
// OPT: mscl.reduce_put

// Two instances: blocks 0 and 1, odd user chunks and the second copy of
// each scratch buffer and channel for instance 1.
// TWO-LABEL: mscl.program @allpairs
// TWO-SAME: chunks = 6 : i64
// TWO-LABEL: mscl.rank 1 {
// TWO: mscl.threadblock 1 {
// TWO-NEXT: mscl.put @c1_0_i1 to <rank 0, recv[4]> from <rank 1, input[1]>
// TWO-NEXT: mscl.put @c1_2_i1 to <rank 2, recv[4]> from <rank 1, input[5]>
// TWO: mscl.reduce_put [@c1_0_i1 <rank 0, gather[4]>, @c1_2_i1 <rank 2, gather[4]>] from [<rank 1, input[3]>, <rank 1, recv[3]>, <rank 1, recv[5]>] store <rank 1, output[3]>

// No dependence is left unseparated (and without fusion, there are some).
// SEP-NOT: {{(RAW|WAR|WAW) [0-9]+ <[^>]*>( loop)?"}}
// HAS: {{(RAW|WAR|WAW) [0-9]+ <[^>]*> sep"}}
