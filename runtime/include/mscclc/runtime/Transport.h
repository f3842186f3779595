//===- Transport.h - How a port channel reaches its peer ------*- C++ -*-===//
//
// The proxy (Proxy.h) moves a port channel's puts, signals and flushes
// through a Transport, one per channel, chosen per peer:
//   - the copy engine inside a host (CopyEngineTransport, Proxy.h): CUDA
//     copies and stream memory writes between mapped buffers;
//   - IB verbs across hosts (IbConnection.h), where both ends have a port
//     that registers their GPU memory (findIbReadiness);
//   - "ib staged" across hosts where both have a port but an end's GPU
//     memory does not register: the TCP transport's staged frames
//     (TcpTransport.h) over an RDMA ring (IbRing.h);
//   - TCP sockets otherwise (TcpTransport.h).
// Calls on one Transport come from one thread, in the FIFO's order.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TRANSPORT_H
#define MSCCLC_RUNTIME_TRANSPORT_H

#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <string>

namespace mscclc::rt {

enum class TransportKind { CopyEngine, Tcp, Ib, IbStaged };

/// "copy engine", "tcp", "ib verbs", "ib staged" (for logs).
const char *transportName(TransportKind kind);

/// What a rank can do with IB verbs (findIbReadiness), as the ranks
/// all-gather it.
struct IbAbility {
  bool port = false;      ///< an active port that opens
  bool gpuMemory = false; ///< GPU memory registers on it (dma-buf, peermem)
};

/// The transport between this rank (`mine`) and a peer (`theirs`), from
/// MSCCLC_TRANSPORT:
///   unset, "" or "auto": the copy engine when the peer is on this node;
///                        else IB verbs where both ends have a port that
///                        registers their GPU memory; else ib staged
///                        (IbRing.h) where both have a port; else TCP;
///   "tcp":               TCP, even inside a node;
///   "ib":                IB verbs, or ib staged where an end cannot
///                        register GPU memory, even inside a node; an
///                        Unsupported error where an end has no port (the
///                        communicator refuses to start then, naming the
///                        ranks);
///   anything else:       an error naming the variable and the choices
///                        (matched ignoring case, as every choice is:
///                        docs/settings.md).
/// `*why`, if given, says what decided it (for the log).
Status chooseTransport(bool peerOnSameNode, IbAbility mine, IbAbility theirs,
                       TransportKind *out, std::string *why = nullptr);

/// An error unless MSCCLC_TRANSPORT is unset or one of the choices above.
Status checkTransportVariable();

/// Whether MSCCLC_TRANSPORT lets IB verbs serve any peer, given whether
/// the ranks span several nodes (is it worth finding out if they can).
bool transportMayUseIb(bool severalNodes);

/// Whether MSCCLC_TRANSPORT is "ib": every rank must be ready for it.
bool transportRequiresIb();

/// One side of a put as a transport sees it: whether the buffer the
/// trigger names is mapped for the channel, and its size in bytes.
struct PutBuffer {
  bool mapped = false;
  uint64_t extent = 0;
};

/// The check every transport makes before moving a put's bytes (a trigger
/// is read from GPU memory; a peer's buffers are what it exchanged):
/// buffers 0 to 2, both mapped (`src` and `dst` give each buffer's), and
/// both ranges inside them, without overflow. `channel` and `number` name
/// the channel in an error ("port channel" 3, "tcp port channel to rank"
/// 1); nothing is formatted when the put is good (the proxy's hot path).
Status checkPut(const char *channel, int number, const PutBuffer src[3],
                const PutBuffer dst[3], uint32_t srcBuffer, uint64_t srcOffset,
                uint32_t dstBuffer, uint64_t dstOffset, uint64_t size);

/// One port channel's link to its peer. Buffers are named as in a trigger
/// (docs/kernel-abi.md): 0 input, 1 output, 2 scratch.
class Transport {
public:
  virtual ~Transport() = default;
  virtual TransportKind kind() const = 0;

  /// Queues `size` bytes at `srcOffset` of our buffer `srcBuffer` for
  /// `dstOffset` of the peer's buffer `dstBuffer`; does not wait for them.
  virtual Status put(uint32_t srcBuffer, uint64_t srcOffset, uint32_t dstBuffer,
                     uint64_t dstOffset, uint64_t size) = 0;
  /// Raises the peer's semaphore for this channel to its next value; the
  /// peer sees the new value only after every put queued before it on this
  /// channel has landed.
  virtual Status signal() = 0;
  /// Returns once the sources of every put queued before it may be
  /// overwritten (the copy engine: once they landed).
  virtual Status flush() = 0;
  /// The first error met in the background (a closed connection, a
  /// time-out, a write the peer refused); ok while there is none.
  virtual Status asyncError() = 0;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TRANSPORT_H
