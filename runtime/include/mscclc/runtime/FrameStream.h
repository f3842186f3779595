//===- FrameStream.h - The byte streams under the transport's frames -*- C++ -*-===//
//
// A TcpNetwork's connection (TcpTransport.h) sends its frames on a byte
// stream to one peer and receives the peer's from it. The frames, their
// checks (TcpWire.h), the staging ring and the threads are the
// connection's; a FrameStream only moves bytes, in order, each call under a
// deadline:
//   - a TCP socket (socketStream), made by connectSocketStreams;
//   - an RDMA ring over an IB reliable connection (IbRing.h), for ranks
//     whose HCA cannot register GPU memory ("ib staged").
// One thread sends and one thread receives; shutdown() may come from any.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_FRAMESTREAM_H
#define MSCCLC_RUNTIME_FRAMESTREAM_H

#include "mscclc/runtime/Socket.h"
#include "mscclc/runtime/Transport.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mscclc::rt {

class Bootstrap;

class FrameStream {
public:
  virtual ~FrameStream() = default;
  /// Which transport the frames travel by, as the channels report it.
  virtual TransportKind kind() const = 0;
  /// Sends the `bytes` at `data`, all of them, before `deadline`; `what`
  /// names the step in an error.
  virtual Status send(const void *data, uint64_t bytes,
                      const net::Deadline &deadline,
                      const std::string &what) = 0;
  /// Receives exactly `bytes` into `data` before `deadline`.
  virtual Status recv(void *data, uint64_t bytes, const net::Deadline &deadline,
                      const std::string &what) = 0;
  enum class Ready { Nothing, Bytes, Closed };
  /// Waits up to `ms` milliseconds for a byte to receive: Bytes, Nothing
  /// (keep waiting), or Closed, when the peer ended the stream and every
  /// byte it sent was received. An error where the stream broke.
  virtual Status waitReadable(int ms, Ready *out) = 0;
  /// Ends the stream both ways: this end's later calls fail, and the
  /// peer's send fails and its waitReadable sees Closed once it received
  /// what came before.
  virtual void shutdown() = 0;
};

/// One stream per peer rank.
using FrameStreams = std::map<int, std::unique_ptr<FrameStream>>;

/// A connected socket as a stream.
std::unique_ptr<FrameStream> socketStream(net::Fd fd);

/// Collective: every rank of `bootstrap` calls it with the peers it reaches
/// over TCP sockets (if a lists b, b lists a; the list may be empty). Every
/// rank listens beside its bootstrap socket, the addresses are
/// all-gathered, the lower rank of each pair connects, and the connection
/// opens with the handshake of BootstrapWire.h: the higher rank proves it
/// knows the communicator's secret and is the rank expected, then the
/// lower one sends a PairHello with its own proof. A connection that fails
/// either way is refused (and counted in the log).
Status connectSocketStreams(Bootstrap &bootstrap, const std::vector<int> &peers,
                            double timeoutSeconds, FrameStreams *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_FRAMESTREAM_H
