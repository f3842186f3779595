//===- IbRing.h - Frame streams over RDMA rings ("ib staged") -*- C++ -*-===//
//
// Where both ranks of a pair have an active IB port but one of them cannot
// register its GPU memory with its HCA (neither dma-buf nor nvidia-peermem),
// the pair's port channels take the TCP transport's path (TcpTransport.h:
// GPU memory staged through pinned host slots, 32-byte-header frames, every
// check of TcpWire.h) with an RDMA ring under the frames instead of a
// socket. Per pair, over one reliable-connected queue pair (IbConnection):
//   - each end registers host memory the peer writes: a receive ring of
//     IbOptions::ringBytes (MSCCLC_IB_RING_BYTES, 4 MiB) after three control
//     words, the peer's tail, its credit and its closed flag. The places and
//     keys travel over the bootstrap (IbNetwork::exchange);
//   - send() copies the bytes into a local outbox at the offset they take in
//     the peer's ring and RDMA-writes them there (two writes where they
//     wrap), then writes its new tail (the bytes sent so far) into the peer's
//     tail word with an 8-byte inline write. A reliable connection executes
//     writes in order, so the receiver never sees a tail before its bytes;
//   - recv() polls its tail word, copies bytes out of the ring and writes the
//     bytes consumed so far into the sender's credit word: before it waits
//     for more, and after each quarter ring, so a sender never waits for room
//     that was already made;
//   - a sender whose ring is full waits for credit under the call's deadline
//     (MSCCLC_TRANSPORT_TIMEOUT): then a Timeout naming the peer. A failed
//     completion (a peer gone: the connection retries, then fails) is the
//     connection's error, seen by every wait;
//   - shutdown() writes the peer's closed word after everything sent: its
//     receiver sees Closed once it has read the rest. An idle receiver
//     writes its credit again every second, so a peer that vanished while
//     this end only listens shows up as a failed write.
// Ring bytes are copied twice on the host (into the outbox, out of the
// ring), as a socket's are by the kernel; the staging slots are not
// registered.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_IBRING_H
#define MSCCLC_RUNTIME_IBRING_H

#include "mscclc/runtime/FrameStream.h"
#include "mscclc/runtime/IbConnection.h"

namespace mscclc::rt {

/// Collective: every rank of `bootstrap` calls it with the peers it reaches
/// through rings (if a lists b, b lists a; the list may be empty), on `port`.
/// A rank that fails still takes part in every exchange, so each returns:
/// the one that failed with its reason, the others naming it.
Status connectIbRingStreams(Bootstrap &bootstrap, const std::vector<int> &peers,
                            const IbPort &port, const IbOptions &options,
                            FrameStreams *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_IBRING_H
