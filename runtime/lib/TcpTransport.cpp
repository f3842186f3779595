//===- TcpTransport.cpp - Port channels over TCP sockets ------------------===//
//
// The connections, their threads and the channels of TcpTransport.h.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/TcpTransport.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Socket.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <poll.h>
#include <set>
#include <shared_mutex>
#include <sys/socket.h>
#include <thread>
#include <unordered_map>

namespace mscclc::rt {
using namespace tcpwire;

namespace {
constexpr uint64_t kMinSliceBytes = 1024;
constexpr uint64_t kMaxSliceBytes = 64ull << 20;
constexpr const char *kTimeoutKnob = "MSCCLC_TRANSPORT_TIMEOUT";
} // namespace

const char *tcpwire::checkFrameHeader(const FrameHeader &h, uint64_t maxSlice) {
  if (h.magic != kFrameMagic)
    return "bad frame magic";
  if (h.reserved != 0)
    return "reserved field not zero";
  switch (h.type) {
  case kFrameData:
    if (h.size == 0 || h.size > maxSlice)
      return "data frame length is 0 or more than a slice";
    return nullptr;
  case kFrameSignal:
  case kFrameClose:
    return nullptr;
  default:
    return "unknown frame type";
  }
}

const char *tcpwire::checkPairHello(const PairHello &h, uint64_t nonce,
                                    const uint8_t *secret, int nranks) {
  // The secret first: nothing else of a stranger's frame is looked at.
  if (!wire::secretsEqual(h.secret, secret))
    return "wrong secret";
  if (h.magic != kPairMagic)
    return "bad magic";
  if (h.nonce != nonce)
    return "another communicator's nonce";
  if (h.rank >= uint32_t(nranks))
    return "rank out of range";
  return nullptr;
}

Status tcpOptionsFromEnv(TcpOptions *out) {
  TcpOptions o;
  if (const char *env = getenv("MSCCLC_TCP_SLICE_BYTES"); env && *env) {
    char *end = nullptr;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end || v < kMinSliceBytes || v > kMaxSliceBytes)
      return invalidArgument(fmt::format(
          "MSCCLC_TCP_SLICE_BYTES='{}': expected bytes from {} to {}", env,
          kMinSliceBytes, kMaxSliceBytes));
    o.sliceBytes = v;
  }
  if (const char *env = getenv(kTimeoutKnob); env && *env) {
    char *end = nullptr;
    double v = strtod(env, &end);
    if (*end || !(v > 0))
      return invalidArgument(fmt::format(
          "{}='{}': expected a positive number of seconds", kTimeoutKnob, env));
    o.timeoutSeconds = v;
  }
  *out = o;
  return Status::ok();
}

struct TcpNetwork::Registry {
  struct Window {
    char *base;
    uint64_t size;
  };
  std::shared_mutex mutex;
  std::unordered_map<uint32_t, Window> windows;
  std::unordered_map<uint32_t, uint64_t *> semaphores;
};

/// One connection to one peer: a queue of frames, the thread that sends
/// them and the thread that handles the peer's.
class TcpConnection {
public:
  TcpConnection(int rank, int peer, net::Fd fd, TcpNetwork::Registry &registry,
                const TcpOptions &options)
      : rank_(rank), peer_(peer), fd_(std::move(fd)), registry_(registry),
        options_(options),
        who_(fmt::format("tcp transport (rank {} to rank {})", rank, peer)) {}
  ~TcpConnection();
  void start();

  /// Queues a frame; returns its sequence number (for waitSent).
  Status enqueue(const FrameHeader &h, const char *payload, uint64_t *seq);
  /// Blocks until frames up to `seq` went out (or the connection failed).
  Status waitSent(uint64_t seq);
  Status error();
  uint64_t sliceBytes() const { return options_.sliceBytes; }

private:
  struct Op {
    FrameHeader header;
    const char *payload;
  };
  void sendLoop();
  void recvLoop();
  Status sendOp(const Op &op);
  Status recvFrame(bool *closed);
  void fail(Status s);
  net::Deadline deadline() const {
    return net::Deadline::in(options_.timeoutSeconds, who_.c_str(),
                             kTimeoutKnob);
  }

  int rank_;
  int peer_;
  net::Fd fd_;
  TcpNetwork::Registry &registry_;
  TcpOptions options_;
  std::string who_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Op> queue_;
  uint64_t queued_ = 0;
  uint64_t sent_ = 0;
  bool stopping_ = false;
  std::atomic<bool> failed_{false};
  std::atomic<bool> stopReceiving_{false};
  Status error_;
  std::thread sender_;
  std::thread receiver_;
};

void TcpConnection::start() {
  sender_ = std::thread([this] { sendLoop(); });
  receiver_ = std::thread([this] { recvLoop(); });
}

TcpConnection::~TcpConnection() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (sender_.joinable())
    sender_.join(); // drains the queue and sends the closing frame
  stopReceiving_.store(true);
  if (receiver_.joinable())
    receiver_.join();
}

void TcpConnection::fail(Status s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.isOk()) {
    MSCCLC_LOG(Error, "{}", s.message());
    error_ = std::move(s);
  }
  failed_.store(true);
  cv_.notify_all();
}

Status TcpConnection::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

Status TcpConnection::enqueue(const FrameHeader &h, const char *payload,
                              uint64_t *seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.isOk())
    return error_;
  queue_.push_back({h, payload});
  *seq = ++queued_;
  cv_.notify_all();
  return Status::ok();
}

Status TcpConnection::waitSent(uint64_t seq) {
  std::unique_lock<std::mutex> lock(mutex_);
  // No deadline of its own: every send the sender waits on has one.
  cv_.wait(lock, [&] { return sent_ >= seq || !error_.isOk(); });
  return error_;
}

Status TcpConnection::sendOp(const Op &op) {
  net::Deadline d = deadline();
  MSCCLC_TRY(net::sendAll(fd_.get(), &op.header, sizeof(op.header), d,
                          "sending a frame header"));
  if (op.header.type == kFrameData)
    MSCCLC_TRY(net::sendAll(fd_.get(), op.payload, op.header.size, d,
                            "sending a data slice"));
  return Status::ok();
}

void TcpConnection::sendLoop() {
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (!error_.isOk())
        return;
      if (queue_.empty()) {
        lock.unlock();
        // Tells the peer's receiver that the end is no failure.
        FrameHeader close{kFrameMagic, kFrameClose, 0, 0, 0, 0};
        (void)net::sendAll(fd_.get(), &close, sizeof(close), deadline(),
                           "sending the closing frame");
        return;
      }
      op = queue_.front();
      queue_.pop_front();
    }
    Status s = sendOp(op);
    if (!s.isOk()) {
      fail(std::move(s.context(fmt::format(
          "{}: the connection to rank {} failed (did its process die or "
          "stop?)",
          who_, peer_))));
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++sent_;
    cv_.notify_all();
  }
}

Status TcpConnection::recvFrame(bool *closed) {
  FrameHeader h;
  // The first byte may be long in coming (an idle channel); the rest of
  // the frame has a deadline.
  for (;;) {
    if (stopReceiving_.load()) {
      *closed = true;
      return Status::ok();
    }
    pollfd p{fd_.get(), POLLIN, 0};
    int r = poll(&p, 1, 100);
    if (r > 0)
      break;
    if (r < 0 && errno != EINTR)
      return net::errnoStatus("poll");
  }
  ssize_t n = ::recv(fd_.get(), &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0)
    return systemError(fmt::format(
        "{}: rank {} closed the connection without its closing frame (did "
        "its process die?)",
        who_, peer_));
  std::string from = fmt::format("{}: receiving from rank {} (did its process "
                                 "die or stop?)",
                                 who_, peer_);
  net::Deadline d = deadline();
  MSCCLC_TRY(
      net::recvAll(fd_.get(), &h, sizeof(h), d, "receiving a frame header")
          .context(from));
  if (const char *bad = checkFrameHeader(h, options_.sliceBytes))
    return systemError(fmt::format(
        "{}: rank {} sent a malformed frame ({}): connection closed", who_,
        peer_, bad));
  if (h.type == kFrameClose) {
    *closed = true;
    return Status::ok();
  }
  std::shared_lock<std::shared_mutex> lock(registry_.mutex);
  if (h.type == kFrameSignal) {
    auto it = registry_.semaphores.find(h.id);
    if (it == registry_.semaphores.end())
      return invalidArgument(fmt::format(
          "{}: rank {} signals semaphore {}, which is not registered: refused",
          who_, peer_, h.id));
    __atomic_store_n(it->second, h.size, __ATOMIC_RELEASE);
    return Status::ok();
  }
  auto it = registry_.windows.find(h.id);
  if (it == registry_.windows.end())
    return invalidArgument(fmt::format(
        "{}: rank {} puts {} bytes into window {}, which is not registered: "
        "refused",
        who_, peer_, static_cast<unsigned long long>(h.size), h.id));
  const auto &w = it->second;
  if (h.offset > w.size || h.size > w.size - h.offset)
    return invalidArgument(fmt::format(
        "{}: rank {} puts {} bytes at offset {} of window {}, which has {}: "
        "out of bounds, refused",
        who_, peer_, static_cast<unsigned long long>(h.size),
        static_cast<unsigned long long>(h.offset), h.id,
        static_cast<unsigned long long>(w.size)));
  return net::recvAll(fd_.get(), w.base + h.offset, h.size, d,
                      fmt::format("receiving {} bytes of data",
                                  static_cast<unsigned long long>(h.size)))
      .context(from);
}

void TcpConnection::recvLoop() {
  for (;;) {
    bool closed = false;
    Status s = recvFrame(&closed);
    if (!s.isOk()) {
      // A refused or broken stream cannot be resynchronised: closing it
      // makes the sender fail too, instead of waiting on a signal.
      ::shutdown(fd_.get(), SHUT_RDWR);
      fail(std::move(s));
      return;
    }
    if (closed)
      return;
  }
}

namespace {

/// A port channel over a TcpConnection.
class TcpTransport final : public Transport {
public:
  TcpTransport(TcpConnection &c, const TcpChannelSpec &spec)
      : conn_(c), spec_(spec) {}
  TransportKind kind() const override { return TransportKind::Tcp; }

  Status put(uint32_t srcBuffer, uint64_t srcOffset, uint32_t dstBuffer,
             uint64_t dstOffset, uint64_t size) override {
    if (srcBuffer > 2 || dstBuffer > 2 || !spec_.src[srcBuffer])
      return invalidArgument(
          fmt::format("tcp put names buffer {} -> {}, which is not mapped",
                      srcBuffer, dstBuffer));
    uint64_t extent = spec_.srcExtent[srcBuffer];
    if (srcOffset > extent || size > extent - srcOffset)
      return invalidArgument(fmt::format(
          "tcp put of {} bytes at {} runs past our buffer {} ({} bytes)",
          static_cast<unsigned long long>(size),
          static_cast<unsigned long long>(srcOffset), srcBuffer,
          static_cast<unsigned long long>(extent)));
    const char *src = static_cast<const char *>(spec_.src[srcBuffer]);
    for (uint64_t done = 0; done < size;) {
      uint64_t n = std::min(conn_.sliceBytes(), size - done);
      FrameHeader h{kFrameMagic, kFrameData,       spec_.dstWindow[dstBuffer],
                    0,           dstOffset + done, n};
      MSCCLC_TRY(conn_.enqueue(h, src + srcOffset + done, &last_));
      done += n;
    }
    return Status::ok();
  }

  Status signal() override {
    FrameHeader h{kFrameMagic, kFrameSignal, spec_.semaphoreId, 0,
                  0,           ++counter_};
    return conn_.enqueue(h, nullptr, &last_);
  }

  Status flush() override { return conn_.waitSent(last_); }
  Status asyncError() override { return conn_.error(); }

private:
  TcpConnection &conn_;
  TcpChannelSpec spec_;
  uint64_t counter_ = 0; ///< signals sent
  uint64_t last_ = 0;    ///< the last frame queued
};

PairHello helloOf(const Bootstrap &b) {
  PairHello h{kPairMagic, uint32_t(b.rank()), b.nonce(), {}};
  memcpy(h.secret, b.secret(), sizeof(h.secret));
  return h;
}

} // namespace

TcpNetwork::TcpNetwork() : registry_(std::make_unique<Registry>()) {}
TcpNetwork::~TcpNetwork() = default;

Status TcpNetwork::connect(Bootstrap &b, const std::vector<int> &peers,
                           const TcpOptions &options,
                           std::unique_ptr<TcpNetwork> *out) {
  int rank = b.rank(), nranks = b.nranks();
  std::set<int> want;
  for (int p : peers) {
    if (p < 0 || p >= nranks || p == rank || !want.insert(p).second)
      return invalidArgument(fmt::format(
          "tcp transport: rank {} of {} lists peer {} (out of range, itself "
          "or twice)",
          rank, nranks, p));
  }
  std::unique_ptr<TcpNetwork> self(new TcpNetwork());
  self->rank_ = rank;
  self->options_ = options;
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
  net::Deadline d =
      net::Deadline::in(options.timeoutSeconds, who.c_str(), kTimeoutKnob);
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
  for (auto &[p, fd] : fds) {
    auto c = std::make_unique<TcpConnection>(rank, p, std::move(fd),
                                             *self->registry_, options);
    c->start();
    self->connections_[p] = std::move(c);
  }
  MSCCLC_LOG(Debug, "{}: connected to {} peers, slices of {} bytes", who,
             self->connections_.size(),
             static_cast<unsigned long long>(options.sliceBytes));
  *out = std::move(self);
  return Status::ok();
}

Status TcpNetwork::registerWindow(uint32_t id, void *base, uint64_t size) {
  if (!base && size)
    return invalidArgument("tcp transport: a window at null");
  std::unique_lock<std::shared_mutex> lock(registry_->mutex);
  registry_->windows[id] = {static_cast<char *>(base), size};
  return Status::ok();
}

Status TcpNetwork::registerSemaphore(uint32_t id, uint64_t *semaphore) {
  if (!semaphore)
    return invalidArgument("tcp transport: a semaphore at null");
  std::unique_lock<std::shared_mutex> lock(registry_->mutex);
  registry_->semaphores[id] = semaphore;
  return Status::ok();
}

Status TcpNetwork::channel(int peer, const TcpChannelSpec &spec,
                           std::unique_ptr<Transport> *out) {
  auto it = connections_.find(peer);
  if (it == connections_.end())
    return invalidArgument(fmt::format(
        "tcp transport: rank {} has no connection to rank {}", rank_, peer));
  *out = std::make_unique<TcpTransport>(*it->second, spec);
  return Status::ok();
}

Status TcpNetwork::peerError(int peer) {
  auto it = connections_.find(peer);
  if (it == connections_.end())
    return invalidArgument(fmt::format(
        "tcp transport: rank {} has no connection to rank {}", rank_, peer));
  return it->second->error();
}

} // namespace mscclc::rt
