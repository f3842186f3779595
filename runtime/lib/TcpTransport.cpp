//===- TcpTransport.cpp - Port channels over TCP sockets ------------------===//
//
// The connections, their threads and the channels of TcpTransport.h.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/TcpTransport.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/FrameStream.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/TcpWire.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

namespace mscclc::rt {
using namespace tcpwire;

namespace {
/// The variable the time-out messages name.
const char *const kTimeoutKnob = setting::TransportTimeout.name();
} // namespace

Status tcpOptionsFromEnv(TcpOptions *out) {
  TcpOptions o;
  MSCCLC_TRY(get(setting::TcpSliceBytes, &o.sliceBytes));
  Seconds timeout;
  MSCCLC_TRY(get(setting::TransportTimeout, &timeout));
  o.timeoutSeconds = timeout.count();
  *out = o;
  return Status::ok();
}

namespace {

/// A ring of pinned slices for staging device memory.
class StagingRing {
public:
  ~StagingRing() {
    if (base_)
      backend_->release(base_);
  }
  Status init(StagingBackend *backend, unsigned slots, uint64_t slice) {
    backend_ = backend;
    slice_ = slice;
    tickets_.assign(slots, 0);
    for (unsigned i = 0; i < slots; ++i)
      free_.push_back(i);
    void *p = nullptr;
    MSCCLC_TRY(backend->allocate(size_t(slots) * slice, &p)
                   .context("allocating pinned staging memory"));
    base_ = static_cast<char *>(p);
    return Status::ok();
  }
  char *slot(unsigned i) const { return base_ + uint64_t(i) * slice_; }
  unsigned size() const { return unsigned(tickets_.size()); }
  /// The copy that last used a slot (receive side), 0 if none.
  uint64_t &ticket(unsigned i) { return tickets_[i]; }
  std::deque<unsigned> free_; ///< send side: slots not in flight

private:
  StagingBackend *backend_ = nullptr;
  char *base_ = nullptr;
  uint64_t slice_ = 0;
  std::vector<uint64_t> tickets_;
};

} // namespace

/// One connection to one peer: a queue of frames, the thread that sends
/// them and the thread that handles the peer's.
class TcpConnection {
public:
  TcpConnection(int rank, int peer, std::unique_ptr<FrameStream> stream,
                TcpNetwork::Registry &registry, const TcpOptions &options)
      : rank_(rank), peer_(peer), stream_(std::move(stream)),
        registry_(registry), options_(options),
        who_(fmt::format("{} transport (rank {} to rank {})",
                         transportName(stream_->kind()), rank, peer)) {}
  ~TcpConnection();
  Status start();

  struct Op {
    FrameHeader header;
    const char *payload = nullptr;
    /// Staged payloads: the copy that fills the slot, and the slot.
    StagingCopier *copier = nullptr;
    uint64_t ticket = 0;
    int slot = -1;
  };
  /// Queues a frame; returns its sequence number (for waitSent).
  Status enqueue(const Op &op, uint64_t *seq);
  /// A send slot for a staged slice; blocks while all are in flight.
  Status acquireSendSlot(int *slot, char **data);
  void releaseSendSlot(int slot);
  /// Blocks until frames up to `seq` went out (or the connection failed).
  Status waitSent(uint64_t seq);
  /// Queues a drain frame (TcpNetwork::drain).
  Status sendDrain();
  /// Waits until as many of the peer's drain frames as of ours were
  /// handled here: every frame it queued before them has landed.
  Status waitDrained();
  Status error();
  uint64_t sliceBytes() const { return options_.sliceBytes; }
  TransportKind kind() const { return stream_->kind(); }

private:
  void sendLoop();
  void recvLoop();
  Status sendOp(const Op &op);
  Status recvFrame(bool *closed);
  Status recvData(const FrameHeader &h, const TcpNetwork::Registry::Window &w,
                  const net::Deadline &d, const std::string &from);
  void fail(Status s);
  net::Deadline deadline() const {
    return net::Deadline::in(options_.timeoutSeconds, who_.c_str(),
                             kTimeoutKnob);
  }

  int rank_;
  int peer_;
  std::unique_ptr<FrameStream> stream_;
  TcpNetwork::Registry &registry_;
  TcpOptions options_;
  std::string who_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Op> queue_;
  uint64_t queued_ = 0;
  uint64_t sent_ = 0;
  uint64_t drainsSent_ = 0, drainsReceived_ = 0;
  bool stopping_ = false;
  std::atomic<bool> failed_{false};
  std::atomic<bool> stopReceiving_{false};
  Status error_;
  std::thread sender_;
  std::thread receiver_;
  // Device memory (options_.staging): the send slots are guarded by
  // mutex_; the receive side is the receiver thread's alone.
  std::unique_ptr<StagingRing> sendRing_, recvRing_;
  std::unique_ptr<StagingCopier> recvCopier_;
  unsigned recvNext_ = 0;
  uint64_t recvLast_ = 0; ///< the last receive copy queued
};

Status TcpConnection::start() {
  if (StagingBackend *b = options_.staging.get()) {
    sendRing_ = std::make_unique<StagingRing>();
    recvRing_ = std::make_unique<StagingRing>();
    unsigned n = std::max(2u, options_.stagingSlots);
    MSCCLC_TRY(sendRing_->init(b, n, options_.sliceBytes));
    MSCCLC_TRY(recvRing_->init(b, n, options_.sliceBytes));
    MSCCLC_TRY(b->copier(nullptr, &recvCopier_));
  }
  sender_ = std::thread([this] { sendLoop(); });
  receiver_ = std::thread([this] { recvLoop(); });
  return Status::ok();
}

Status TcpConnection::acquireSendSlot(int *slot, char **data) {
  if (!sendRing_)
    return invalidArgument(fmt::format(
        "{}: a put from device memory, but the network has no staging", who_));
  std::unique_lock<std::mutex> lock(mutex_);
  // No deadline of its own: the sender frees slots under its send deadline.
  cv_.wait(lock, [&] { return !sendRing_->free_.empty() || !error_.isOk(); });
  if (!error_.isOk())
    return error_;
  *slot = int(sendRing_->free_.front());
  sendRing_->free_.pop_front();
  *data = sendRing_->slot(unsigned(*slot));
  return Status::ok();
}

void TcpConnection::releaseSendSlot(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  sendRing_->free_.push_back(unsigned(slot));
  cv_.notify_all();
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
  // The device may still copy out of the receive slots.
  if (recvCopier_ && recvLast_)
    (void)recvCopier_->wait(recvLast_);
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

Status TcpConnection::enqueue(const Op &op, uint64_t *seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.isOk())
    return error_;
  queue_.push_back(op);
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

Status TcpConnection::sendDrain() {
  Op op;
  op.header = {kFrameMagic, kFrameDrain, 0, 0, 0, 0};
  uint64_t seq = 0;
  MSCCLC_TRY(enqueue(op, &seq));
  std::lock_guard<std::mutex> lock(mutex_);
  ++drainsSent_;
  return Status::ok();
}

Status TcpConnection::waitDrained() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto until = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(options_.timeoutSeconds));
  if (!cv_.wait_until(lock, until, [&] {
        return drainsReceived_ >= drainsSent_ || !error_.isOk();
      }))
    return Status(Code::Timeout,
                  fmt::format("{}: rank {} did not drain its frames within "
                              "{:.0f} s ({}; did it skip the reset, or stop?)",
                              who_, peer_, options_.timeoutSeconds,
                              kTimeoutKnob));
  return error_;
}

Status TcpConnection::sendOp(const Op &op) {
  if (op.copier) // the slice is in its slot once the copy is done
    MSCCLC_TRY(op.copier->wait(op.ticket).context(
        fmt::format("{}: staging a slice from the device", who_)));
  net::Deadline d = deadline();
  MSCCLC_TRY(stream_->send(&op.header, sizeof(op.header), d,
                            "sending a frame header"));
  if (op.header.type == kFrameData)
    MSCCLC_TRY(stream_->send(op.payload, op.header.size, d,
                              "sending a data slice"));
  MSCCLC_LOG(Trace, "{}: sent frame type {} ({} bytes or value) to {:#x}", who_,
             op.header.type, static_cast<unsigned long long>(op.header.size),
             static_cast<unsigned long long>(op.header.address));
  return Status::ok();
}

void TcpConnection::sendLoop() {
  if (options_.staging)
    options_.staging->bindThread();
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
        (void)stream_->send(&close, sizeof(close), deadline(),
                            "sending the closing frame");
        return;
      }
      op = queue_.front();
      queue_.pop_front();
    }
    Status s = sendOp(op);
    if (op.slot >= 0)
      releaseSendSlot(op.slot);
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
  for (FrameStream::Ready ready = FrameStream::Ready::Nothing;
       ready != FrameStream::Ready::Bytes;) {
    if (stopReceiving_.load()) {
      *closed = true;
      return Status::ok();
    }
    MSCCLC_TRY(stream_->waitReadable(100, &ready).context(who_));
    if (ready == FrameStream::Ready::Closed)
      return systemError(fmt::format(
          "{}: rank {} closed the connection without its closing frame (did "
          "its process die?)",
          who_, peer_));
  }
  std::string from = fmt::format("{}: receiving from rank {} (did its process "
                                 "die or stop?)",
                                 who_, peer_);
  net::Deadline d = deadline();
  MSCCLC_TRY(
      stream_->recv(&h, sizeof(h), d, "receiving a frame header").context(from));
  std::shared_lock<std::shared_mutex> lock(registry_.mutex);
  FrameAction action;
  MSCCLC_TRY(classifyFrame(h, registry_, options_.sliceBytes, peer_, &action)
                 .context(who_));
  if (action.kind == FrameAction::Close) {
    *closed = true;
    return Status::ok();
  }
  if (action.kind == FrameAction::Drain) {
    lock.unlock();
    // The frames before it were handled; their copies to the device (and
    // stores) must have landed too.
    if (recvCopier_) {
      uint64_t ticket = 0;
      MSCCLC_TRY(recvCopier_->fence(&ticket));
      MSCCLC_TRY(recvCopier_->wait(ticket));
    }
    std::lock_guard<std::mutex> guard(mutex_);
    ++drainsReceived_;
    cv_.notify_all();
    return Status::ok();
  }
  const TcpNetwork::Registry::Window *w = action.window;
  MSCCLC_LOG(Trace, "{}: received frame type {} ({} bytes or value) to {:#x}",
             who_, h.type, static_cast<unsigned long long>(h.size),
             static_cast<unsigned long long>(h.address));
  if (action.kind == FrameAction::Signal) {
    auto *word = reinterpret_cast<uint64_t *>(h.address);
    if (w->kind == MemoryKind::Device) {
      // Queued behind the slices' copies: seen after their data.
      if (!recvCopier_)
        return internalError(fmt::format(
            "{}: a device semaphore, but the network has no staging", who_));
      return recvCopier_->store(word, h.size);
    }
    if (recvLast_)
      MSCCLC_TRY(recvCopier_->wait(recvLast_));
    __atomic_store_n(word, h.size, __ATOMIC_RELEASE);
    return Status::ok();
  }
  return recvData(h, *w, d, from);
}

Status TcpConnection::recvData(const FrameHeader &h,
                               const TcpNetwork::Registry::Window &w,
                               const net::Deadline &d,
                               const std::string &from) {
  std::string what = fmt::format("receiving {} bytes of data",
                                 static_cast<unsigned long long>(h.size));
  char *dst = reinterpret_cast<char *>(h.address);
  if (w.kind == MemoryKind::Host)
    return stream_->recv(dst, h.size, d, what).context(from);
  if (!recvCopier_)
    return internalError(fmt::format(
        "{}: a device window, but the network has no staging", who_));
  // The next slot, once its previous copy to the device is done.
  unsigned i = recvNext_;
  recvNext_ = (recvNext_ + 1) % recvRing_->size();
  if (uint64_t t = recvRing_->ticket(i))
    MSCCLC_TRY(recvCopier_->wait(t));
  char *slot = recvRing_->slot(i);
  MSCCLC_TRY(stream_->recv(slot, h.size, d, what).context(from));
  MSCCLC_TRY(recvCopier_->copy(dst, slot, h.size, &recvRing_->ticket(i)));
  recvLast_ = recvRing_->ticket(i);
  return Status::ok();
}

void TcpConnection::recvLoop() {
  if (options_.staging)
    options_.staging->bindThread();
  for (;;) {
    bool closed = false;
    Status s = recvFrame(&closed);
    if (!s.isOk()) {
      // A refused or broken stream cannot be resynchronised: closing it
      // makes the sender fail too, instead of waiting on a signal.
      stream_->shutdown();
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
  TcpTransport(TcpConnection &c, int peer, const TcpChannelSpec &spec)
      : conn_(c), peer_(peer), spec_(spec) {}
  /// Queued frames name this channel's copier: they leave first.
  ~TcpTransport() override { (void)conn_.waitSent(last_); }
  TransportKind kind() const override { return conn_.kind(); }

  Status put(uint32_t srcBuffer, uint64_t srcOffset, uint32_t dstBuffer,
             uint64_t dstOffset, uint64_t size) override {
    PutBuffer ours[3], theirs[3];
    for (int b = 0; b < 3; ++b) {
      ours[b] = {spec_.src[b] != nullptr, spec_.srcExtent[b]};
      theirs[b] = {spec_.dst[b] != 0, spec_.dstExtent[b]};
    }
    MSCCLC_TRY(checkPut("tcp port channel to rank", peer_, ours, theirs,
                        srcBuffer, srcOffset, dstBuffer, dstOffset, size));
    bool staged = spec_.srcKind == MemoryKind::Device;
    if (staged && !spec_.copier)
      return internalError("tcp put from device memory without a copier");
    const char *src = static_cast<const char *>(spec_.src[srcBuffer]);
    for (uint64_t done = 0; done < size;) {
      uint64_t n = std::min(conn_.sliceBytes(), size - done);
      TcpConnection::Op op;
      op.header = {kFrameMagic, kFrameData, 0, 0,
                   spec_.dst[dstBuffer] + dstOffset + done, n};
      op.payload = src + srcOffset + done;
      if (staged) {
        char *slot = nullptr;
        MSCCLC_TRY(conn_.acquireSendSlot(&op.slot, &slot));
        Status copied = spec_.copier->copy(slot, op.payload, n, &op.ticket);
        if (!copied.isOk()) {
          conn_.releaseSendSlot(op.slot);
          return copied;
        }
        op.payload = slot;
        op.copier = spec_.copier;
        lastCopy_ = op.ticket;
      }
      MSCCLC_TRY(conn_.enqueue(op, &last_));
      done += n;
    }
    return Status::ok();
  }

  Status signal() override {
    if (!spec_.semaphore)
      return invalidArgument(fmt::format(
          "tcp channel to rank {} signals, but the peer has no semaphore for "
          "it",
          peer_));
    TcpConnection::Op op;
    uint64_t value = spec_.counter ? ++*spec_.counter : ++counter_;
    op.header = {kFrameMagic, kFrameSignal, 0, 0, spec_.semaphore, value};
    return conn_.enqueue(op, &last_);
  }

  /// Staged sources may be overwritten once copied to their slots; host
  /// ones once sent.
  Status flush() override {
    if (spec_.srcKind == MemoryKind::Device) {
      if (lastCopy_)
        MSCCLC_TRY(spec_.copier->wait(lastCopy_));
      return conn_.error();
    }
    return conn_.waitSent(last_);
  }
  Status asyncError() override { return conn_.error(); }

private:
  TcpConnection &conn_;
  int peer_;
  TcpChannelSpec spec_;
  uint64_t counter_ = 0;  ///< signals sent (without spec_.counter)
  uint64_t last_ = 0;     ///< the last frame queued
  uint64_t lastCopy_ = 0; ///< the last staging copy queued
};

} // namespace

TcpNetwork::TcpNetwork() : registry_(std::make_unique<Registry>()) {}
TcpNetwork::~TcpNetwork() = default;

Status TcpNetwork::connect(Bootstrap &b, const std::vector<int> &peers,
                           const TcpOptions &options,
                           std::unique_ptr<TcpNetwork> *out) {
  FrameStreams streams;
  MSCCLC_TRY(connectSocketStreams(b, peers, options.timeoutSeconds, &streams));
  return over(b.rank(), std::move(streams), options, out);
}

Status TcpNetwork::over(int rank, FrameStreams streams,
                        const TcpOptions &options,
                        std::unique_ptr<TcpNetwork> *out) {
  std::unique_ptr<TcpNetwork> self(new TcpNetwork());
  self->rank_ = rank;
  self->options_ = options;
  for (auto &[p, stream] : streams) {
    auto c = std::make_unique<TcpConnection>(rank, p, std::move(stream),
                                             *self->registry_, options);
    MSCCLC_TRY(c->start());
    self->connections_[p] = std::move(c);
  }
  MSCCLC_LOG(Debug, "rank {}: frames to {} peers, slices of {} bytes", rank,
             self->connections_.size(),
             static_cast<unsigned long long>(options.sliceBytes));
  *out = std::move(self);
  return Status::ok();
}

Status TcpNetwork::registerWindow(void *base, uint64_t size, MemoryKind kind,
                                  uint32_t *handle) {
  if (!base && size)
    return invalidArgument("tcp transport: a window at null");
  if (kind == MemoryKind::Device && !options_.staging)
    return internalError(
        "tcp transport: a device window, but the network has no staging");
  std::unique_lock<std::shared_mutex> lock(registry_->mutex);
  *handle = registry_->next++;
  registry_->windows[*handle] = {static_cast<char *>(base), size, kind, false};
  return Status::ok();
}

Status TcpNetwork::registerSemaphores(uint64_t *base, uint64_t count,
                                      MemoryKind kind, uint32_t *handle) {
  if (!base)
    return invalidArgument("tcp transport: semaphores at null");
  if (kind == MemoryKind::Device && !options_.staging)
    return internalError(
        "tcp transport: device semaphores, but the network has no staging");
  std::unique_lock<std::shared_mutex> lock(registry_->mutex);
  *handle = registry_->next++;
  registry_->windows[*handle] = {reinterpret_cast<char *>(base),
                                 count * sizeof(uint64_t), kind, true};
  return Status::ok();
}

void TcpNetwork::unregister(uint32_t handle) {
  std::unique_lock<std::shared_mutex> lock(registry_->mutex);
  registry_->windows.erase(handle);
}

std::vector<int> TcpNetwork::peers() const {
  std::vector<int> out;
  for (const auto &[p, c] : connections_)
    out.push_back(p);
  return out;
}

Status TcpNetwork::connectionTo(int peer, TcpConnection **out) const {
  auto it = connections_.find(peer);
  if (it == connections_.end())
    return invalidArgument(fmt::format(
        "tcp transport: rank {} has no connection to rank {}", rank_, peer));
  *out = it->second.get();
  return Status::ok();
}

Status TcpNetwork::channel(int peer, const TcpChannelSpec &spec,
                           std::unique_ptr<Transport> *out) {
  TcpConnection *c = nullptr;
  MSCCLC_TRY(connectionTo(peer, &c));
  *out = std::make_unique<TcpTransport>(*c, peer, spec);
  return Status::ok();
}

Status TcpNetwork::peerError(int peer) {
  TcpConnection *c = nullptr;
  MSCCLC_TRY(connectionTo(peer, &c));
  return c->error();
}

Status TcpNetwork::drain(const std::vector<int> &peers) {
  std::vector<TcpConnection *> connections(peers.size());
  for (size_t i = 0; i < peers.size(); ++i)
    MSCCLC_TRY(connectionTo(peers[i], &connections[i]));
  // Every drain frame leaves before any wait: the peers' waits overlap.
  for (TcpConnection *c : connections)
    MSCCLC_TRY(c->sendDrain());
  for (TcpConnection *c : connections)
    MSCCLC_TRY(c->waitDrained());
  return Status::ok();
}

} // namespace mscclc::rt
