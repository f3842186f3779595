//===- FrameStream.cpp - TCP sockets as frame streams ---------------------===//

#include "mscclc/runtime/FrameStream.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/TcpWire.h"

#include <algorithm>
#include <cstring>
#include <poll.h>
#include <set>
#include <sys/socket.h>

namespace mscclc::rt {
using namespace tcpwire;

namespace {

class SocketStream final : public FrameStream {
public:
  explicit SocketStream(net::Fd fd) : fd_(std::move(fd)) {}
  TransportKind kind() const override { return TransportKind::Tcp; }

  Status send(const void *data, uint64_t bytes, const net::Deadline &deadline,
              const std::string &what) override {
    return net::sendAll(fd_.get(), data, bytes, deadline, what);
  }
  Status recv(void *data, uint64_t bytes, const net::Deadline &deadline,
              const std::string &what) override {
    return net::recvAll(fd_.get(), data, bytes, deadline, what);
  }

  Status waitReadable(int ms, Ready *out) override {
    *out = Ready::Nothing;
    pollfd p{fd_.get(), POLLIN, 0};
    int r = poll(&p, 1, ms);
    if (r < 0 && errno != EINTR)
      return net::errnoStatus("poll");
    if (r <= 0)
      return Status::ok();
    // Readable with nothing to read is the peer's end of the stream; an
    // error is left for recv() to report.
    char byte;
    ssize_t n = ::recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    *out = n == 0 ? Ready::Closed : Ready::Bytes;
    return Status::ok();
  }

  void shutdown() override { ::shutdown(fd_.get(), SHUT_RDWR); }

private:
  net::Fd fd_;
};

/// Connects to the higher rank `peer` at `where`: the handshake, then this
/// rank's pair hello.
Status connectToPeer(const Bootstrap &b, int peer, const wire::WireAddr &where,
                     const net::Deadline &d, net::Fd *out) {
  std::string name = fmt::format("rank {} at {}", peer, net::describe(where));
  MSCCLC_TRY(net::connectTo(where, d, out)
                 .context(fmt::format("connecting to rank {}", peer)));
  wire::Session session;
  MSCCLC_TRY(net::openHandshake(out->get(), b.secret(), wire::Purpose::TcpPair,
                                b.nonce(), uint32_t(peer), d, name, &session));
  PairHello mine{kPairMagic, uint32_t(b.rank()), b.nonce(), {}};
  session.proveMessage(&mine, sizeof(mine));
  return net::sendAll(out->get(), &mine, sizeof(mine), d,
                      fmt::format("sending the pair hello to {}", name));
}

} // namespace

std::unique_ptr<FrameStream> socketStream(net::Fd fd) {
  return std::make_unique<SocketStream>(std::move(fd));
}

Status connectSocketStreams(Bootstrap &b, const std::vector<int> &peers,
                            double timeoutSeconds, FrameStreams *out) {
  int rank = b.rank(), nranks = b.nranks();
  std::set<int> want;
  for (int p : peers) {
    if (p < 0 || p >= nranks || p == rank || !want.insert(p).second)
      return invalidArgument(fmt::format(
          "tcp transport: rank {} of {} lists peer {} (out of range, itself "
          "or twice)",
          rank, nranks, p));
  }
  wire::WireAddr where = b.listenAddress();
  where.port = 0;
  net::Fd listener;
  wire::WireAddr bound;
  MSCCLC_TRY(net::listenOn(where, &listener, &bound)
                 .context("tcp transport listener"));
  std::vector<wire::WireAddr> addrs(static_cast<size_t>(nranks));
  addrs[size_t(rank)] = bound;
  MSCCLC_TRY(b.allGather(addrs.data(), sizeof(wire::WireAddr))
                 .context("tcp transport: exchanging listen addresses"));

  std::string who = fmt::format("tcp transport (rank {})", rank);
  net::Deadline d = net::Deadline::in(timeoutSeconds, who.c_str(),
                                      "MSCCLC_TRANSPORT_TIMEOUT");
  std::map<int, net::Fd> fds;
  // Higher peers first: the highest rank only accepts, so every rank's
  // connects are answered (by induction from the top).
  for (int p : want) {
    if (p < rank)
      continue;
    MSCCLC_TRY(wire::checkAddress(addrs[size_t(p)])
                   .context(fmt::format("{}: rank {}'s address", who, p)));
    MSCCLC_TRY(connectToPeer(b, p, addrs[size_t(p)], d, &fds[p]));
  }
  size_t lower = size_t(
      std::count_if(want.begin(), want.end(), [&](int p) { return p < rank; }));
  net::Acceptor acceptor{b.secret(), wire::Purpose::TcpPair, b.nonce(),
                         uint32_t(rank)};
  if (lower > 0)
    MSCCLC_TRY(net::serveFirstFrames(
        listener.get(), acceptor, sizeof(PairHello), d, who,
        "waiting for lower ranks' connections",
        [&](net::OpenedConnection &c, net::Verdict *verdict) {
          PairHello h;
          memcpy(&h, c.frame, sizeof(h));
          verdict->stray = checkPairHello(h, c.session, b.nonce(), nranks);
          int p = int(h.rank);
          if (!verdict->stray && (p >= rank || !want.count(p) || fds.count(p)))
            verdict->stray = "a rank not expected here";
          if (verdict->stray)
            return Status::ok();
          fds[p] = std::move(c.conn);
          verdict->done = fds.size() == want.size();
          return Status::ok();
        }));
  for (auto &[p, fd] : fds)
    (*out)[p] = socketStream(std::move(fd));
  return Status::ok();
}

} // namespace mscclc::rt
