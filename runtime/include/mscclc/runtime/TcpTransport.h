//===- TcpTransport.h - Port channels over staged frames ------*- C++ -*-===//
//
// A TcpNetwork holds one connection per pair of ranks whose port channels
// travel as staged frames, each over a byte stream (FrameStream.h):
//   - a TCP socket ("tcp"), made through the bootstrap: every rank listens
//     beside its bootstrap socket, the addresses are all-gathered, the lower
//     rank connects and both ends prove they know the communicator's
//     secret in a handshake (BootstrapWire.h) before a frame is sent (a
//     connection that cannot is dropped, as at the bootstrap);
//   - an RDMA ring over an IB reliable connection ("ib staged", IbRing.h),
//     where both ranks have an IB port but one cannot register its GPU
//     memory with it.
// Everything below is the same over both: the frames, their checks, the
// staging, the threads, the time-outs and the drains. (The classes keep
// the name of their first carrier.)
//
// Each connection has a sender thread and a receiver thread. A put is cut
// into slices (MSCCLC_TCP_SLICE_BYTES, default 512 KiB), each sent as a
// data frame: a 32-byte FrameHeader naming an address in the receiver's
// space and a length, then the bytes. A signal is a frame naming the
// address of one of the receiver's semaphores and its new value. Frames
// leave in the order they were queued and the receiver handles them in
// order, so a signal is stored only after the data queued before it on
// that connection was written. The receiver checks every header (magic,
// type, a length of at most one slice) and writes only inside a window the
// receiving rank registered (TcpWire.h: data into data windows, signals into
// semaphore windows): a frame outside one is refused, the connection
// closed and the refusal reported on both sides. A send that makes no
// progress, or a frame that stops half-way, for MSCCLC_TRANSPORT_TIMEOUT
// seconds (default 120), and a connection closed without its closing
// frame, are errors naming the peer rank; they surface from the channels'
// asyncError() and flush().
//
// GPU memory is staged through pinned host memory, a ring of slices per
// connection and direction (TcpStaging): the sender copies a slice from
// the device into a free send slot and the sender thread sends it once
// the copy is done; the receiver reads a slice into a receive slot and
// copies it to the device, reusing the slot once that copy is done, so
// copies and the socket overlap. A signal into device memory is an 8-byte
// copy queued after the slices' copies on the same stream
// (StagingCopier::store).
//
// drain() settles the connections before a reset: each end sends a drain
// frame, and the receiver counts it once the frames before it landed.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TCPTRANSPORT_H
#define MSCCLC_RUNTIME_TCPTRANSPORT_H

#include "mscclc/runtime/FrameStream.h"
#include "mscclc/runtime/Transport.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace mscclc::rt {

class Bootstrap;

/// Where a window or a channel's source lives.
enum class MemoryKind { Host, Device };

/// Moves staged slices between pinned host memory and a device, in the
/// order queued, in the background (a CUDA stream; tests: plain memory).
/// Calls may come from several threads.
class StagingCopier {
public:
  virtual ~StagingCopier() = default;
  /// Queues a copy of `size` bytes; `*ticket` names it for done()/wait().
  virtual Status copy(void *dst, const void *src, uint64_t size,
                      uint64_t *ticket) = 0;
  /// Queues a store of `value` into the device word at `address`, after
  /// every copy queued before it.
  virtual Status store(uint64_t *address, uint64_t value) = 0;
  /// A ticket for wait() that is done once every copy and store queued
  /// before it is.
  virtual Status fence(uint64_t *ticket) = 0;
  /// Blocks until copy (or fence) `ticket` and every earlier one are done.
  virtual Status wait(uint64_t ticket) = 0;
};

/// What device memory needs: pinned staging memory and copiers.
class StagingBackend {
public:
  virtual ~StagingBackend() = default;
  virtual Status allocate(size_t bytes, void **out) = 0;
  virtual void release(void *p) = 0;
  /// A copier on `stream` (null: one of its own).
  virtual Status copier(void *stream, std::unique_ptr<StagingCopier> *out) = 0;
  /// Makes the calling thread ready for the copiers (the device current).
  virtual void bindThread() = 0;
};

struct TcpOptions {
  uint64_t sliceBytes = 512 * 1024;
  double timeoutSeconds = 120;
  /// Slices in flight per connection and direction with device memory.
  unsigned stagingSlots = 8;
  /// Null: host memory only; a device window or channel is refused.
  std::shared_ptr<StagingBackend> staging;
};

/// MSCCLC_TCP_SLICE_BYTES and MSCCLC_TRANSPORT_TIMEOUT (Settings.def); an
/// error naming the variable, the value and the range for a bad value.
Status tcpOptionsFromEnv(TcpOptions *out);

/// What a TCP port channel reads and where it writes.
struct TcpChannelSpec {
  void *src[3] = {}; ///< our input, output, scratch
  uint64_t srcExtent[3] = {};
  MemoryKind srcKind = MemoryKind::Host;
  /// Device sources: the copier that stages them (not owned), whose order
  /// is the channel's.
  StagingCopier *copier = nullptr;
  /// The peer's input, output, scratch, as addresses in its space (0: not
  /// reachable), and their sizes.
  uint64_t dst[3] = {};
  uint64_t dstExtent[3] = {};
  uint64_t semaphore = 0; ///< the peer's semaphore its signals raise
  /// Signals sent on this channel so far, shared by every link of one
  /// plan channel (they raise the same semaphore); null: the link's own.
  uint64_t *counter = nullptr;
};

class TcpConnection;

class TcpNetwork {
public:
  /// Collective: every rank of `bootstrap` calls it, with the peers it
  /// reaches over TCP (if a lists b, b lists a; the list may be empty):
  /// connectSocketStreams, then over().
  static Status connect(Bootstrap &bootstrap, const std::vector<int> &peers,
                        const TcpOptions &options,
                        std::unique_ptr<TcpNetwork> *out);
  /// The network of `rank` over `streams`, one per peer, whatever carries
  /// them (sockets, IB rings); not collective.
  static Status over(int rank, FrameStreams streams, const TcpOptions &options,
                     std::unique_ptr<TcpNetwork> *out);
  ~TcpNetwork();
  TcpNetwork(const TcpNetwork &) = delete;
  TcpNetwork &operator=(const TcpNetwork &) = delete;

  /// Lets the peers write the `size` bytes at `base`, before any of them
  /// puts there; `*handle` names the window for unregister().
  Status registerWindow(void *base, uint64_t size, MemoryKind kind,
                        uint32_t *handle);
  /// Lets the peers' signals store into the `count` words at `base`.
  Status registerSemaphores(uint64_t *base, uint64_t count, MemoryKind kind,
                            uint32_t *handle);
  /// Ends a window: frames for it are refused from then on. Frames being
  /// handled still land; wait for the device before freeing it.
  void unregister(uint32_t handle);
  /// A port channel to `peer`; it must not outlive the network.
  Status channel(int peer, const TcpChannelSpec &spec,
                 std::unique_ptr<Transport> *out);
  /// The first background error on the connection to `peer`.
  Status peerError(int peer);
  /// Collective between this rank and each of `peers` (each calls it with
  /// this rank among its peers): returns once every frame each peer queued
  /// before its call has landed here, device copies and stores included
  /// (a drain frame each way). A reset drains before it zeroes what late
  /// frames would write. A peer that does not drain within the time-out
  /// is an error naming it.
  Status drain(const std::vector<int> &peers);
  /// The peers this network reaches.
  std::vector<int> peers() const;
  const TcpOptions &options() const { return options_; }

  struct Registry;

private:
  TcpNetwork();
  /// The connection to `peer`, or an error naming both ranks.
  Status connectionTo(int peer, TcpConnection **out) const;
  int rank_ = -1;
  TcpOptions options_;
  std::unique_ptr<Registry> registry_;
  std::map<int, std::unique_ptr<TcpConnection>> connections_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TCPTRANSPORT_H
