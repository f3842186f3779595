//===- AcrossLaunches.cpp - Two back-to-back launches of one program ------===//
//
// A repeated collective launches the same kernels again on every rank;
// what the runtime does between launches is described once, in
// mscl/IR/MsclLaunches.h, which the simulator models too.
// The model holds that: every block's steps repeated for 2 launches (3
// when the program has packet buffers, so that a half's reuse shows), the
// first step of a launch after every block of its rank ended the previous
// one, counters running on, packet operands of odd launches in their
// parity half. The race detector then finds every unordered pair; since
// one launch alone was race-free, each one found spans two launches.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mscl/IR/MsclLaunches.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

LogicalResult mscl::verify::checkAcrossLaunches(ProgramOp program) {
  ProgramModel model(program, /*pipelineCopies=*/1, launchesToModel(program));
  Scheduler scheduler(model);
  RaceDetector races(model, scheduler);
  bool finished =
      scheduler.run([&](int block, int step) { races.step(block, step); });
  // One launch ran to completion, so the next one does too: its waits
  // consume its own signals, its reads its own packets.
  bool raceFree = races.finish(/*checkVisibility=*/false);
  return success(raceFree && finished);
}

/// A channel from rank `from` to rank `to` that takes signals, if any.
static int signalChannel(const ProgramModel &model, int64_t from, int64_t to) {
  for (int c = 0, e = static_cast<int>(model.channels.size()); c < e; ++c) {
    const ChannelInfo &channel = model.channels[c];
    if (channel.src == from && channel.dst == to && !channel.ll &&
        channel.otherEnd >= 0)
      return c;
  }
  return -1;
}

/// Order of two accesses in the launches: the caller's between launch L-1
/// and L comes before the blocks' accesses of launch L.
static int position(const LaunchAccess &access) {
  return 2 * access.launch - (access.hostRank >= 0 ? 1 : 0);
}

/// The sync that orders rank `from`'s access before rank `to`'s.
static void suggestSignal(InFlightDiagnostic &diag, const ProgramModel &model,
                          int64_t from, int64_t to, llvm::StringRef after,
                          llvm::StringRef before) {
  int signal = signalChannel(model, from, to);
  if (signal >= 0)
    diag << "signal " << model.channelName(signal) << " on rank " << from
         << " " << after << " and wait on "
         << model.channelName(model.channels[signal].otherEnd) << " on rank "
         << to << " " << before;
  else
    diag << "declare a channel from rank " << from << " to rank " << to
         << ", signal it " << after << " and wait for that signal on rank "
         << to << " " << before;
}

/// A pair with the caller of a rank between two launches: a peer's access
/// to the rank's user buffers that may overlap the rank's caller reading
/// the result or writing the next input.
/// What the caller of a rank does with the user buffer of `slot` before
/// its launch `launch` (mscl/IR/MsclLaunches.h).
static const char *callerUse(const ProgramModel &model, int64_t slot,
                             int launch) {
  int64_t rest = slot % model.slotsPerRank;
  for (const BufferInfo &buffer : model.buffers)
    if (rest >= buffer.offset && rest < buffer.offset + buffer.chunks) {
      if (buffer.input)
        return launch == 0 ? "writing the input" : "writing the next input";
      return "using the output (reading the result, reusing the buffer, or "
             "passing it at another count)";
    }
  return "using the buffer";
}

static void reportWithCaller(const ProgramModel &model, int64_t slot,
                             const std::string &chunk,
                             const LaunchAccess &earlier,
                             const LaunchAccess &later) {
  if (later.hostRank >= 0) {
    // The peer's access of the previous launch is the one to move.
    int64_t peer = model.blocks[earlier.block].rank, rank = later.hostRank;
    if (peer == rank) {
      // The rank's own access still open at its end: a port put's source,
      // which the proxy reads after the kernel returned.
      InFlightDiagnostic diag = earlier.op->emitError();
      diag << "this put";
      if (earlier.channel >= 0)
        diag << " on " << model.channelName(earlier.channel);
      diag << " reads " << chunk
           << " through the proxy, which may still be reading it when the "
              "caller of rank "
           << rank << " writes the next launch's input; flush";
      if (earlier.channel >= 0)
        diag << " " << model.channelName(earlier.channel);
      diag << " before the kernel ends";
      return;
    }
    InFlightDiagnostic diag = earlier.op->emitError();
    diag << "this ";
    if (earlier.channel >= 0)
      diag << "put on " << model.channelName(earlier.channel) << " ";
    else
      diag << "access ";
    diag << (earlier.write ? "writes " : "reads ") << chunk
         << " while the caller of rank " << rank << " may already be "
         << callerUse(model, slot, later.launch)
         << ": nothing orders the access before the end of rank " << rank
         << "'s kernel; ";
    suggestSignal(diag, model, peer, rank, "after the access",
                  "before its kernel ends");
    return;
  }
  int64_t rank = earlier.hostRank, peer = model.blocks[later.block].rank;
  InFlightDiagnostic diag = later.op->emitError();
  if (earlier.launch == 0) {
    // The first input: written on the rank's stream before its kernel,
    // which orders it before that kernel only.
    diag << "this ";
    if (later.channel >= 0)
      diag << "put on " << model.channelName(later.channel) << " ";
    else
      diag << "access ";
    diag << (later.write ? "writes " : "reads ") << chunk << " before rank "
         << rank
         << " is known to have started its kernel: its caller may still be "
         << callerUse(model, slot, 0) << " there (on rank " << rank
         << "'s stream, ordered before rank " << rank
         << "'s own kernel only); ";
    suggestSignal(diag, model, rank, peer,
                  "in every launch (e.g. at the start of the kernel)",
                  "before this access");
    return;
  }
  diag << "in the next launch this ";
  if (later.channel >= 0)
    diag << "put on " << model.channelName(later.channel) << " ";
  else
    diag << "access ";
  diag << (later.write ? "writes " : "reads ") << chunk
       << " before rank " << rank
       << " is known to have started that launch: its caller may still be "
       << callerUse(model, slot, earlier.launch) << " there; ";
  suggestSignal(diag, model, rank, peer,
                "in every launch (e.g. at the start of the kernel)",
                "before this access");
}

void mscl::verify::reportAcrossLaunches(const ProgramModel &model,
                                        int64_t slot, const LaunchAccess &a,
                                        const LaunchAccess &b) {
  const LaunchAccess &earlier = position(a) < position(b) ? a : b;
  const LaunchAccess &later = position(a) < position(b) ? b : a;
  std::string chunk = model.slotName(slot);
  if (earlier.hostRank >= 0 || later.hostRank >= 0) {
    reportWithCaller(model, slot, chunk, earlier, later);
    return;
  }
  std::string other = model.blockName(earlier.block);
  int64_t earlyRank = model.blocks[earlier.block].rank;
  int64_t lateRank = model.blocks[later.block].rank;
  if (later.packet) {
    InFlightDiagnostic diag =
        later.op->emitError()
        << "LL put writes packet chunk " << chunk
        << " two launches after a read of it that nothing orders before the "
           "put: "
        << other
        << " may still be reading it there, because packet buffers "
           "alternate by launch parity and a rank can run more than one "
           "launch ahead of ranks it never hears from; rank "
        << earlyRank << " has to signal (or send LL packets) after the read "
        << "and rank " << lateRank
        << " wait for it (or read them) before this put, in every launch";
    diag.attachNote(earlier.op->getLoc())
        << "the read, two launches before (" << other << ")";
    return;
  }
  InFlightDiagnostic diag = later.op->emitError();
  diag << "in the next launch this ";
  if (later.channel >= 0)
    diag << "put on " << model.channelName(later.channel) << " ";
  else
    diag << "access ";
  diag << (later.write ? "writes " : "reads ") << chunk << " while " << other
       << " may still be " << (earlier.write ? "writing" : "reading")
       << " it in the previous launch: a rank starts its next launch once "
          "its own thread blocks finished, and the runtime keeps one copy of "
          "plain scratch and of the user buffers across launches; ";
  suggestSignal(diag, model, earlyRank, lateRank,
                "after its last access of the chunk (or at the start of the "
                "kernel)",
                "before this access");
  diag << ", or move the data through LL packets, whose buffers alternate "
          "between launches";
  diag.attachNote(earlier.op->getLoc())
      << "the " << (earlier.write ? "write" : "read")
      << " in the previous launch (" << other << ")";
}
