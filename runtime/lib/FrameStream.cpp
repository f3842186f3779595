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

PairHello helloOf(const Bootstrap &b) {
  PairHello h{kPairMagic, uint32_t(b.rank()), b.nonce(), {}};
  memcpy(h.secret, b.secret(), sizeof(h.secret));
  return h;
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
  PairHello mine = helloOf(b);
  std::map<int, net::Fd> fds;
  // Higher peers first: the highest rank only accepts, so every rank's
  // connects are answered (by induction from the top).
  for (int p : want) {
    if (p < rank)
      continue;
    MSCCLC_TRY(wire::checkAddress(addrs[size_t(p)])
                   .context(fmt::format("{}: rank {}'s address", who, p)));
    net::Fd fd;
    std::string what = fmt::format("connecting to rank {}", p);
    MSCCLC_TRY(net::connectTo(addrs[size_t(p)], d, &fd).context(what));
    MSCCLC_TRY(net::sendAll(fd.get(), &mine, sizeof(mine), d, what));
    PairHello theirs;
    MSCCLC_TRY(net::recvAll(fd.get(), &theirs, sizeof(theirs), d,
                            fmt::format("waiting for rank {}'s hello", p)));
    const char *bad = checkPairHello(theirs, b.nonce(), b.secret(), nranks);
    if (!bad && theirs.rank != uint32_t(p))
      bad = "another rank answered";
    if (bad)
      return systemError(fmt::format(
          "{}: the answer at rank {}'s address is not rank {}'s: {}", who, p, p,
          bad));
    fds[p] = std::move(fd);
  }
  size_t lower = size_t(
      std::count_if(want.begin(), want.end(), [&](int p) { return p < rank; }));
  if (lower > 0)
    MSCCLC_TRY(net::serveFirstFrames(
        listener.get(), sizeof(PairHello), d, who.c_str(),
        "waiting for lower ranks' connections",
        [&](net::Fd &conn, const char *frame, const std::string &peer,
            bool *done) {
          PairHello h;
          memcpy(&h, frame, sizeof(h));
          const char *bad = checkPairHello(h, b.nonce(), b.secret(), nranks);
          int p = bad ? -1 : int(h.rank);
          if (!bad && (p >= rank || !want.count(p) || fds.count(p)))
            bad = "a rank not expected here";
          if (bad) {
            MSCCLC_LOG(Warn, "{}: dropped a connection from {}: {}", who, peer,
                       bad);
            return Status::ok();
          }
          MSCCLC_TRY(net::sendAll(conn.get(), &mine, sizeof(mine), d,
                                  fmt::format("answering rank {}", p)));
          fds[p] = std::move(conn);
          *done = fds.size() == want.size();
          return Status::ok();
        }));
  for (auto &[p, fd] : fds)
    (*out)[p] = socketStream(std::move(fd));
  return Status::ok();
}

} // namespace mscclc::rt
