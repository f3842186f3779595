//===- Bootstrap.cpp - TCP rendezvous among the ranks ---------------------===//
//
// The sockets, deadlines and threads of the rendezvous. The messages and
// their decoders are in BootstrapWire.h; every byte that comes in goes
// through them.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Log.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mscclc::rt {
using namespace wire;
namespace {

using Clock = std::chrono::steady_clock;

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
  void reset(int fd = -1) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

Status errnoStatus(const char *what) {
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

Clock::time_point deadlineFromNow() {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(
                                bootstrapTimeoutSeconds()));
}

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  return left < 0 ? 0 : int(left > 1000000 ? 1000000 : left);
}

Status setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return errnoStatus("fcntl(O_NONBLOCK)");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return Status::ok();
}

/// Waits for `events` on `fd` until the deadline.
Status waitFd(int fd, short events, Clock::time_point deadline,
              const char *what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ms = remainingMs(deadline);
    int r = poll(&p, 1, ms);
    if (r > 0)
      return Status::ok();
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return errnoStatus("poll");
    return Status(Code::Timeout,
                  fmt::format("bootstrap timed out {} (after {:.0f} s; raise "
                              "MSCCLC_BOOTSTRAP_TIMEOUT?)",
                              what, bootstrapTimeoutSeconds()));
  }
}

Status sendAll(int fd, const void *data, size_t size,
               Clock::time_point deadline, const char *what) {
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
    return errnoStatus(fmt::format("send {}", what).c_str());
  }
  return Status::ok();
}

Status recvAll(int fd, void *data, size_t size, Clock::time_point deadline,
               const char *what) {
  auto *p = static_cast<char *>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n > 0) {
      p += n;
      size -= size_t(n);
      continue;
    }
    if (n == 0)
      return systemError(fmt::format("connection closed by peer {}", what));
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      MSCCLC_TRY(waitFd(fd, POLLIN, deadline, what));
      continue;
    }
    return errnoStatus(fmt::format("recv {}", what).c_str());
  }
  return Status::ok();
}

/// Sends `sbuf` on `sfd` while receiving `rbuf` on `rfd`, so a ring of
/// ranks never blocks with every socket buffer full.
/// Sends to the next rank of the ring while receiving from the previous
/// one; errors name the rank whose connection failed.
Status sendRecv(int sfd, const void *sbuf, size_t ssize, int rfd, void *rbuf,
                size_t rsize, Clock::time_point deadline, int nextRank,
                int prevRank) {
  auto *sp = static_cast<const char *>(sbuf);
  auto *rp = static_cast<char *>(rbuf);
  while (ssize > 0 || rsize > 0) {
    pollfd fds[2];
    int n = 0;
    if (ssize > 0)
      fds[n++] = {sfd, POLLOUT, 0};
    if (rsize > 0)
      fds[n++] = {rfd, POLLIN, 0};
    int r = poll(fds, nfds_t(n), remainingMs(deadline));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return errnoStatus("poll");
    if (r == 0)
      return Status(Code::Timeout,
                    fmt::format("bootstrap all-gather timed out: rank {} or "
                                "rank {} (or a rank behind them) stopped "
                                "answering (raise MSCCLC_BOOTSTRAP_TIMEOUT?)",
                                prevRank, nextRank));
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents)
        continue;
      if (fds[i].events == POLLOUT) {
        ssize_t k = ::send(sfd, sp, ssize, MSG_NOSIGNAL);
        if (k > 0) {
          sp += k;
          ssize -= size_t(k);
        } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
          return systemError(fmt::format(
              "bootstrap: sending to rank {} (next in the ring): {} (did its "
              "process die?)",
              nextRank, strerror(errno)));
        }
      } else {
        ssize_t k = ::recv(rfd, rp, rsize, 0);
        if (k > 0) {
          rp += k;
          rsize -= size_t(k);
        } else if (k == 0) {
          return systemError(fmt::format(
              "bootstrap: rank {} (previous in the ring) closed its "
              "connection (did its process die?)",
              prevRank));
        } else if (errno != EAGAIN && errno != EINTR) {
          return systemError(fmt::format(
              "bootstrap: receiving from rank {} (previous in the ring): {} "
              "(did its process die?)",
              prevRank, strerror(errno)));
        }
      }
    }
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
    return errnoStatus(fmt::format("bind {}", describe(addr)).c_str());
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

/// Connects, retrying while the listener is not up yet.
Status connectTo(const WireAddr &addr, Clock::time_point deadline, Fd *out) {
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
      return errnoStatus(fmt::format("connect {}", describe(addr)).c_str());
    if (remainingMs(deadline) == 0)
      return Status(
          Code::Timeout,
          fmt::format("bootstrap: nobody listens at {} after {:.0f} s "
                      "(is the root up? MSCCLC_BOOTSTRAP_TIMEOUT)",
                      describe(addr), bootstrapTimeoutSeconds()));
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    delayMs = delayMs < 100 ? delayMs * 2 : 100;
  }
}

Status acceptFrom(int listener, Clock::time_point deadline, const char *what,
                  Fd *out) {
  for (;;) {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      Fd owned(fd);
      MSCCLC_TRY(setNonBlocking(fd));
      *out = std::move(owned);
      return Status::ok();
    }
    if (errno == EINTR || errno == ECONNABORTED)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return errnoStatus("accept");
    MSCCLC_TRY(waitFd(listener, POLLIN, deadline, what));
  }
}

/// The root: collects one Hello per rank, answers with all addresses.
Status serveRoot(Fd listener, uint64_t nonce) {
  // Longer than the ranks' deadline: a waiting rank reports the time-out
  // itself instead of seeing the root hang up.
  Clock::time_point deadline =
      deadlineFromNow() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(
                                  bootstrapTimeoutSeconds()));
  RootRoster roster(nonce);
  std::vector<Fd> conns;
  while (!roster.complete()) {
    Fd conn;
    MSCCLC_TRY(acceptFrom(listener.get(), deadline,
                          "waiting for ranks at the root", &conn));
    Hello hello;
    // A short deadline per hello: a stray client must not stall the root.
    auto helloDeadline = std::min<Clock::time_point>(
        deadline, Clock::now() + std::chrono::seconds(10));
    bool stray = !recvAll(conn.get(), &hello, sizeof(hello), helloDeadline,
                          "from a rank at the root")
                      .isOk();
    int rank = -1;
    if (!stray)
      MSCCLC_TRY(roster.add(&hello, sizeof(hello), &stray, &rank));
    if (stray) {
      MSCCLC_LOG(Warn, "bootstrap root: dropped a connection with a bad hello");
      continue;
    }
    conns.resize(size_t(roster.nranks()));
    conns[size_t(rank)] = std::move(conn);
  }
  const std::vector<WireAddr> &addrs = roster.addresses();
  for (Fd &conn : conns)
    MSCCLC_TRY(sendAll(conn.get(), addrs.data(),
                       addrs.size() * sizeof(WireAddr), deadline,
                       "addresses from the root"));
  MSCCLC_LOG(Debug, "bootstrap root: {} ranks met", roster.nranks());
  return Status::ok();
}

void startRootThread(Fd listener, uint64_t nonce) {
  std::thread([l = std::move(listener), nonce]() mutable {
    Status s = serveRoot(std::move(l), nonce);
    if (!s.isOk())
      MSCCLC_LOG(Error, "bootstrap root: {}", s.message());
  }).detach();
}

uint64_t randomNonce() {
  std::random_device rd;
  uint64_t n = (uint64_t(rd()) << 32) ^ rd();
  n ^= uint64_t(Clock::now().time_since_epoch().count());
  return n ? n : 1;
}

/// MSCCLC_BOOTSTRAP_ADDR, else the first up non-loopback IPv4 address, else
/// the loopback.
Status defaultRootAddr(WireAddr *out) {
  WireAddr w{};
  w.family = AF_INET;
  if (const char *env = getenv("MSCCLC_BOOTSTRAP_ADDR"); env && *env) {
    if (inet_pton(AF_INET, env, w.addr) == 1) {
      *out = w;
      return Status::ok();
    }
    w.family = AF_INET6;
    if (inet_pton(AF_INET6, env, w.addr) == 1) {
      *out = w;
      return Status::ok();
    }
    return invalidArgument(fmt::format(
        "MSCCLC_BOOTSTRAP_ADDR='{}' is not a numeric IPv4/IPv6 address", env));
  }
  in_addr loop;
  inet_pton(AF_INET, "127.0.0.1", &loop);
  memcpy(w.addr, &loop, 4);
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs *i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
        continue;
      if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
        continue;
      memcpy(w.addr, &reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr,
             4);
      break;
    }
    freeifaddrs(list);
  }
  *out = w;
  return Status::ok();
}

} // namespace

double bootstrapTimeoutSeconds() {
  // Read on every call (setup only): tests and tools may change it.
  const char *env = getenv("MSCCLC_BOOTSTRAP_TIMEOUT");
  double v = env ? atof(env) : 0;
  return v > 0 ? v : 120.0;
}

std::string describeUniqueId(const UniqueId &id) {
  IdLayout l;
  if (!decodeUniqueId(id, &l).isOk())
    return "(not an mscclc unique id)";
  return describe(l.root);
}

Status uniqueIdFromAddress(const std::string &hostPort, UniqueId *id) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= hostPort.size())
    return invalidArgument(
        fmt::format("expected host:port, got '{}'", hostPort));
  std::string host = hostPort.substr(0, colon);
  std::string port = hostPort.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char *end = nullptr;
  long portNum = strtol(port.c_str(), &end, 10);
  if (*end || portNum <= 0 || portNum > 65535)
    return invalidArgument(fmt::format("bad port in '{}'", hostPort));
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    return invalidArgument(
        fmt::format("cannot resolve '{}': {}", host, gai_strerror(rc)));
  WireAddr w = fromSockaddr(res->ai_addr);
  freeaddrinfo(res);
  w.port = htons(uint16_t(portNum));
  memset(id->bytes, 0, sizeof(id->bytes));
  IdLayout l{};
  l.magic = kMagic;
  l.version = kVersion;
  // Every rank derives the same id, so the nonce comes from the address.
  l.nonce = 0x9e3779b97f4a7c15ull ^ (uint64_t(portNum) << 17);
  for (uint8_t b : w.addr)
    l.nonce = (l.nonce ^ b) * 0x100000001b3ull;
  l.flags = kFlagRank0HostsRoot;
  l.root = w;
  memcpy(id->bytes, &l, sizeof(l));
  return Status::ok();
}

Status createUniqueId(UniqueId *id) {
  if (const char *env = getenv("MSCCLC_COMM_ID"); env && *env)
    return uniqueIdFromAddress(env, id);
  WireAddr addr;
  MSCCLC_TRY(defaultRootAddr(&addr));
  addr.port = 0;
  Fd listener;
  WireAddr bound;
  MSCCLC_TRY(listenOn(addr, &listener, &bound));
  memset(id->bytes, 0, sizeof(id->bytes));
  IdLayout l{};
  l.magic = kMagic;
  l.version = kVersion;
  l.nonce = randomNonce();
  l.root = bound;
  memcpy(id->bytes, &l, sizeof(l));
  MSCCLC_LOG(Info, "bootstrap root listening at {}", describe(bound));
  startRootThread(std::move(listener), l.nonce);
  return Status::ok();
}

Status Bootstrap::create(const UniqueId &id, int rank, int nranks,
                         std::unique_ptr<Bootstrap> *out) {
  IdLayout l;
  MSCCLC_TRY(decodeUniqueId(id, &l));
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return invalidArgument(
        fmt::format("rank {} out of range for {} ranks", rank, nranks));
  Clock::time_point deadline = deadlineFromNow();

  if ((l.flags & kFlagRank0HostsRoot) && rank == 0) {
    Fd listener;
    WireAddr bound;
    MSCCLC_TRY(listenOn(l.root, &listener, &bound)
                   .context("rank 0 hosting the bootstrap root"));
    startRootThread(std::move(listener), l.nonce);
  }

  std::unique_ptr<Bootstrap> b(new Bootstrap(rank, nranks));
  b->nonce_ = l.nonce;

  Fd root;
  MSCCLC_TRY(connectTo(l.root, deadline, &root));
  // Listen on the interface that reaches the root.
  sockaddr_storage local;
  socklen_t localLen = sizeof(local);
  if (getsockname(root.get(), reinterpret_cast<sockaddr *>(&local),
                  &localLen) < 0)
    return errnoStatus("getsockname");
  WireAddr mine = fromSockaddr(reinterpret_cast<sockaddr *>(&local));
  mine.port = 0;
  Fd listener;
  WireAddr bound;
  MSCCLC_TRY(listenOn(mine, &listener, &bound));

  Hello hello{kMagic, uint32_t(rank), l.nonce, uint32_t(nranks), bound};
  MSCCLC_TRY(sendAll(root.get(), &hello, sizeof(hello), deadline,
                     "hello to the root"));
  std::vector<char> answer(size_t(nranks) * sizeof(WireAddr));
  MSCCLC_TRY(recvAll(root.get(), answer.data(), answer.size(), deadline,
                     "addresses from the root"));
  std::vector<WireAddr> addrs;
  MSCCLC_TRY(decodeAddresses(answer.data(), answer.size(), nranks, &addrs));
  root.reset();

  if (nranks > 1) {
    Fd next;
    MSCCLC_TRY(connectTo(addrs[size_t((rank + 1) % nranks)], deadline, &next));
    RingHello rh{kMagic, uint32_t(rank), l.nonce};
    MSCCLC_TRY(sendAll(next.get(), &rh, sizeof(rh), deadline,
                       "hello to the next rank"));
    int expected = (rank + nranks - 1) % nranks;
    for (;;) {
      Fd prev;
      MSCCLC_TRY(acceptFrom(listener.get(), deadline,
                            "waiting for the previous rank", &prev));
      RingHello got;
      if (recvAll(prev.get(), &got, sizeof(got), deadline,
                  "hello from the previous rank")
              .isOk() &&
          isRingHelloFrom(&got, sizeof(got), l.nonce, expected)) {
        b->prev_ = prev.release();
        break;
      }
      MSCCLC_LOG(Warn, "bootstrap rank {}: dropped a stray connection", rank);
    }
    b->next_ = next.release();
  }
  MSCCLC_LOG(Debug, "bootstrap rank {}/{} connected", rank, nranks);
  *out = std::move(b);
  return Status::ok();
}

Bootstrap::~Bootstrap() {
  if (next_ >= 0)
    ::close(next_);
  if (prev_ >= 0)
    ::close(prev_);
}

Status Bootstrap::allGather(void *data, size_t bytesPerRank) {
  if (nranks_ == 1 || bytesPerRank == 0)
    return Status::ok();
  Clock::time_point deadline = deadlineFromNow();
  auto *base = static_cast<char *>(data);
  for (int step = 0; step < nranks_ - 1; ++step) {
    int sendIdx = (rank_ - step + nranks_) % nranks_;
    int recvIdx = (rank_ - step - 1 + nranks_) % nranks_;
    MSCCLC_TRY(sendRecv(next_, base + size_t(sendIdx) * bytesPerRank,
                        bytesPerRank, prev_,
                        base + size_t(recvIdx) * bytesPerRank, bytesPerRank,
                        deadline, (rank_ + 1) % nranks_,
                        (rank_ - 1 + nranks_) % nranks_));
  }
  return Status::ok();
}

Status Bootstrap::barrier() {
  std::vector<char> bytes(size_t(nranks_), 1);
  return allGather(bytes.data(), 1);
}

} // namespace mscclc::rt
