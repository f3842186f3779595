//===- IbRing.cpp - Frame streams over RDMA rings ("ib staged") -----------===//

#include "mscclc/runtime/IbRing.h"

#include "mscclc/runtime/Bootstrap.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace mscclc::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// The words the peer writes into our memory, before our receive ring.
struct Control {
  uint64_t tail;   ///< bytes the peer has written into our ring
  uint64_t credit; ///< bytes of ours the peer has consumed
  uint64_t closed; ///< nonzero once the peer shut the stream down
  uint64_t reserved[5];
};
static_assert(sizeof(Control) == 64, "the ring starts a cache line later");

/// A word the HCA writes behind the compiler's back.
uint64_t peek(const uint64_t &word) {
  return __atomic_load_n(&word, __ATOMIC_ACQUIRE);
}

/// Zeroed, page-aligned host memory (registration pins it).
class HostBlock {
public:
  Status allocate(uint64_t bytes) {
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t size = (bytes + page - 1) / page * page;
    void *p = aligned_alloc(page, size);
    if (!p)
      return systemError(
          fmt::format("allocating {} bytes of host memory for an ib staged ring",
                      static_cast<unsigned long long>(size)));
    memset(p, 0, size);
    data_.reset(static_cast<char *>(p));
    return Status::ok();
  }
  char *data() const { return data_.get(); }

private:
  struct Free {
    void operator()(char *p) const { free(p); }
  };
  std::unique_ptr<char, Free> data_;
};

/// Between two looks at a word the peer writes: a short spin for latency,
/// then sleeps, so an idle stream does not hold a core.
class Backoff {
public:
  void pause() {
    if (++looks_ < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }

private:
  unsigned looks_ = 0;
};

/// How often an idle receiver writes its credit again, to learn whether
/// the peer still answers.
constexpr auto kKeepalive = std::chrono::seconds(1);

class IbRingStream final : public FrameStream {
public:
  IbRingStream(std::shared_ptr<IbNetwork> net, IbConnection *connection,
               int peer, uint64_t ringBytes)
      : net_(std::move(net)), conn_(connection), peer_(peer),
        ringBytes_(ringBytes), who_(fmt::format("ib staged ring to rank {}", peer)) {}

  ~IbRingStream() override {
    shutdown();
    // The HCA may still read the outbox: let our writes end first (within
    // the connection's time-out; at once where it failed).
    if (uint64_t last = conn_->lastQueued())
      (void)conn_->wait(last);
    IbDevice *device = net_->device();
    if (inbox_.handle)
      device->deregister(inbox_);
    if (outboxRegion_.handle)
      device->deregister(outboxRegion_);
  }

  /// Our receive ring and control words, registered for the peer.
  Status allocate() {
    MSCCLC_TRY(in_.allocate(sizeof(Control) + ringBytes_));
    control_ = reinterpret_cast<Control *>(in_.data());
    ring_ = in_.data() + sizeof(Control);
    return net_->device()->registerHost(in_.data(), sizeof(Control) + ringBytes_,
                                        &inbox_);
  }
  const IbRegion &inbox() const { return inbox_; }

  /// The peer's ring (`theirs`: its inbox for us) and our outbox for it.
  Status attach(const IbRemote &theirs) {
    if (theirs.bytes <= sizeof(Control))
      return systemError(fmt::format(
          "{}: rank {} set up no ring for this rank (its own error says why)",
          who_, peer_));
    peerControl_ = sliceOf(theirs, 0, sizeof(Control));
    peerRing_ = sliceOf(theirs, sizeof(Control));
    MSCCLC_TRY(out_.allocate(peerRing_.bytes));
    MSCCLC_TRY(net_->device()->registerHost(out_.data(), peerRing_.bytes,
                                            &outboxRegion_));
    attached_ = true;
    return Status::ok();
  }

  TransportKind kind() const override { return TransportKind::IbStaged; }

  Status send(const void *data, uint64_t bytes, const net::Deadline &deadline,
              const std::string &what) override {
    const char *p = static_cast<const char *>(data);
    const uint64_t size = peerRing_.bytes;
    Backoff backoff;
    while (bytes > 0) {
      MSCCLC_TRY(sendable());
      const uint64_t room = size - (sent_ - peek(control_->credit));
      if (room == 0) {
        // The peer may be waiting for what we wrote before it can free room.
        MSCCLC_TRY(publishTail());
        MSCCLC_TRY(conn_->progress());
        if (Clock::now() >= deadline.at)
          return deadline.timeout(fmt::format(
              "{} (rank {} made no room in its ring)", what, peer_));
        backoff.pause();
        continue;
      }
      const uint64_t at = sent_ % size;
      const uint64_t n = std::min({room, bytes, size - at});
      // Free in the outbox too: the peer consumed what was here, so the
      // write that read it has landed.
      memcpy(out_.data() + at, p, n);
      uint64_t seq = 0;
      MSCCLC_TRY(conn_->write(outboxRegion_, at, peerRing_, at, n, &seq));
      sent_ += n;
      p += n;
      bytes -= n;
    }
    return publishTail();
  }

  Status recv(void *data, uint64_t bytes, const net::Deadline &deadline,
              const std::string &what) override {
    char *p = static_cast<char *>(data);
    Backoff backoff;
    while (bytes > 0) {
      bool closed = false;
      uint64_t n = available(&closed);
      if (n == 0) {
        if (closed)
          return systemError(fmt::format("{}: rank {} closed the stream while "
                                         "{}",
                                         who_, peer_, what));
        MSCCLC_TRY(waitingForBytes());
        if (Clock::now() >= deadline.at)
          return deadline.timeout(what);
        backoff.pause();
        continue;
      }
      const uint64_t at = consumed_ % ringBytes_;
      n = std::min({n, bytes, ringBytes_ - at});
      memcpy(p, ring_ + at, n);
      consumed_ += n;
      p += n;
      bytes -= n;
    }
    // A quarter ring at a time keeps credit writes few, and the sender
    // never idle for long; waiting publishes the rest.
    if (consumed_ - creditSent_ >= ringBytes_ / 4)
      MSCCLC_TRY(publishCredit());
    return Status::ok();
  }

  Status waitReadable(int ms, Ready *out) override {
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    Backoff backoff;
    for (;;) {
      bool closed = false;
      if (available(&closed) > 0) {
        *out = Ready::Bytes;
        return Status::ok();
      }
      if (closed || shut_.load()) {
        *out = Ready::Closed;
        return Status::ok();
      }
      MSCCLC_TRY(waitingForBytes());
      if (Clock::now() >= until) {
        *out = Ready::Nothing;
        return Status::ok();
      }
      backoff.pause();
    }
  }

  void shutdown() override {
    if (shut_.exchange(true) || !attached_)
      return;
    (void)writeWord(offsetof(Control, closed), 1);
  }

private:
  /// Bytes in our ring not yet consumed; `*closed` once the peer shut down
  /// (read first: its flag lands after its last bytes).
  uint64_t available(bool *closed) const {
    *closed = peek(control_->closed) != 0;
    return peek(control_->tail) - consumed_;
  }

  Status sendable() const {
    if (shut_.load())
      return systemError(fmt::format("{}: the stream was shut down", who_));
    if (peek(control_->closed))
      return systemError(
          fmt::format("{}: rank {} closed the stream", who_, peer_));
    return Status::ok();
  }

  /// A receiver about to wait: its credit out (the sender may be waiting
  /// for it), its completions in, and a write now and then that fails if
  /// the peer is gone.
  Status waitingForBytes() {
    MSCCLC_TRY(publishCredit());
    if (Clock::now() - lastCredit_ >= kKeepalive)
      MSCCLC_TRY(writeCredit());
    return conn_->progress();
  }

  Status publishTail() {
    if (sent_ == tailSent_)
      return Status::ok();
    tailSent_ = sent_;
    return writeWord(offsetof(Control, tail), sent_);
  }

  Status publishCredit() {
    return consumed_ == creditSent_ ? Status::ok() : writeCredit();
  }
  Status writeCredit() {
    creditSent_ = consumed_;
    lastCredit_ = Clock::now();
    return writeWord(offsetof(Control, credit), consumed_);
  }

  /// An inline write of `value` into the peer's control word at `offset`:
  /// after every write queued before it.
  Status writeWord(uint64_t offset, uint64_t value) {
    uint64_t seq = 0;
    return conn_->writeInline(&value, sizeof(value),
                              sliceOf(peerControl_, offset, sizeof(value)),
                              &seq);
  }

  std::shared_ptr<IbNetwork> net_; ///< the device and queue pairs
  IbConnection *conn_;
  int peer_;
  uint64_t ringBytes_;
  std::string who_;
  HostBlock in_, out_;
  IbRegion inbox_, outboxRegion_;
  Control *control_ = nullptr;
  char *ring_ = nullptr;
  IbRemote peerControl_, peerRing_;
  bool attached_ = false;
  std::atomic<bool> shut_{false};
  // The sender thread's.
  uint64_t sent_ = 0, tailSent_ = 0;
  // The receiver thread's.
  uint64_t consumed_ = 0, creditSent_ = 0;
  Clock::time_point lastCredit_ = Clock::now();
};

} // namespace

Status connectIbRingStreams(Bootstrap &b, const std::vector<int> &peers,
                            const IbPort &port, const IbOptions &options,
                            FrameStreams *out) {
  const int rank = b.rank(), n = b.nranks();
  std::unique_ptr<IbNetwork> owned;
  MSCCLC_TRY(IbNetwork::connect(b, peers, port, options, &owned));
  std::shared_ptr<IbNetwork> net = std::move(owned);
  // Region p of rank r: its ring for rank p (empty where it has none).
  std::vector<IbRegion> mine(static_cast<size_t>(n));
  std::map<int, std::unique_ptr<IbRingStream>> rings;
  Status s = options.ringBytes >= sizeof(Control)
                 ? Status::ok()
                 : invalidArgument(fmt::format(
                       "ib staged rings of {} bytes: fewer than {}",
                       static_cast<unsigned long long>(options.ringBytes),
                       sizeof(Control)));
  for (int p : peers) {
    if (!s.isOk())
      break;
    auto ring = std::make_unique<IbRingStream>(net, net->connection(p), p,
                                               options.ringBytes);
    s = ring->allocate();
    mine[size_t(p)] = ring->inbox();
    rings[p] = std::move(ring);
  }
  if (!s.isOk()) {
    rings.clear();
    mine.assign(size_t(n), IbRegion());
  }
  std::vector<std::vector<IbRemote>> all;
  MSCCLC_TRY(IbNetwork::exchange(b, mine, &all));
  for (auto &[p, ring] : rings) {
    if (!s.isOk())
      break;
    s = ring->attach(all[size_t(p)][size_t(rank)]);
  }
  MSCCLC_TRY(agreeOnSetUp(b, s, "ib staged rings"));
  for (auto &[p, ring] : rings)
    (*out)[p] = std::move(ring);
  return Status::ok();
}

} // namespace mscclc::rt
