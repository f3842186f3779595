//===- Bootstrap.cpp - TCP rendezvous among the ranks ---------------------===//
//
// The rendezvous's connections, deadlines and threads, on the sockets of
// Socket.h. The messages and their decoders are in BootstrapWire.h; every
// byte that comes in goes through them.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/runtime/Interfaces.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Socket.h"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mscclc::rt {
using namespace wire;
namespace {

using namespace net;

Deadline deadlineFromNow() {
  return Deadline::in(bootstrapTimeoutSeconds(), "bootstrap",
                      "MSCCLC_BOOTSTRAP_TIMEOUT");
}

/// Sends `sbuf` on `sfd` while receiving `rbuf` on `rfd`, so a ring of
/// ranks never blocks with every socket buffer full.
/// Sends to the next rank of the ring while receiving from the previous
/// one; errors name the rank whose connection failed.
Status sendRecv(int sfd, const void *sbuf, size_t ssize, int rfd, void *rbuf,
                size_t rsize, const Deadline &deadline, int nextRank,
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
    int r = poll(fds, nfds_t(n), deadline.remainingMs());
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

/// The root: collects one Hello per rank, answers with all addresses.
Status serveRoot(Fd listener, uint64_t nonce,
                 const std::array<uint8_t, kSecretBytes> &secret) {
  // Longer than the ranks' deadline: a waiting rank reports the time-out
  // itself instead of seeing the root hang up.
  Deadline deadline = deadlineFromNow();
  deadline.at += std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(bootstrapTimeoutSeconds()));
  RootRoster roster(nonce, secret.data());
  std::vector<Fd> conns;
  MSCCLC_TRY(serveFirstFrames(
      listener.get(), sizeof(Hello), deadline, "bootstrap root",
      "waiting for ranks at the root",
      [&](Fd &conn, const char *frame, const std::string &peer, bool *done) {
        const char *stray = nullptr;
        int rank = -1;
        MSCCLC_TRY(roster.add(frame, sizeof(Hello), &stray, &rank)
                       .context(fmt::format("the hello from {}", peer)));
        if (stray) {
          MSCCLC_LOG(Warn, "bootstrap root: dropped a connection from {}: {}",
                     peer, stray);
          return Status::ok();
        }
        conns.resize(size_t(roster.nranks()));
        conns[size_t(rank)] = std::move(conn);
        *done = roster.complete();
        return Status::ok();
      }));
  const std::vector<WireAddr> &addrs = roster.addresses();
  for (Fd &conn : conns)
    MSCCLC_TRY(sendAll(conn.get(), addrs.data(),
                       addrs.size() * sizeof(WireAddr), deadline,
                       "addresses from the root"));
  MSCCLC_LOG(Debug, "bootstrap root: {} ranks met", roster.nranks());
  return Status::ok();
}

void startRootThread(Fd listener, const IdLayout &id) {
  std::array<uint8_t, kSecretBytes> secret;
  memcpy(secret.data(), id.secret, kSecretBytes);
  std::thread([l = std::move(listener), nonce = id.nonce, secret]() mutable {
    Status s = serveRoot(std::move(l), nonce, secret);
    if (!s.isOk())
      MSCCLC_LOG(Error, "bootstrap root: {}", s.message());
  }).detach();
}

/// The shortest MSCCLC_BOOTSTRAP_SECRET taken: 32 characters hold 128
/// random bits as hex digits.
constexpr size_t kMinEnvSecretChars = 32;

/// The secret of an id made from an address: the SHA-256 of the address
/// and MSCCLC_BOOTSTRAP_SECRET, so every rank given the same variable
/// derives it, and a secret seen on the wire of one root gives away neither
/// the variable nor another root's secret. Without the variable it follows
/// from the address alone: anyone who reaches the root can join, which is
/// said once per process.
Status addressSecret(const WireAddr &root, uint8_t out[kSecretBytes]) {
  const char *env = getenv("MSCCLC_BOOTSTRAP_SECRET");
  Sha256 h;
  h.field("mscclc bootstrap secret v2");
  h.field(describe(root));
  if (env && *env) {
    size_t length = strlen(env);
    if (length < kMinEnvSecretChars)
      return invalidArgument(fmt::format(
          "MSCCLC_BOOTSTRAP_SECRET has {} characters, at least {} expected "
          "(128 random bits, e.g. from `openssl rand -hex 16`)",
          length, kMinEnvSecretChars));
    h.field(std::string(env, length));
  } else {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      MSCCLC_LOG(Warn,
                 "bootstrap: MSCCLC_BOOTSTRAP_SECRET is not set: any process "
                 "that reaches {} can join the communicator (have the "
                 "launcher set it to the same random value on every rank)",
                 describe(root));
    });
  }
  h.digest(out);
  return Status::ok();
}

/// MSCCLC_BOOTSTRAP_ADDR, else the interface MSCCLC_SOCKET_IFNAME (or
/// NCCL_SOCKET_IFNAME, or the default rule) picks (Interfaces.h).
Status defaultRootAddr(WireAddr *out) {
  WireAddr w{};
  if (const char *env = getenv("MSCCLC_BOOTSTRAP_ADDR"); env && *env) {
    w.family = AF_INET;
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
  const char *variable = nullptr;
  const char *spec = socketIfnameSpec(&variable);
  return chooseListenAddress(spec, variable, out);
}

/// Where a rank listens for the ring: on the interface MSCCLC_SOCKET_IFNAME
/// (or NCCL_SOCKET_IFNAME) picks, else on the one that reaches the root.
Status rankListenAddr(int rootConn, WireAddr *out) {
  const char *variable = nullptr;
  if (const char *spec = socketIfnameSpec(&variable))
    return chooseListenAddress(spec, variable, out);
  sockaddr_storage local;
  socklen_t localLen = sizeof(local);
  if (getsockname(rootConn, reinterpret_cast<sockaddr *>(&local), &localLen) <
      0)
    return errnoStatus("getsockname");
  *out = fromSockaddr(reinterpret_cast<sockaddr *>(&local));
  out->port = 0;
  return Status::ok();
}

} // namespace

Status randomBytes(void *out, size_t size) {
  auto *p = static_cast<char *>(out);
  size_t got = 0;
  while (got < size) {
    ssize_t n = getrandom(p + got, size - got, 0);
    if (n > 0) {
      got += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == ENOSYS)
      break;
    return errnoStatus("getrandom");
  }
  if (got == size)
    return Status::ok();
  Fd dev(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (dev.get() < 0)
    return errnoStatus("no random source: getrandom is missing, and opening "
                       "/dev/urandom");
  while (got < size) {
    ssize_t n = ::read(dev.get(), p + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return errnoStatus("reading /dev/urandom");
    got += size_t(n);
  }
  return Status::ok();
}

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
  MSCCLC_TRY(addressSecret(w, l.secret));
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
  MSCCLC_TRY(randomBytes(&l.nonce, sizeof(l.nonce)));
  MSCCLC_TRY(randomBytes(l.secret, sizeof(l.secret)));
  l.root = bound;
  memcpy(id->bytes, &l, sizeof(l));
  MSCCLC_LOG(Info, "bootstrap root listening at {}", describe(bound));
  startRootThread(std::move(listener), l);
  return Status::ok();
}

Status Bootstrap::create(const UniqueId &id, int rank, int nranks,
                         std::unique_ptr<Bootstrap> *out) {
  IdLayout l;
  MSCCLC_TRY(decodeUniqueId(id, &l));
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return invalidArgument(
        fmt::format("rank {} out of range for {} ranks", rank, nranks));
  Deadline deadline = deadlineFromNow();

  if ((l.flags & kFlagRank0HostsRoot) && rank == 0) {
    Fd listener;
    WireAddr bound;
    MSCCLC_TRY(listenOn(l.root, &listener, &bound)
                   .context("rank 0 hosting the bootstrap root"));
    startRootThread(std::move(listener), l);
  }

  std::unique_ptr<Bootstrap> b(new Bootstrap(rank, nranks));
  b->nonce_ = l.nonce;
  static_assert(sizeof(b->secret_) == kSecretBytes);
  memcpy(b->secret_.data(), l.secret, kSecretBytes);

  Fd root;
  MSCCLC_TRY(connectTo(l.root, deadline, &root));
  WireAddr mine;
  MSCCLC_TRY(rankListenAddr(root.get(), &mine));
  Fd listener;
  WireAddr bound;
  MSCCLC_TRY(listenOn(mine, &listener, &bound));
  b->listenAddr_ = std::make_unique<WireAddr>(mine);

  Hello hello{kMagic, uint32_t(rank), l.nonce, uint32_t(nranks), bound, {}};
  memcpy(hello.secret, l.secret, kSecretBytes);
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
    RingHello rh{kMagic, uint32_t(rank), l.nonce, {}};
    memcpy(rh.secret, l.secret, kSecretBytes);
    MSCCLC_TRY(sendAll(next.get(), &rh, sizeof(rh), deadline,
                       "hello to the next rank"));
    int expected = (rank + nranks - 1) % nranks;
    std::string who = fmt::format("bootstrap rank {}", rank);
    Fd prev;
    MSCCLC_TRY(serveFirstFrames(
        listener.get(), sizeof(RingHello), deadline, who.c_str(),
        "waiting for the previous rank",
        [&](Fd &conn, const char *frame, const std::string &peer,
            bool *done) {
          if (const char *stray = checkRingHello(frame, sizeof(RingHello),
                                                 l.nonce, l.secret, expected)) {
            MSCCLC_LOG(Warn, "{}: dropped a connection from {}: {}", who,
                       peer, stray);
            return Status::ok();
          }
          prev = std::move(conn);
          *done = true;
          return Status::ok();
        }));
    b->prev_ = prev.release();
    b->next_ = next.release();
  }
  MSCCLC_LOG(Debug, "bootstrap rank {}/{} connected", rank, nranks);
  *out = std::move(b);
  return Status::ok();
}

Bootstrap::Bootstrap(int rank, int nranks) : rank_(rank), nranks_(nranks) {}

const wire::WireAddr &Bootstrap::listenAddress() const { return *listenAddr_; }

Bootstrap::~Bootstrap() {
  if (next_ >= 0)
    ::close(next_);
  if (prev_ >= 0)
    ::close(prev_);
}

Status Bootstrap::allGather(void *data, size_t bytesPerRank) {
  if (nranks_ == 1 || bytesPerRank == 0)
    return Status::ok();
  Deadline deadline = deadlineFromNow();
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
