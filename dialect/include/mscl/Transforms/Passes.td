//===- Passes.td - Transformation passes of the mscl dialect -*- tablegen -*-===//

#ifndef MSCL_TRANSFORMS_PASSES_TD
#define MSCL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MsclTestDependence : Pass<"mscl-test-dependence", "mscl::ProgramOp"> {
  let summary = "Prints the dependence analysis as attributes (for tests)";
  let description = [{
    Numbers every operation of each thread block (`dep_id`, in program
    order, pipeline bodies inline) and attaches what the dependence analysis
    found: `dep_reads` / `dep_writes` (the chunks the operation touches,
    `remote` for chunks on another rank) and `dep_in` (one entry per
    incoming RAW/WAR/WAW edge: kind, source id, the overlapping chunk,
    `loop` for an edge from the previous pipeline iteration and `sep` when a
    barrier or implied barrier already separates the two operations).
  }];
}

def MsclInsertBarriers : Pass<"mscl-insert-barriers", "mscl::ProgramOp"> {
  let summary = "Inserts the fewest barriers that separate every dependence";
  let description = [{
    Every RAW, WAR or WAW dependence between two operations of one thread
    block must have an `mscl.barrier`, or an implied barrier of a signal,
    wait or flush, between the two accesses. Walking each block in order,
    a barrier is placed right before an operation that has a dependence on
    an operation not yet separated from it; placing it as late as possible
    makes it separate as many later dependences as possible, which gives the
    fewest barriers (interval stabbing). Pipeline bodies are walked twice,
    the second walk checking the dependences carried from one iteration to
    the next. Existing barriers are kept.
  }];
  let dependentDialects = ["mscl::MsclDialect"];
}

def MsclElideBarriers : Pass<"mscl-elide-barriers", "mscl::ProgramOp"> {
  let summary = "Removes barriers that no dependence needs";
  let description = [{
    Keeps the fewest of the existing `mscl.barrier` ops that still separate
    every dependence the barriers separated before: back-to-back barriers,
    barriers at the start or end of a block, barriers next to a signal, wait
    or flush (which imply one) and barriers with no conflicting accesses
    around them disappear. Each needed separation keeps the latest barrier
    that provides it.
  }];
}

def MsclFuseReducePut : Pass<"mscl-fuse-reduce-put", "mscl::ProgramOp"> {
  let summary = "Fuses a reduce and the puts of its result into reduce_put";
  let description = [{
    `reduce to D from S` followed by puts of exactly `D` on memory channels
    becomes one `mscl.reduce_put` to every peer, placed at the last put.
    The result is still stored to `D` (`store`) unless `D` is a scratch
    chunk that nothing else reads. Puts of one chunk to several peers become
    a one-source `mscl.reduce_put` without a store, which loads the chunk
    once. Operations between them may not touch the chunks involved; only
    data ops and barriers may lie between (no signal, wait, flush or
    pipeline).
  }];
}

def MsclFusePutSignal : Pass<"mscl-fuse-put-signal", "mscl::ProgramOp"> {
  let summary = "Fuses put + signal (+ flush) on one channel";
  let description = [{
    A put immediately followed by a signal on exactly its channel becomes
    `mscl.put_with_signal`; one immediately followed by a flush of that
    channel becomes `mscl.put_with_signal_and_flush`. LL channels, which
    do not signal, are left alone.
  }];
}

def MsclBatchSignals : Pass<"mscl-batch-signals", "mscl::ProgramOp"> {
  let summary = "Splits runs of put_with_signal on HB memory channels";
  let description = [{
    Consecutive `mscl.put_with_signal` ops (or puts each directly followed
    by a signal on exactly its channel) on different HB memory channels
    become the puts followed by one `mscl.signal` on all their channels:
    one implied barrier and one system fence for the whole run instead of
    one per put. A put only moves ahead of signals on other channels, which
    no peer can observe. Port channels keep put_with_signal (one FIFO entry
    per put).
  }];
}

def MsclMergeSync : Pass<"mscl-merge-sync", "mscl::ProgramOp"> {
  let summary = "Merges adjacent signals, waits or flushes into one op";
  let description = [{
    Consecutive `mscl.signal` ops (likewise waits, flushes) on different
    channels become one op listing every channel.
  }];
}

def MsclTestReorderSources
    : Pass<"mscl-test-reorder-sources", "mscl::ProgramOp"> {
  let summary = "Swaps two sources of a reduction (a planted bug, for tests)";
  let description = [{
    Swaps the last two sources of the first `mscl.reduce` of the last rank
    that has one with two or more sources: the program still sums the same
    contributions, in another order, so its ranks may disagree in bits. A
    wrong pass on purpose, to show that translation validation names it.
  }];
}

def MsclMergeReduce : Pass<"mscl-merge-reduce", "mscl::ProgramOp"> {
  let summary = "Merges reduces (read_reduces) into one destination";
  let description = [{
    `reduce to D from S1` followed by `reduce to D from [D, S2...]` becomes
    `reduce to D from S1 ++ S2`; the same for `mscl.read_reduce`, whose
    remote chunks are concatenated too; a chain merges into one op, and a
    copy into D may start it. Operations between them may not touch the
    chunks involved; only data ops and barriers may lie between.
  }];
}

def MsclFuse : Pass<"mscl-fuse", "mscl::ProgramOp"> {
  let summary = "All fusions: merge-reduce, batch-signals, "
                "fuse-reduce-put, fuse-put-signal, merge-sync";
}

def MsclReplicate : Pass<"mscl-replicate", "mscl::ProgramOp"> {
  let summary = "Replicates the program over more thread blocks and chunks";
  let description = [{
    Each thread block becomes `instances` blocks, instance `i` working on its
    own interleaved part of the data: chunk `j` of a user buffer becomes
    chunk `j*K + i`, chunk `j` of a scratch buffer of `M` chunks becomes
    `i*M + j`, so the chunk layout of the user buffers is unchanged. Every
    channel gets K copies (ids `id*K + i`) so each block keeps its own. A
    thread block (group) `b` of size G becomes blocks `b*K + i*G`. Afterwards
    the program says `instances = 1` (it describes every instance now).
  }];
  let options = [
    Option<"instances", "instances", "int64_t", /*default=*/"0",
           "Replication factor (0: the program's `instances` attribute)">
  ];
}

#endif // MSCL_TRANSFORMS_PASSES_TD
