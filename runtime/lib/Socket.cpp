//===- Socket.cpp - TCP sockets with deadlines and handshakes -------------===//

#include "mscclc/runtime/Socket.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Log.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace mscclc::rt::net {

void Fd::reset(int fd) {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = fd;
}

Deadline Deadline::in(double seconds, std::string who, const char *knob) {
  Deadline d;
  d.at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
  d.seconds = seconds;
  d.who = std::move(who);
  d.knob = knob;
  return d;
}

namespace {
int msUntil(Clock::time_point at) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(at - Clock::now())
          .count();
  return left < 0 ? 0 : int(left > 1000000 ? 1000000 : left);
}
} // namespace

int Deadline::remainingMs() const { return msUntil(at); }

Status Deadline::timeout(const std::string &what) const {
  return Status(Code::Timeout,
                fmt::format("{}: {} timed out after {:.0f} s (raise {} if the "
                            "peers are slow to start)",
                            who, what, seconds, knob));
}

Status errnoStatus(const std::string &what) {
  return systemError(fmt::format("{}: {}", what, strerror(errno)));
}

socklen_t toSockaddr(const WireAddr &w, sockaddr_storage *ss) {
  memset(ss, 0, sizeof(*ss));
  if (w.family == AF_INET6) {
    auto *s6 = reinterpret_cast<sockaddr_in6 *>(ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = w.port;
    memcpy(&s6->sin6_addr, w.addr, 16);
    return sizeof(sockaddr_in6);
  }
  auto *s4 = reinterpret_cast<sockaddr_in *>(ss);
  s4->sin_family = AF_INET;
  s4->sin_port = w.port;
  memcpy(&s4->sin_addr, w.addr, 4);
  return sizeof(sockaddr_in);
}

WireAddr fromSockaddr(const sockaddr *sa) {
  WireAddr w{};
  if (sa->sa_family == AF_INET6) {
    auto *s6 = reinterpret_cast<const sockaddr_in6 *>(sa);
    w.family = AF_INET6;
    w.port = s6->sin6_port;
    memcpy(w.addr, &s6->sin6_addr, 16);
  } else {
    auto *s4 = reinterpret_cast<const sockaddr_in *>(sa);
    w.family = AF_INET;
    w.port = s4->sin_port;
    memcpy(w.addr, &s4->sin_addr, 4);
  }
  return w;
}

std::string describe(const WireAddr &w) {
  char text[INET6_ADDRSTRLEN] = "?";
  inet_ntop(w.family == AF_INET6 ? AF_INET6 : AF_INET, w.addr, text,
            sizeof(text));
  if (w.family == AF_INET6)
    return fmt::format("[{}]:{}", text, unsigned(ntohs(w.port)));
  return fmt::format("{}:{}", text, unsigned(ntohs(w.port)));
}

Status setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return errnoStatus("fcntl(O_NONBLOCK)");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return Status::ok();
}

Status waitFd(int fd, short events, const Deadline &deadline,
              const std::string &what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ms = deadline.remainingMs();
    int r = poll(&p, 1, ms);
    if (r > 0)
      return Status::ok();
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return errnoStatus("poll");
    return deadline.timeout(what);
  }
}

Status sendAll(int fd, const void *data, size_t size, const Deadline &deadline,
               const std::string &what) {
  auto *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      MSCCLC_TRY(waitFd(fd, POLLOUT, deadline, what));
      continue;
    }
    return errnoStatus(fmt::format("send {}", what));
  }
  return Status::ok();
}

Status recvAll(int fd, void *data, size_t size, const Deadline &deadline,
               const std::string &what) {
  auto *p = static_cast<char *>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n > 0) {
      p += n;
      size -= size_t(n);
      continue;
    }
    if (n == 0)
      return systemError(fmt::format(
          "{}: the other end closed the connection (did its process stop, "
          "or refuse this one?)",
          what));
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      MSCCLC_TRY(waitFd(fd, POLLIN, deadline, what));
      continue;
    }
    return errnoStatus(fmt::format("recv {}", what));
  }
  return Status::ok();
}

Status listenOn(const WireAddr &addr, Fd *out, WireAddr *bound) {
  sockaddr_storage ss;
  socklen_t len = toSockaddr(addr, &ss);
  Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0)
    return errnoStatus("socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&ss), len) < 0)
    return errnoStatus(fmt::format("bind {}", describe(addr)));
  if (::listen(fd.get(), 1024) < 0)
    return errnoStatus("listen");
  sockaddr_storage got;
  socklen_t gotLen = sizeof(got);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr *>(&got), &gotLen) < 0)
    return errnoStatus("getsockname");
  *bound = fromSockaddr(reinterpret_cast<sockaddr *>(&got));
  MSCCLC_TRY(setNonBlocking(fd.get()));
  *out = std::move(fd);
  return Status::ok();
}

Status connectTo(const WireAddr &addr, const Deadline &deadline, Fd *out) {
  sockaddr_storage ss;
  socklen_t len = toSockaddr(addr, &ss);
  int delayMs = 1;
  for (;;) {
    Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
      return errnoStatus("socket");
    if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&ss), len) == 0) {
      MSCCLC_TRY(setNonBlocking(fd.get()));
      *out = std::move(fd);
      return Status::ok();
    }
    if (errno != ECONNREFUSED && errno != ETIMEDOUT && errno != EINTR &&
        errno != ENETUNREACH && errno != EAGAIN)
      return errnoStatus(fmt::format("connect {}", describe(addr)));
    if (deadline.remainingMs() == 0)
      return Status(Code::Timeout,
                    fmt::format("{}: nobody listens at {} after {:.0f} s (is "
                                "the peer up? raise {} if it is slow to "
                                "start)",
                                deadline.who, describe(addr), deadline.seconds,
                                deadline.knob));
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    delayMs = delayMs < 100 ? delayMs * 2 : 100;
  }
}

std::string peerOf(int fd) {
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) < 0)
    return "an unknown peer";
  return describe(fromSockaddr(reinterpret_cast<sockaddr *>(&ss)));
}

Status openHandshake(int fd, const uint8_t *secret, wire::Purpose purpose,
                     uint64_t commNonce, uint32_t expectedWho,
                     const Deadline &deadline, const std::string &peer,
                     wire::Session *session) {
  session->secret = secret;
  session->purpose = purpose;
  session->commNonce = commNonce;
  MSCCLC_TRY(randomBytes(session->connectorRandom, wire::kRandomBytes));
  wire::Challenge challenge =
      wire::makeChallenge(purpose, commNonce, session->connectorRandom);
  MSCCLC_TRY(sendAll(fd, &challenge, sizeof(challenge), deadline,
                     fmt::format("sending the handshake to {}", peer)));
  wire::ChallengeAnswer answer;
  MSCCLC_TRY(recvAll(fd, &answer, sizeof(answer), deadline,
                     fmt::format("waiting for {} to answer the handshake",
                                 peer)));
  if (const char *wrong =
          wire::checkChallengeAnswer(answer, expectedWho, session))
    return Status(
        Code::SystemError,
        fmt::format("{}: the process at {} is not the one expected there: "
                    "{}; nothing was sent to it (another program listening "
                    "on that port, a stale process of an earlier run, or "
                    "ranks given different ids or MSCCLC_BOOTSTRAP_SECRET "
                    "values?)",
                    deadline.who, peer, wrong));
  return Status::ok();
}

namespace {

/// Connections whose opening frame has not all come yet: at most this
/// many at once (a flood of connections costs bounded memory; the oldest
/// makes room for a new one).
constexpr size_t kMaxPendingConnections = 64;

/// How often the refused connections are summed up in the log.
constexpr auto kStrangerLogInterval = std::chrono::seconds(10);

/// Refused connections (strangers, and peers that went silent or closed
/// early), logged once per interval with a count: a flood of them makes a
/// line every few seconds, not one each. The first is logged at once, with
/// its reason, since a lone one is more often a misconfigured rank than an
/// attack.
class StrangerLog {
public:
  explicit StrangerLog(const std::string &who) : who_(who) {}
  ~StrangerLog() { report(); }

  void refused(const std::string &peer, const std::string &why) {
    Clock::time_point now = Clock::now();
    if (!anyYet_) {
      anyYet_ = true;
      lastReport_ = now;
      MSCCLC_LOG(Warn,
                 "{}: refused a connection from {}: {} (more refusals are "
                 "counted and logged every {} s)",
                 who_, peer, why, kStrangerLogInterval.count());
      return;
    }
    ++unreported_;
    lastPeer_ = peer;
    lastWhy_ = why;
    if (now - lastReport_ >= kStrangerLogInterval)
      report();
  }

private:
  void report() {
    if (unreported_ == 0)
      return;
    double seconds =
        std::chrono::duration<double>(Clock::now() - lastReport_).count();
    MSCCLC_LOG(Warn,
               "{}: refused {} more connection{} in the last {:.0f} s (the "
               "last from {}: {})",
               who_, unreported_, unreported_ == 1 ? "" : "s", seconds,
               lastPeer_, lastWhy_);
    unreported_ = 0;
    lastReport_ = Clock::now();
  }

  std::string who_;
  bool anyYet_ = false;
  uint64_t unreported_ = 0;
  Clock::time_point lastReport_;
  std::string lastPeer_, lastWhy_;
};

/// A connection on its way through the handshake to its opening frame.
struct PendingConn {
  enum class Awaiting { Challenge, Frame };
  Fd fd;
  std::string peer;
  Clock::time_point due;
  Awaiting awaiting = Awaiting::Challenge;
  size_t got = 0; ///< bytes of what is awaited so far
  wire::Session session;
  char bytes[std::max(kMaxFirstFrameBytes, sizeof(wire::Challenge))];
};

/// Answers a pending connection's complete challenge; null, with the
/// connection then awaiting its frame, or why it is refused.
const char *answerPending(PendingConn &p, const Acceptor &acceptor) {
  uint8_t random[wire::kRandomBytes];
  if (!randomBytes(random, sizeof(random)).isOk())
    return "no random bytes for the answer";
  wire::ChallengeAnswer answer;
  if (const char *stray = wire::answerChallenge(
          p.bytes, sizeof(wire::Challenge), acceptor.secret,
          acceptor.purpose, acceptor.commNonce, acceptor.who, random,
          &p.session, &answer))
    return stray;
  // A new connection's socket buffer is empty: the answer fits at once,
  // and a peer that does not read cannot hold this thread.
  ssize_t n = ::send(p.fd.get(), &answer, sizeof(answer),
                     MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n != ssize_t(sizeof(answer)))
    return "it did not take the handshake's answer";
  p.awaiting = PendingConn::Awaiting::Frame;
  p.got = 0;
  return nullptr;
}

} // namespace

Status serveFirstFrames(int listener, const Acceptor &acceptor,
                        size_t frameBytes, const Deadline &deadline,
                        const std::string &who, const char *what,
                        const FrameHandler &onFrame) {
  if (frameBytes > kMaxFirstFrameBytes)
    return internalError(fmt::format("{}: opening frames of {} bytes, at most "
                                     "{} served",
                                     who, frameBytes, kMaxFirstFrameBytes));
  auto perPeer = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(10.0, deadline.seconds)));
  StrangerLog strangers(who);
  std::deque<PendingConn> pending;
  auto awaitedBytes = [&](const PendingConn &p) {
    return p.awaiting == PendingConn::Awaiting::Challenge
               ? sizeof(wire::Challenge)
               : frameBytes;
  };
  auto drop = [&](size_t i, const std::string &why) {
    const PendingConn &p = pending[i];
    strangers.refused(
        p.peer,
        fmt::format("{} after {} of the {} bytes of its {}", why, p.got,
                    awaitedBytes(p),
                    p.awaiting == PendingConn::Awaiting::Challenge
                        ? "handshake"
                        : "opening frame"));
    pending.erase(pending.begin() + std::ptrdiff_t(i));
  };
  bool done = false;
  while (!done) {
    Clock::time_point now = Clock::now();
    for (size_t i = pending.size(); i-- > 0;)
      if (pending[i].due <= now)
        drop(i, "it went silent");
    if (deadline.remainingMs() == 0)
      return deadline.timeout(what);
    Clock::time_point wake = deadline.at;
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (PendingConn &p : pending) {
      fds.push_back({p.fd.get(), POLLIN, 0});
      wake = std::min(wake, p.due);
    }
    int r = poll(fds.data(), nfds_t(fds.size()), msUntil(wake) + 1);
    if (r < 0 && errno != EINTR)
      return errnoStatus("poll");
    if (r <= 0)
      continue;
    // Frames first (fds[i + 1] is pending[i]'s), from the back, so that
    // erasing keeps the indices still to come right.
    for (size_t i = pending.size(); i-- > 0 && !done;) {
      if (!fds[i + 1].revents)
        continue;
      PendingConn &p = pending[i];
      size_t want = awaitedBytes(p);
      ssize_t n = ::recv(p.fd.get(), p.bytes + p.got, want - p.got, 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        continue;
      if (n <= 0) {
        drop(i, n == 0 ? "it closed the connection" : strerror(errno));
        continue;
      }
      p.got += size_t(n);
      if (p.got < want)
        continue;
      if (p.awaiting == PendingConn::Awaiting::Challenge) {
        if (const char *stray = answerPending(p, acceptor)) {
          strangers.refused(p.peer, stray);
          pending.erase(pending.begin() + std::ptrdiff_t(i));
        }
        continue;
      }
      OpenedConnection opened{std::move(p.fd), std::move(p.peer), p.bytes,
                              p.session};
      Verdict verdict;
      Status s = onFrame(opened, &verdict);
      pending.erase(pending.begin() + std::ptrdiff_t(i));
      MSCCLC_TRY(s);
      if (verdict.stray)
        strangers.refused(opened.peer, verdict.stray);
      done = verdict.done;
    }
    // One new connection per round: the frames that came in meanwhile are
    // read between two accepts, so a flood of connections cannot push a
    // rank's out before its hello is read.
    if (!done && fds[0].revents) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
            errno != ECONNABORTED)
          return errnoStatus("accept");
        continue;
      }
      PendingConn p;
      p.fd = Fd(fd);
      MSCCLC_TRY(setNonBlocking(fd));
      p.peer = peerOf(fd);
      p.due = Clock::now() + perPeer;
      if (pending.size() == kMaxPendingConnections)
        drop(0, fmt::format("{} newer connections came", pending.size()));
      pending.push_back(std::move(p));
    }
  }
  return Status::ok();
}

} // namespace mscclc::rt::net
