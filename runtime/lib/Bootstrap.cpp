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
#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/Socket.h"

#include <arpa/inet.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
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

/// A deadline of MSCCLC_BOOTSTRAP_TIMEOUT seconds from now for `who`; an
/// error where the variable is malformed.
Status deadlineFromNow(std::string who, Deadline *out) {
  double seconds = 0;
  MSCCLC_TRY(bootstrapTimeout(&seconds));
  *out = Deadline::in(seconds, std::move(who), "MSCCLC_BOOTSTRAP_TIMEOUT");
  return Status::ok();
}

/// Who an all-gather waits on, for its time-out message: both neighbours,
/// or the one rank they are in a ring of two.
std::string neighboursOf(int prevRank, int nextRank) {
  if (prevRank == nextRank)
    return fmt::format("rank {} (both neighbours in the ring)", prevRank);
  return fmt::format("rank {} (previous in the ring) or rank {} (next), or "
                     "a rank behind them,",
                     prevRank, nextRank);
}

/// Sends `sbuf` to the next rank of the ring on `sfd` while receiving
/// `rbuf` from the previous one on `rfd`, so a ring of ranks never blocks
/// with every socket buffer full; errors name the rank whose connection
/// failed.
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
      return Status(
          Code::Timeout,
          fmt::format("{}: an all-gather got no data for {:.0f} s: {} "
                      "stopped answering (raise MSCCLC_BOOTSTRAP_TIMEOUT if "
                      "the ranks are slow to get there)",
                      deadline.who, deadline.seconds,
                      neighboursOf(prevRank, nextRank)));
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

/// A rank's connection at the root, and its handshake (to prove the
/// answer).
struct RankAtRoot {
  Fd conn;
  Session session;
};

/// The root: collects one Hello per rank, answers each with all addresses.
Status serveRoot(Fd listener, const IdLayout &id) {
  std::string who = fmt::format("bootstrap root at {}", describe(id.root));
  Deadline deadline;
  MSCCLC_TRY(deadlineFromNow(who, &deadline));
  // Twice the ranks' deadline: a waiting rank reports the time-out itself
  // instead of seeing the root hang up.
  deadline.at += std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(deadline.seconds));
  RootRoster roster(id.nonce);
  std::vector<RankAtRoot> ranks;
  Acceptor acceptor{id.secret, Purpose::Root, id.nonce, kRootWho};
  MSCCLC_TRY(serveFirstFrames(
      listener.get(), acceptor, sizeof(Hello), deadline, who,
      "waiting for every rank to say hello",
      [&](OpenedConnection &c, Verdict *verdict) {
        int rank = -1;
        MSCCLC_TRY(roster.add(c.session, c.frame, sizeof(Hello),
                              &verdict->stray, &rank)
                       .context(fmt::format("the hello from {}", c.peer)));
        if (verdict->stray)
          return Status::ok();
        ranks.resize(size_t(roster.nranks()));
        ranks[size_t(rank)] = {std::move(c.conn), c.session};
        verdict->done = roster.complete();
        return Status::ok();
      }));
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::vector<char> answer =
        encodeAddresses(roster.addresses(), ranks[r].session);
    MSCCLC_TRY(sendAll(ranks[r].conn.get(), answer.data(), answer.size(),
                       deadline,
                       fmt::format("sending the ranks' addresses to rank {}",
                                   r)));
  }
  MSCCLC_LOG(Debug, "{}: {} ranks met", who, roster.nranks());
  return Status::ok();
}

/// The most roots that createUniqueId keeps waiting for their ranks at
/// once in a process. Each holds a thread and a listening socket until its
/// ranks came or twice MSCCLC_BOOTSTRAP_TIMEOUT passed, so ids made and
/// never used (a loop calling ncclGetUniqueId) must not add up without
/// bound.
constexpr int kMaxWaitingRoots = 256;
std::atomic<int> waitingRoots{0};

/// Counts a root that createUniqueId is about to start; an error once
/// kMaxWaitingRoots are waiting.
Status reserveRoot() {
  int now = waitingRoots.fetch_add(1);
  if (now < kMaxWaitingRoots)
    return Status::ok();
  waitingRoots.fetch_sub(1);
  return Status(
      Code::SystemError,
      fmt::format("bootstrap: {} unique ids of this process are still "
                  "waiting for their ranks (each root waits twice "
                  "MSCCLC_BOOTSTRAP_TIMEOUT for them): make an id only for "
                  "a communicator that is then initialised, or wait for the "
                  "unused ones to expire",
                  kMaxWaitingRoots));
}

/// Runs the root on its own thread; `counted`: it holds one of the
/// reserveRoot() places, given back when it ends.
void startRootThread(Fd listener, const IdLayout &id, bool counted) {
  std::thread([l = std::move(listener), id, counted]() mutable {
    Status s = serveRoot(std::move(l), id);
    if (!s.isOk())
      MSCCLC_LOG(Error, "{}", s.message());
    if (counted)
      waitingRoots.fetch_sub(1);
  }).detach();
}

/// The secret of an id made from an address: HMAC-SHA256 of the address
/// under MSCCLC_BOOTSTRAP_SECRET, so every rank given the same variable
/// derives it, and a root's secret gives away neither the variable nor
/// another root's secret. Without the variable anyone who reaches the
/// address could join: refused unless MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET=1,
/// and then the SHA-256 of the address (a secret anyone can work out).
Status addressSecret(const WireAddr &root, uint8_t out[kSecretBytes]) {
  // The settings module refuses a secret that is certainly not random
  // (docs/settings.md, "Parsing"), without repeating it.
  std::string secret;
  MSCCLC_TRY(get(setting::BootstrapSecret, &secret));
  static_assert(kSecretBytes == kSha256Bytes);
  const std::string message = "mscclc bootstrap secret v3\n" + describe(root);
  if (!secret.empty()) {
    hmacSha256(reinterpret_cast<const uint8_t *>(secret.data()),
               secret.size(), message.data(), message.size(), out);
    return Status::ok();
  }
  bool allowed = false;
  MSCCLC_TRY(get(setting::BootstrapAllowNoSecret, &allowed));
  if (!allowed)
    return invalidArgument(fmt::format(
        "bootstrap: an id made from the address {} needs a secret, else "
        "any process that reaches that address can join the "
        "communicator: set MSCCLC_BOOTSTRAP_SECRET to the same random "
        "value on every rank (e.g. `export MSCCLC_BOOTSTRAP_SECRET=$(openssl "
        "rand -hex 16)` in the launcher), or set "
        "MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET=1 to go without one",
        describe(root)));
  static std::once_flag warned;
  std::call_once(warned, [&] {
    MSCCLC_LOG(Warn,
               "bootstrap: MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET=1 and no "
               "MSCCLC_BOOTSTRAP_SECRET: any process that reaches {} can "
               "join the communicator",
               describe(root));
  });
  Sha256 h;
  h.update(message);
  h.digest(out);
  return Status::ok();
}

/// MSCCLC_BOOTSTRAP_ADDR, else the interface MSCCLC_SOCKET_IFNAME (or
/// NCCL_SOCKET_IFNAME, or the default rule) picks (Interfaces.h).
Status defaultRootAddr(WireAddr *out) {
  WireAddr w{};
  if (std::optional<RawSetting> addr = get(setting::BootstrapAddr)) {
    w.family = AF_INET;
    if (inet_pton(AF_INET, addr->text, w.addr) == 1) {
      *out = w;
      return Status::ok();
    }
    w.family = AF_INET6;
    if (inet_pton(AF_INET6, addr->text, w.addr) == 1) {
      *out = w;
      return Status::ok();
    }
    return invalidArgument(fmt::format("{}='{}': expected {}", addr->name(),
                                       addr->text, addr->info->accepted));
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

Status bootstrapTimeout(double *seconds) {
  // Read on every call (setup only): tests and tools may change it.
  Seconds timeout;
  MSCCLC_TRY(get(setting::BootstrapTimeout, &timeout));
  *seconds = timeout.count();
  return Status::ok();
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
  if (std::optional<RawSetting> commId = get(setting::CommId)) {
    Status s = uniqueIdFromAddress(commId->text, id);
    // Its own messages name neither the variable nor, for a bad secret,
    // the address: say where the address came from.
    if (!s.isOk())
      return Status(s.code(), fmt::format("{}='{}': {}", commId->name(),
                                          commId->text, s.message()));
    return s;
  }
  double seconds = 0;
  MSCCLC_TRY(bootstrapTimeout(&seconds));
  WireAddr addr;
  MSCCLC_TRY(defaultRootAddr(&addr));
  addr.port = 0;
  MSCCLC_TRY(reserveRoot());
  Fd listener;
  WireAddr bound;
  IdLayout l{};
  Status s = listenOn(addr, &listener, &bound);
  if (s.isOk())
    s = randomBytes(&l.nonce, sizeof(l.nonce));
  if (s.isOk())
    s = randomBytes(l.secret, sizeof(l.secret));
  if (!s.isOk()) {
    waitingRoots.fetch_sub(1);
    return s;
  }
  memset(id->bytes, 0, sizeof(id->bytes));
  l.magic = kMagic;
  l.version = kVersion;
  l.root = bound;
  memcpy(id->bytes, &l, sizeof(l));
  MSCCLC_LOG(Info, "bootstrap root listening at {}", describe(bound));
  startRootThread(std::move(listener), l, /*counted=*/true);
  return Status::ok();
}

namespace {

/// Joins at the root: the handshake, this rank's hello, and the root's
/// answer, every rank's listening address.
Status joinAtRoot(const IdLayout &l, int rank, int nranks,
                  const Deadline &deadline, Fd &root, const WireAddr &listening,
                  std::vector<WireAddr> *addrs) {
  std::string atRoot = fmt::format("the root at {}", describe(l.root));
  Session session;
  MSCCLC_TRY(openHandshake(root.get(), l.secret, Purpose::Root, l.nonce,
                           kRootWho, deadline, atRoot, &session));
  Hello hello{kMagic, uint32_t(rank), l.nonce, uint32_t(nranks), listening,
              {}};
  session.proveMessage(&hello, sizeof(hello));
  MSCCLC_TRY(sendAll(root.get(), &hello, sizeof(hello), deadline,
                     fmt::format("sending this rank's hello to {}", atRoot)));
  std::vector<char> answer(size_t(nranks) * sizeof(WireAddr) + kProofBytes);
  MSCCLC_TRY(recvAll(
      root.get(), answer.data(), answer.size(), deadline,
      fmt::format("receiving the {} ranks' addresses from {}", nranks,
                  atRoot)));
  return decodeAddresses(answer.data(), answer.size(), nranks, session, addrs);
}

/// Connects to the next rank of the ring at `where`: the handshake, then
/// this rank's ring hello.
Status connectToNext(const IdLayout &l, int rank, int nranks,
                     const WireAddr &where, const Deadline &deadline,
                     Fd *next) {
  int nextRank = (rank + 1) % nranks;
  std::string peer = fmt::format("rank {} at {}", nextRank, describe(where));
  MSCCLC_TRY(connectTo(where, deadline, next));
  Session session;
  MSCCLC_TRY(openHandshake(next->get(), l.secret, Purpose::Ring, l.nonce,
                           uint32_t(nextRank), deadline, peer, &session));
  RingHello hello{kMagic, uint32_t(rank), l.nonce, {}};
  session.proveMessage(&hello, sizeof(hello));
  return sendAll(next->get(), &hello, sizeof(hello), deadline,
                 fmt::format("sending the ring hello to {}", peer));
}

/// Takes the previous rank's connection on `listener`, dropping strangers.
Status acceptPrevious(const IdLayout &l, int rank, int nranks, int listener,
                      const Deadline &deadline, Fd *prev) {
  int expected = (rank + nranks - 1) % nranks;
  Acceptor acceptor{l.secret, Purpose::Ring, l.nonce, uint32_t(rank)};
  return serveFirstFrames(
      listener, acceptor, sizeof(RingHello), deadline, deadline.who,
      fmt::format("waiting for rank {} (previous in the ring) to connect",
                  expected)
          .c_str(),
      [&](OpenedConnection &c, Verdict *verdict) {
        verdict->stray = checkRingHello(c.frame, sizeof(RingHello),
                                        c.session, l.nonce, expected);
        if (verdict->stray)
          return Status::ok();
        *prev = std::move(c.conn);
        verdict->done = true;
        return Status::ok();
      });
}

} // namespace

Status Bootstrap::create(const UniqueId &id, int rank, int nranks,
                         std::unique_ptr<Bootstrap> *out) {
  // Before anything is allocated per rank.
  if (nranks < 1 || uint32_t(nranks) > kMaxRanks)
    return invalidArgument(fmt::format(
        "bootstrap: {} ranks: a communicator has 1 to {} ranks", nranks,
        kMaxRanks));
  if (rank < 0 || rank >= nranks)
    return invalidArgument(
        fmt::format("rank {} out of range for {} ranks", rank, nranks));
  IdLayout l;
  MSCCLC_TRY(decodeUniqueId(id, &l));
  Deadline deadline;
  MSCCLC_TRY(deadlineFromNow(fmt::format("bootstrap rank {}", rank),
                             &deadline));

  if ((l.flags & kFlagRank0HostsRoot) && rank == 0) {
    Fd listener;
    WireAddr bound;
    MSCCLC_TRY(listenOn(l.root, &listener, &bound)
                   .context("rank 0 hosting the bootstrap root (is another "
                            "process listening on that port?)"));
    startRootThread(std::move(listener), l, /*counted=*/false);
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
  std::vector<WireAddr> addrs;
  MSCCLC_TRY(joinAtRoot(l, rank, nranks, deadline, root, bound, &addrs));
  root.reset();

  if (nranks > 1) {
    // Every rank connects to its next one while taking its previous one:
    // each waits for the other's answer, so neither may wait for the
    // other side to finish first.
    Fd next, prev;
    Status connected;
    std::thread connector([&] {
      connected = connectToNext(l, rank, nranks,
                                addrs[size_t((rank + 1) % nranks)], deadline,
                                &next);
      // A failed connection fails the ring: stop waiting for the previous
      // rank too (accept then fails at once) instead of until the deadline.
      if (!connected.isOk())
        ::shutdown(listener.get(), SHUT_RDWR);
    });
    Status accepted =
        acceptPrevious(l, rank, nranks, listener.get(), deadline, &prev);
    connector.join();
    MSCCLC_TRY(connected);
    MSCCLC_TRY(accepted);
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
  Deadline deadline;
  MSCCLC_TRY(deadlineFromNow(fmt::format("bootstrap rank {}", rank_),
                             &deadline));
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
