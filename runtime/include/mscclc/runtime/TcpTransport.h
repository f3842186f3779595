//===- TcpTransport.h - Port channels over TCP sockets --------*- C++ -*-===//
//
// A TcpNetwork holds one TCP connection per pair of ranks that talk over
// TCP, made through the bootstrap: every rank listens beside its bootstrap
// socket, the addresses are all-gathered, the lower rank connects and both
// ends open with a PairHello holding the communicator's nonce and secret
// (a connection without them is dropped, as at the bootstrap).
//
// Each connection has a sender thread and a receiver thread. A put is cut
// into slices (MSCCLC_TCP_SLICE_BYTES, default 512 KiB), each sent as a
// data frame: a 32-byte FrameHeader naming a window of the receiver, an
// offset and a length, then the bytes. A signal is a frame naming a
// semaphore and its new value. Frames leave in the order they were queued
// and the receiver handles them in order, so a signal is stored (release)
// only after the data queued before it on that connection was written.
// The receiver checks every header (magic, type, a length of at most one
// slice) and writes only inside a window the receiving rank registered: a
// frame outside one is refused, the connection closed and the refusal
// reported on both sides. A send that makes no progress, or a frame that
// stops half-way, for MSCCLC_TRANSPORT_TIMEOUT seconds (default 120), and
// a connection closed without its closing frame, are errors naming the
// peer rank; they surface from the channels' asyncError() and flush().
//
// Windows are host memory for now. GPU buffers are to be staged through
// pinned host memory: a window kind and a staging copy in the receiver,
// and in the sender before a slice goes out, behind the same interface.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TCPTRANSPORT_H
#define MSCCLC_RUNTIME_TCPTRANSPORT_H

#include "mscclc/runtime/Transport.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace mscclc::rt {

class Bootstrap;

namespace tcpwire {
constexpr uint32_t kFrameMagic = 0x4d535446; // "MSTF"
constexpr uint32_t kPairMagic = 0x4d535450;  // "MSTP"
enum FrameType : uint32_t { kFrameData = 1, kFrameSignal = 2, kFrameClose = 3 };

struct FrameHeader {
  uint32_t magic;
  uint32_t type;
  uint32_t id;       ///< the window (data) or semaphore (signal)
  uint32_t reserved; ///< zero
  uint64_t offset;   ///< data: where in the window
  uint64_t size;     ///< data: bytes that follow; signal: the new value
};
static_assert(sizeof(FrameHeader) == 32, "FrameHeader has padding");

struct PairHello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint8_t secret[32];
};
static_assert(sizeof(PairHello) == 48, "PairHello has padding");

/// Null if `h` is a frame a receiver with slices of at most `maxSlice`
/// bytes may handle, else why not.
const char *checkFrameHeader(const FrameHeader &h, uint64_t maxSlice);
/// Null if `h` opens a connection of the communicator with `nonce` and
/// `secret` from a rank below `nranks`, else why not.
const char *checkPairHello(const PairHello &h, uint64_t nonce,
                           const uint8_t *secret, int nranks);
} // namespace tcpwire

struct TcpOptions {
  uint64_t sliceBytes = 512 * 1024;
  double timeoutSeconds = 120;
};

/// MSCCLC_TCP_SLICE_BYTES (1 KiB to 64 MiB) and MSCCLC_TRANSPORT_TIMEOUT
/// (seconds); an error naming the variable for a value out of range.
Status tcpOptionsFromEnv(TcpOptions *out);

/// What a TCP port channel reads and where it writes.
struct TcpChannelSpec {
  void *src[3] = {}; ///< our input, output, scratch
  uint64_t srcExtent[3] = {};
  uint32_t dstWindow[3] = {}; ///< the peer's windows for them
  uint32_t semaphoreId = 0;   ///< the peer's semaphore its signals raise
};

class TcpConnection;

class TcpNetwork {
public:
  /// Collective: every rank of `bootstrap` calls it, with the peers it
  /// reaches over TCP (if a lists b, b lists a; the list may be empty).
  static Status connect(Bootstrap &bootstrap, const std::vector<int> &peers,
                        const TcpOptions &options,
                        std::unique_ptr<TcpNetwork> *out);
  ~TcpNetwork();
  TcpNetwork(const TcpNetwork &) = delete;
  TcpNetwork &operator=(const TcpNetwork &) = delete;

  /// Lets the peers write `size` bytes at `base` as window `id`; before
  /// any of them puts there (a barrier in between).
  Status registerWindow(uint32_t id, void *base, uint64_t size);
  /// Lets the peers' signals store into `*semaphore` as semaphore `id`.
  Status registerSemaphore(uint32_t id, uint64_t *semaphore);
  /// A port channel to `peer`; it must not outlive the network.
  Status channel(int peer, const TcpChannelSpec &spec,
                 std::unique_ptr<Transport> *out);
  /// The first background error on the connection to `peer`.
  Status peerError(int peer);

  struct Registry;

private:
  TcpNetwork();
  int rank_ = -1;
  TcpOptions options_;
  std::unique_ptr<Registry> registry_;
  std::map<int, std::unique_ptr<TcpConnection>> connections_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TCPTRANSPORT_H
