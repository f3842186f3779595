//===- MsclLaunches.h - What the runtime does between launches --*- C++ -*-===//
//
// The one description of back-to-back launches of a program, which the
// static proof (mscl-check-launches, dialect/lib/Verification/) and the
// simulator (compiler/lib/Simulator/) both model. A repeated collective
// launches the same kernels again on every rank, on the same buffers and
// count (what a caller changing them does is in docs/verification.md,
// "Across launches"); a rank starts its launch L+1 as soon as its own
// thread blocks ended launch L (its kernels run one after the other on its
// stream), whatever its peers do. Between launches the runtime (docs/runtime.md,
// docs/kernel-abi.md, runtime/lib/Executor.cpp) does exactly this:
// - semaphores and wait counters are never reset: the n-th wait of a
//   channel over the plan's life consumes the n-th signal, so a balanced
//   launch's waits consume that launch's signals;
// - LL flags are the block's epoch + 1, new every launch, and packet
//   buffers are double-buffered by the flag's parity: launches L and L+1
//   use different halves, L and L+2 the same one (launchCopy);
// - plain scratch and the user buffers are one copy, the same memory in
//   every launch;
// - the caller of a rank reads its output and writes its next input
//   between two of its launches (after every block of the rank ended
//   launch L, before any starts L+1); before the first launch it writes
//   the first input. All of it is work on the rank's stream (a kernel, a
//   copy; Executor::launch stages the input there too), ordered before
//   that rank's own kernel only: the runtime orders no peer's kernel after
//   it (its set-up exchanges run on the host), except that a scratch
//   growth outside graph capture drains every rank's device before any
//   rank launches again.
// Two launches, or three with packet buffers (so that a half's reuse two
// launches later shows), exhibit every conflict between launches
// (docs/verification.md, "Across launches").
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_IR_MSCLLAUNCHES_H
#define MSCL_IR_MSCLLAUNCHES_H

#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/STLExtras.h"

namespace mscl {

/// Whether `program` has an LL packet buffer.
inline bool hasPacketBuffers(ProgramOp program) {
  return llvm::any_of(program.getBodyBlock().getOps<BufferOp>(),
                      [](BufferOp buffer) { return buffer.getPacket(); });
}

/// How many back-to-back launches show every conflict between launches:
/// two, three when packet buffers are reused by every other launch.
inline int launchesToModel(bool packetBuffers) {
  return packetBuffers ? 3 : 2;
}
inline int launchesToModel(ProgramOp program) {
  return launchesToModel(hasPacketBuffers(program));
}

/// Copies of a buffer that `launches` back-to-back launches use: packet
/// buffers have two parity halves, every other buffer is one copy.
inline int launchCopies(bool packet, int launches) {
  return packet && launches > 1 ? 2 : 1;
}

/// The copy of a buffer that launch `launch` (0-based) uses: packet buffers
/// alternate by the LL flag's parity, even launches the first half.
inline int launchCopy(bool packet, int launch) {
  return packet ? launch % 2 : 0;
}

/// How many earlier launches used the copy that launch `launch` uses
/// (each LL put writes its packet chunk once per launch).
inline int earlierLaunchesOnCopy(bool packet, int launch) {
  return packet ? launch / 2 : launch;
}

} // namespace mscl

#endif // MSCL_IR_MSCLLAUNCHES_H
