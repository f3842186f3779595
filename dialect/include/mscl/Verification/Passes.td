//===- Passes.td - Static verification passes of mscl ------*- tablegen -*-===//

#ifndef MSCL_VERIFICATION_PASSES_TD
#define MSCL_VERIFICATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckSync : Pass<"mscl-check-sync", "mscl::ProgramOp"> {
  let summary = "Proves an mscl.program free of deadlocks and data races";
  let description = [{
    Checks the `mscl.program` it runs on:

    - every signal on a channel has its wait on the other end and every wait
      its signal (counted per channel pair, per iteration inside pipelines);
    - every packet chunk that is read is written by exactly one LL put;
    - an abstract execution of all thread blocks of all ranks runs to the
      end (otherwise: a deadlock, reported with the cycle of blocked
      operations);
    - with vector clocks from that execution: no read of data that a put
      wrote before the wait covering it, no overwrite of a port put's source
      before its flush, no two unordered writes to one chunk, no unordered
      write and read of one chunk.

    Errors point at the operations involved, with notes at the other side.
  }];
}

def CheckCollective : Pass<"mscl-check-collective", "mscl::ProgramOp"> {
  let summary = "Proves that an mscl.program computes its collective";
  let description = [{
    Symbolic execution in the order of the abstract schedule: every chunk
    holds a multiset of contributions (origin rank, input chunk). Copies and
    puts copy it, reductions add multisets, a switch reduce adds the chunk
    over the group. At the end every output chunk of every rank must hold
    exactly what the program's collective requires (AllReduce: every rank's
    chunk i once; AllGather, ReduceScatter, Broadcast, Scatter, AllToAll
    likewise; Reduce and Gather at the root, and no other rank's output may
    be written; custom collectives are skipped with a remark). In-place
    programs are checked through the collective's aliasing of input and
    output.
  }];
}

def CheckLaunches : Pass<"mscl-check-launches", "mscl::ProgramOp"> {
  let summary = "Proves an mscl.program race-free over back-to-back launches";
  let description = [{
    Runs two launches of the `mscl.program` (three when it has packet
    buffers) one after the other on every rank, with what the runtime does
    between them: semaphores keep counting, LL flags are new per launch and
    packet buffers alternate by launch parity, plain scratch and user
    buffers are the same memory, and between two launches of a rank its
    caller reads the output and writes the next input. A rank starts its
    next launch once its own thread blocks ended; nothing else orders it
    after the other ranks. Every access of one launch must be ordered with
    every conflicting access of another (and with the caller's), or an
    error at the later access says which signal and wait would order them.
    Run it after mscl-check-sync and mscl-check-collective, on programs
    they accept.
  }];
}

#endif // MSCL_VERIFICATION_PASSES_TD
