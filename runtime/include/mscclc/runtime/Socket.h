//===- Socket.h - TCP sockets with deadlines ------------------*- C++ -*-===//
//
// The socket layer the bootstrap (Bootstrap.h) and the TCP transport
// (TcpTransport.h) share: owned descriptors, listen/connect/accept and full
// sends and receives, every wait bounded by a Deadline. Sockets are
// non-blocking; a wait polls until the deadline, so a peer that stops
// answering turns into a Timeout naming what was awaited and the variable
// that sets the budget, and a closed or reset connection into an error.
// Every connection opens with the handshake of BootstrapWire.h: both sides
// prove they know the communicator's secret before anything else is used.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_SOCKET_H
#define MSCCLC_RUNTIME_SOCKET_H

#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Status.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <sys/socket.h>

namespace mscclc::rt::net {

using Clock = std::chrono::steady_clock;
using wire::WireAddr;

/// An owned socket descriptor.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&o) noexcept : fd_(o.release()) {}
  Fd &operator=(Fd &&o) noexcept {
    reset(o.release());
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

private:
  int fd_ = -1;
};

/// When a wait must end, and what to say when it does: "<who>: <what>
/// timed out after <seconds> s (raise <knob> ...)", where <what> says what
/// was being done ("receiving the addresses from the root at ...").
struct Deadline {
  Clock::time_point at;
  double seconds = 0; ///< the budget it was made from
  std::string who;
  const char *knob = "";

  static Deadline in(double seconds, std::string who, const char *knob);
  /// Milliseconds left, 0 once passed (for poll).
  int remainingMs() const;
  Status timeout(const std::string &what) const;
};

/// "<what>: <strerror(errno)>" as a SystemError.
Status errnoStatus(const std::string &what);

socklen_t toSockaddr(const WireAddr &w, sockaddr_storage *ss);
WireAddr fromSockaddr(const sockaddr *sa);
/// "1.2.3.4:5" or "[::1]:5".
std::string describe(const WireAddr &w);
/// The peer of a connected socket, for logs.
std::string peerOf(int fd);

/// O_NONBLOCK and TCP_NODELAY.
Status setNonBlocking(int fd);

/// Waits for `events` on `fd` until the deadline.
Status waitFd(int fd, short events, const Deadline &deadline,
              const std::string &what);
/// Sends all `size` bytes (MSG_NOSIGNAL: a closed peer is an error, not
/// SIGPIPE).
Status sendAll(int fd, const void *data, size_t size, const Deadline &deadline,
               const std::string &what);
/// Receives exactly `size` bytes; the peer closing first is an error
/// ("<what>: the other end closed the connection ...").
Status recvAll(int fd, void *data, size_t size, const Deadline &deadline,
               const std::string &what);

/// A non-blocking listener on `addr` (port 0: any); *bound is its address.
Status listenOn(const WireAddr &addr, Fd *out, WireAddr *bound);
/// Connects, retrying while the listener is not up yet.
Status connectTo(const WireAddr &addr, const Deadline &deadline, Fd *out);

/// The connecting side of a connection's handshake (BootstrapWire.h) on
/// `fd`, connected to `peer` (for messages: "the root at 1.2.3.4:5"):
/// sends a fresh challenge for `purpose` and returns once the answer proves
/// that the acceptor knows `secret` and is `expectedWho`; *session is then
/// ready to prove this side's first message. Where the answer is wrong the
/// error says so, and nothing but the challenge was sent.
Status openHandshake(int fd, const uint8_t *secret, wire::Purpose purpose,
                     uint64_t commNonce, uint32_t expectedWho,
                     const Deadline &deadline, const std::string &peer,
                     wire::Session *session);

/// The accepting side of the handshakes serveFirstFrames answers.
struct Acceptor {
  const uint8_t *secret; ///< kSecretBytes
  wire::Purpose purpose;
  uint64_t commNonce;
  uint32_t who; ///< this side's rank, or wire::kRootWho
};

/// The most bytes an opening frame served by serveFirstFrames may have.
constexpr size_t kMaxFirstFrameBytes = 128;

/// A connection whose handshake and opening frame came in whole.
struct OpenedConnection {
  Fd conn; ///< move it out to keep the connection; else it is closed
  std::string peer;
  const char *frame = nullptr; ///< the opening frame's bytes
  wire::Session session;       ///< to check the frame's proof, and prove
                               ///< what this side answers
};

/// What a FrameHandler makes of a connection: a stranger (dropped, counted
/// and logged with the others), or taken; `done` when nothing more is
/// awaited.
struct Verdict {
  const char *stray = nullptr;
  bool done = false;
};

/// Decides on an opened connection; an error ends the wait.
using FrameHandler = std::function<Status(OpenedConnection &, Verdict *)>;

/// Takes connections on `listener`, answers the handshake each opens with
/// as `acceptor`, then reads its `frameBytes`-byte opening frame, from many
/// connections at once, until `onFrame` says done or the deadline passes.
/// A peer that sends less, or nothing, is dropped after a few seconds of
/// its own (at most 10) without holding up the others; one that closes
/// early, or sends a challenge that is not for this acceptor, at once.
/// Only the frames' bytes are read from anyone: whatever else a peer sends
/// is never buffered. Refused connections are logged once per interval
/// with a count, not one line each.
Status serveFirstFrames(int listener, const Acceptor &acceptor,
                        size_t frameBytes, const Deadline &deadline,
                        const std::string &who, const char *what,
                        const FrameHandler &onFrame);

} // namespace mscclc::rt::net

#endif // MSCCLC_RUNTIME_SOCKET_H
