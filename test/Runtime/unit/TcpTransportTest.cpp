//===- TcpTransportTest.cpp - Port channels over frame streams ------------===//
//
// Two ranks whose TcpNetwork's frames travel over each carrier (FrameStream):
//   - Sockets: forked ranks over 127.0.0.1;
//   - IbRing / IbRingSmallerThanASlice ("ib staged", IbRing.h): rank threads
//     whose rings (1 MiB, and 4093 bytes, less than a slice, so every frame
//     wraps around) live on the fake libibverbs (FakeIbVerbs.cpp), as an
//     HCA that registers host memory only (FAKE_IBVERBS_HOST_ONLY), whose
//     writes land late (a tail written before its data, or bytes written
//     over unconsumed ones, shows up as wrong bytes or a refused frame).
// Each runs the same channel tests: puts, signals and flushes of sizes
// around the slice, content checked, from host memory and staged as device
// memory is (through slots, behind copies that lag: a signal seen before
// its data, a slot reused too early or a flush that returns before the
// source was read shows up as wrong bytes); a peer killed mid-transfer and
// a stopped peer turn into errors naming it; a write outside a window is
// refused; drains. Plus the transport choice and the frame checks on plain
// values.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/TcpTransport.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/IbRing.h"
#include "mscclc/runtime/TcpWire.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <dlfcn.h>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kSlice = 64 * 1024;

/// Stands in for a GPU stream: copies and stores run in order on a thread
/// of their own, each a little late, so whatever does not wait for them
/// sees stale bytes.
class LaggingCopier final : public StagingCopier {
public:
  LaggingCopier() : worker_([this] { run(); }) {}
  ~LaggingCopier() override {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  Status copy(void *dst, const void *src, uint64_t size,
              uint64_t *ticket) override {
    std::lock_guard<std::mutex> lock(m_);
    ops_.push_back({static_cast<char *>(dst), static_cast<const char *>(src),
                    size, nullptr, 0});
    *ticket = ++queued_;
    cv_.notify_all();
    return Status::ok();
  }
  Status store(uint64_t *address, uint64_t value) override {
    std::lock_guard<std::mutex> lock(m_);
    ops_.push_back({nullptr, nullptr, 0, address, value});
    ++queued_;
    cv_.notify_all();
    return Status::ok();
  }
  Status fence(uint64_t *ticket) override {
    std::lock_guard<std::mutex> lock(m_);
    ops_.push_back({nullptr, nullptr, 0, nullptr, 0});
    *ticket = ++queued_;
    cv_.notify_all();
    return Status::ok();
  }
  Status wait(uint64_t ticket) override {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_ >= ticket; });
    return Status::ok();
  }

private:
  struct Op {
    char *dst;
    const char *src;
    uint64_t size;
    uint64_t *word;
    uint64_t value;
  };
  void run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !ops_.empty(); });
      if (ops_.empty())
        return;
      Op op = ops_.front();
      ops_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (op.word)
        __atomic_store_n(op.word, op.value, __ATOMIC_RELEASE);
      else if (op.size) // a fence moves nothing
        memcpy(op.dst, op.src, op.size);
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Op> ops_;
  uint64_t queued_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

/// "Device" memory that is host memory, staged as device memory is.
class LaggingBackend final : public StagingBackend {
public:
  Status allocate(size_t bytes, void **out) override {
    *out = malloc(bytes);
    return *out ? Status::ok() : systemError("out of memory");
  }
  void release(void *p) override { free(p); }
  Status copier(void *, std::unique_ptr<StagingCopier> *out) override {
    *out = std::make_unique<LaggingCopier>();
    return Status::ok();
  }
  void bindThread() override {}
};

/// Rank 1's window and semaphore, as rank 0 names them.
struct Remote {
  uint64_t window = 0, windowSize = 0, semaphore = 0;
};

/// Rank 1 registers `window` (and `semaphore` if given); both ranks learn
/// the addresses.
Status shareWindow(int rank, TcpNetwork &net, Bootstrap &b, void *window,
                   uint64_t size, uint64_t *semaphore, MemoryKind kind,
                   Remote *out) {
  Remote mine[2];
  if (rank == 1) {
    uint32_t handle = 0;
    MSCCLC_TRY(net.registerWindow(window, size, kind, &handle));
    if (semaphore)
      MSCCLC_TRY(net.registerSemaphores(semaphore, 1, kind, &handle));
    mine[1] = {reinterpret_cast<uint64_t>(window), size,
               reinterpret_cast<uint64_t>(semaphore)};
  }
  MSCCLC_TRY(b.allGather(mine, sizeof(Remote)));
  *out = mine[1];
  return Status::ok();
}

unsigned char pattern(size_t round, size_t k) {
  return (unsigned char)(round * 131 + k * 7 + (k >> 13));
}

/// A child's failure: said on stderr, exit code 1.
int failed(int rank, const std::string &why) {
  fprintf(stderr, "rank %d: %s\n", rank, why.c_str());
  return 1;
}

/// What the frames travel over (the test's parameter).
struct Carrier {
  const char *name;
  bool rings = false;      ///< IB rings on the fake HCA, else sockets
  uint64_t ringBytes = 0;
};
Carrier carrier; // this test's

/// The fake libibverbs' controls (FakeIbVerbs.cpp).
struct FakeHca {
  void (*lag)(int) = nullptr;
  void (*breakThread)(int) = nullptr;
};
#ifdef MSCCLC_FAKE_IBVERBS
FakeHca fakeHca() {
  void *h = dlopen(MSCCLC_FAKE_IBVERBS, RTLD_NOW);
  EXPECT_NE(h, nullptr) << dlerror();
  FakeHca f;
  f.lag = reinterpret_cast<void (*)(int)>(dlsym(h, "fake_ibverbs_lag"));
  f.breakThread =
      reinterpret_cast<void (*)(int)>(dlsym(h, "fake_ibverbs_break_thread"));
  EXPECT_TRUE(f.lag && f.breakThread);
  return f;
}
#endif

struct Rank {
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<TcpNetwork> net;
};

Status join(const UniqueId &id, int rank, double timeout, Rank *out,
            bool staged = false) {
  MSCCLC_TRY(Bootstrap::create(id, rank, 2, &out->bootstrap));
  TcpOptions o;
  o.sliceBytes = kSlice;
  o.timeoutSeconds = timeout;
  if (staged) {
    o.staging = std::make_shared<LaggingBackend>();
    o.stagingSlots = 3; // fewer than the slices of a large put
  }
  if (!carrier.rings)
    return TcpNetwork::connect(*out->bootstrap, {1 - rank}, o, &out->net);
  IbOptions io;
  io.timeoutSeconds = timeout;
  io.ringBytes = carrier.ringBytes;
  FrameStreams streams;
  MSCCLC_TRY(connectIbRingStreams(*out->bootstrap, {1 - rank},
                                  {"mlx5_0", 1, false}, io, &streams));
  return TcpNetwork::over(rank, std::move(streams), o, &out->net);
}

std::atomic<bool> rank0Done{false};

/// Rank 1 dies here: SIGKILL, or, as a thread, its queue pairs go (as a
/// dead process's do) and it drops its network.
int dieHere(Rank &me) {
  if (!carrier.rings)
    raise(SIGKILL);
#ifdef MSCCLC_FAKE_IBVERBS
  fakeHca().breakThread(1);
#endif
  me.net.reset();
  return 0;
}

/// Rank 1 stops here until rank 0 is done: SIGSTOP (then the parent kills
/// it), or, as a thread, its writes stop landing.
int stopHere(int rank, Rank &me) {
  if (!carrier.rings) {
    raise(SIGSTOP); // killed by the parent once rank 0 is done
    return failed(rank, "went on after SIGSTOP");
  }
#ifdef MSCCLC_FAKE_IBVERBS
  fakeHca().breakThread(2);
#endif
  while (!rank0Done.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  me.net.reset();
  return 0;
}

/// Rank 0 and rank 1 as threads of this process (the fake HCA's queue
/// pairs reach each other only within one); true when both return 0
/// within 20 s. A hang ends the test process.
bool runThreads(const std::function<int(int, const UniqueId &)> &body) {
  UniqueId id;
  if (!createUniqueId(&id).isOk())
    return false;
  std::atomic<int> codes[2] = {-1, -1};
  rank0Done = false;
  std::thread ranks[2] = {std::thread([&] {
                            codes[0] = body(0, id);
                            rank0Done = true;
                          }),
                          std::thread([&] { codes[1] = body(1, id); })};
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (codes[0] == -1 || codes[1] == -1) {
    if (Clock::now() > deadline) {
      fprintf(stderr, "a rank hung\n");
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto &t : ranks)
    t.join();
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 0);
  return codes[0] == 0 && codes[1] == 0;
}

/// Rank 0 and rank 1 in two processes (or threads, for rings); true when
/// both exit 0 within 20 s. `stopped1`: rank 1 may be stopped; it is
/// killed once rank 0 is done. `killed1`: rank 1 kills itself (SIGKILL).
bool runPair(const std::function<int(int, const UniqueId &)> &body,
             bool stopped1 = false, bool killed1 = false) {
  if (carrier.rings)
    return runThreads(body);
  UniqueId id;
  if (!createUniqueId(&id).isOk())
    return false;
  pid_t kids[2];
  for (int r = 0; r < 2; ++r) {
    kids[r] = fork();
    if (kids[r] == 0)
      _exit(body(r, id));
  }
  int codes[2] = {-1, -1};
  auto deadline = Clock::now() + std::chrono::seconds(20);
  for (int left = 2; left > 0;) {
    for (int r = 0; r < 2; ++r) {
      int st = 0;
      if (codes[r] == -1 && waitpid(kids[r], &st, WNOHANG) == kids[r]) {
        codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        --left;
        if (r == 0 && stopped1 && codes[1] == -1)
          kill(kids[1], SIGKILL);
      }
    }
    if (Clock::now() > deadline) {
      for (int r = 0; r < 2; ++r)
        if (codes[r] == -1) {
          kill(kids[r], SIGKILL);
          waitpid(kids[r], nullptr, 0);
        }
      ADD_FAILURE() << "a rank hung";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (stopped1 || (killed1 && codes[1] == 128 + SIGKILL))
    codes[1] = 0; // killed on purpose
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 0);
  return codes[0] == 0 && codes[1] == 0;
}

/// Rank 0 puts into rank 1's window until an error comes (or 10 s pass).
Status putUntilError(Transport &t) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    MSCCLC_TRY(t.put(0, 0, 0, 0, 64ull << 20));
    MSCCLC_TRY(t.signal());
    MSCCLC_TRY(t.flush());
    MSCCLC_TRY(t.asyncError());
  }
  return Status::ok();
}

class FrameTransportTest : public ::testing::TestWithParam<Carrier> {
protected:
  void SetUp() override {
    setenv("MSCCLC_BOOTSTRAP_ADDR", "127.0.0.1", 1);
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "10", 1);
    carrier = GetParam();
#ifdef MSCCLC_FAKE_IBVERBS
    if (carrier.rings) {
      setenv("MSCCLC_IBVERBS_LIBRARY", MSCCLC_FAKE_IBVERBS, 1);
      // The HCAs ib staged is for: host memory registers, nothing else.
      setenv("FAKE_IBVERBS_HOST_ONLY", "1", 1);
      fakeHca().lag(30);
    }
#endif
  }
  void TearDown() override {
#ifdef MSCCLC_FAKE_IBVERBS
    if (carrier.rings)
      fakeHca().lag(0);
#endif
    unsetenv("MSCCLC_IBVERBS_LIBRARY");
    unsetenv("FAKE_IBVERBS_HOST_ONLY");
  }
};

INSTANTIATE_TEST_SUITE_P(
    Carriers, FrameTransportTest,
    ::testing::Values(Carrier{"Sockets"}
#ifdef MSCCLC_FAKE_IBVERBS
                      ,
                      Carrier{"IbRing", true, 1 << 20},
                      Carrier{"IbRingSmallerThanASlice", true, 4093}
#endif
                      ),
    [](const ::testing::TestParamInfo<Carrier> &info) {
      return std::string(info.param.name);
    });

} // namespace

/// Rounds of put, signal, flush of sizes around the slice into one window;
/// rank 1 checks each round's bytes once its signal came. `staged`: both
/// ends as for device memory, through LaggingCopier.
void putsSignalsFlushes(bool staged) {
  std::vector<uint64_t> sizes = {1, kSlice - 1, kSlice + 1, kSlice * 7 / 2,
                                8ull << 20};
  // A ring smaller than a slice wraps about 55 times in 3.5 slices already;
  // 8 MiB through it (2,000 turns, each waiting for credit) takes seconds
  // on a loaded 2-core machine and shows nothing more.
  if (carrier.rings && carrier.ringBytes < kSlice)
    sizes.pop_back();
  uint64_t total = 0;
  for (uint64_t s : sizes)
    total += s + 5; // 5 untouched bytes after each
  EXPECT_TRUE(runPair([&](int rank, const UniqueId &id) {
    Rank me;
    Status s = join(id, rank, 10, &me, staged);
    if (!s.isOk())
      return failed(rank, s.message());
    std::vector<unsigned char> window(total, 0xee);
    uint64_t semaphore = 0;
    MemoryKind kind = staged ? MemoryKind::Device : MemoryKind::Host;
    Remote remote;
    s = shareWindow(rank, *me.net, *me.bootstrap, window.data(), window.size(),
                    &semaphore, kind, &remote);
    if (!s.isOk())
      return failed(rank, s.message());
    if (rank == 0) {
      std::vector<unsigned char> src((8ull << 20) + 3);
      LaggingCopier copier;
      TcpChannelSpec spec;
      spec.src[1] = src.data();
      spec.srcExtent[1] = src.size();
      spec.srcKind = kind;
      spec.copier = &copier;
      spec.dst[2] = remote.window;
      spec.dstExtent[2] = remote.windowSize;
      spec.semaphore = remote.semaphore;
      std::unique_ptr<Transport> t;
      s = me.net->channel(1, spec, &t);
      uint64_t at = 0;
      for (size_t i = 0; i < sizes.size() && s.isOk(); ++i) {
        for (size_t k = 0; k < sizes[i]; ++k)
          src[3 + k] = pattern(i, k);
        s = t->put(1, 3, 2, at, sizes[i]);
        if (s.isOk())
          s = t->signal();
        if (s.isOk())
          s = t->flush();
        // The source may be overwritten now: what was sent must not change.
        for (size_t k = 0; k < sizes[i] && s.isOk(); ++k)
          src[3 + k] = 0x5a;
        at += sizes[i] + 5;
      }
      t.reset(); // before the copier it names
      if (!s.isOk())
        return failed(rank, s.message());
    } else {
      uint64_t at = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        auto deadline = Clock::now() + std::chrono::seconds(10);
        while (__atomic_load_n(&semaphore, __ATOMIC_ACQUIRE) < i + 1) {
          if (Clock::now() > deadline)
            return failed(rank, fmt::format("no signal {}", i + 1));
          if (Status e = me.net->peerError(0); !e.isOk())
            return failed(rank, e.message());
          std::this_thread::yield();
        }
        for (size_t k = 0; k < sizes[i]; ++k)
          if (window[at + k] != pattern(i, k))
            return failed(rank,
                          fmt::format("size {}: byte {} wrong", sizes[i], k));
        for (size_t k = 0; k < 5; ++k)
          if (window[at + sizes[i] + k] != 0xee)
            return failed(rank,
                          fmt::format("size {}: wrote past it", sizes[i]));
        at += sizes[i] + 5;
      }
    }
    s = me.bootstrap->barrier();
    return s.isOk() ? 0 : failed(rank, s.message());
  }));
}

TEST_P(FrameTransportTest, PutsSignalsFlushesAroundTheSlice) {
  putsSignalsFlushes(false);
}

TEST_P(FrameTransportTest, StagedPutsSignalsFlushesThroughFewSlots) {
  putsSignalsFlushes(true);
}

TEST_P(FrameTransportTest, DeviceMemoryWithoutStagingIsRefused) {
  EXPECT_TRUE(runPair([](int rank, const UniqueId &id) {
    Rank me;
    Status s = join(id, rank, 5, &me);
    if (!s.isOk())
      return failed(rank, s.message());
    char buffer[64];
    uint32_t handle = 0;
    s = me.net->registerWindow(buffer, sizeof(buffer), MemoryKind::Device,
                               &handle);
    if (s.isOk())
      return failed(rank, "a device window without staging was accepted");
    TcpChannelSpec spec;
    spec.src[0] = buffer;
    spec.srcExtent[0] = sizeof(buffer);
    spec.srcKind = MemoryKind::Device;
    LaggingCopier copier;
    spec.copier = &copier;
    spec.dst[0] = 4096;
    spec.dstExtent[0] = sizeof(buffer);
    std::unique_ptr<Transport> t;
    if (!(s = me.net->channel(1 - rank, spec, &t)).isOk())
      return failed(rank, s.message());
    s = t->put(0, 0, 0, 0, 8);
    if (s.isOk() || s.message().find("staging") == std::string::npos)
      return failed(rank, "expected a refusal naming staging, got: " +
                              (s.isOk() ? "none" : s.message()));
    t.reset();
    s = me.bootstrap->barrier();
    return s.isOk() ? 0 : failed(rank, s.message());
  }));
}

TEST_P(FrameTransportTest, PeerKilledMidTransferIsAnErrorNamingIt) {
  EXPECT_TRUE(runPair(
      [](int rank, const UniqueId &id) {
        Rank me;
        Status s = join(id, rank, 5, &me);
        std::vector<unsigned char> buffer(64ull << 20);
        uint64_t semaphore = 0;
        Remote remote;
        if (s.isOk())
          s = shareWindow(rank, *me.net, *me.bootstrap, buffer.data(),
                          buffer.size(), &semaphore, MemoryKind::Host, &remote);
        if (!s.isOk())
          return failed(rank, s.message());
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          return dieHere(me);
        }
        TcpChannelSpec spec;
        spec.src[0] = buffer.data();
        spec.srcExtent[0] = buffer.size();
        spec.dst[0] = remote.window;
        spec.dstExtent[0] = remote.windowSize;
        spec.semaphore = remote.semaphore;
        std::unique_ptr<Transport> t;
        if (!(s = me.net->channel(1, spec, &t)).isOk())
          return failed(rank, s.message());
        auto start = Clock::now();
        s = putUntilError(*t);
        if (s.isOk())
          return failed(rank, "no error after the peer died");
        // Found dead, not merely silent for the time-out (5 s), and no
        // thread of the network waits that long to end either.
        if (s.code() == Code::Timeout)
          return failed(rank, "the dead peer only timed out: " + s.message());
        if (s.message().find("rank 1") == std::string::npos)
          return failed(rank, "the error does not name rank 1: " + s.message());
        t.reset();
        me.net.reset();
        if (Clock::now() - start > std::chrono::seconds(4))
          return failed(rank, "finding the dead peer and closing took over 4 s");
        return 0;
      },
      /*stopped1=*/false, /*killed1=*/true));
}

TEST_P(FrameTransportTest, StoppedPeerTimesOut) {
  EXPECT_TRUE(runPair(
      [](int rank, const UniqueId &id) {
        Rank me;
        Status s = join(id, rank, 1, &me);
        std::vector<unsigned char> buffer(64ull << 20);
        uint64_t semaphore = 0;
        Remote remote;
        if (s.isOk())
          s = shareWindow(rank, *me.net, *me.bootstrap, buffer.data(),
                          buffer.size(), &semaphore, MemoryKind::Host, &remote);
        if (!s.isOk())
          return failed(rank, s.message());
        if (rank == 1)
          return stopHere(rank, me);
        TcpChannelSpec spec;
        spec.src[0] = buffer.data();
        spec.srcExtent[0] = buffer.size();
        spec.dst[0] = remote.window;
        spec.dstExtent[0] = remote.windowSize;
        spec.semaphore = remote.semaphore;
        std::unique_ptr<Transport> t;
        if (!(s = me.net->channel(1, spec, &t)).isOk())
          return failed(rank, s.message());
        auto start = Clock::now();
        s = putUntilError(*t);
        if (s.code() != Code::Timeout)
          return failed(rank, "expected a time-out, got: " +
                                  (s.isOk() ? "none" : s.message()));
        if (s.message().find("rank 1") == std::string::npos ||
            s.message().find("MSCCLC_TRANSPORT_TIMEOUT") == std::string::npos)
          return failed(rank, "unhelpful time-out: " + s.message());
        if (Clock::now() - start > std::chrono::seconds(5))
          return failed(rank, "the 1 s time-out took more than 5 s");
        return 0;
      },
      /*stopped1=*/true));
}

TEST_P(FrameTransportTest, WriteOutsideTheWindowIsRefused) {
  EXPECT_TRUE(runPair([](int rank, const UniqueId &id) {
    Rank me;
    Status s = join(id, rank, 5, &me);
    std::vector<unsigned char> buffer(300, 0xab);
    Remote remote;
    if (s.isOk())
      s = shareWindow(rank, *me.net, *me.bootstrap, buffer.data(), 100,
                      nullptr, MemoryKind::Host, &remote);
    if (!s.isOk())
      return failed(rank, s.message());
    auto deadline = Clock::now() + std::chrono::seconds(5);
    if (rank == 1) {
      while ((s = me.net->peerError(0)).isOk()) {
        if (Clock::now() > deadline)
          return failed(rank, "the bad put was not refused");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (s.message().find("out of bounds") == std::string::npos ||
          s.message().find("rank 0") == std::string::npos)
        return failed(rank, "unhelpful refusal: " + s.message());
      for (unsigned char c : buffer)
        if (c != 0xab)
          return failed(rank, "the refused put wrote");
      return 0;
    }
    std::vector<unsigned char> src(300, 0x11);
    TcpChannelSpec spec;
    spec.src[0] = src.data();
    spec.srcExtent[0] = src.size();
    // Rank 1 registered 100 bytes; say 300, so that only it refuses.
    spec.dst[0] = remote.window;
    spec.dstExtent[0] = 300;
    std::unique_ptr<Transport> t;
    if (!(s = me.net->channel(1, spec, &t)).isOk())
      return failed(rank, s.message());
    s = t->put(0, 0, 0, 50, 200); // 100..250 lies outside
    if (!s.isOk())
      return failed(rank, s.message());
    // The receiver closes the refused stream: the sender hears of it, from
    // the flush already or afterwards.
    s = t->flush();
    while (s.isOk()) {
      if (Clock::now() > deadline)
        return failed(rank, "the sender never heard of the refusal");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      s = t->asyncError();
    }
    if (s.message().find("rank 1") == std::string::npos)
      return failed(rank, "the error does not name rank 1: " + s.message());
    return 0;
  }));
}

/// Rank 0 puts staged slices and signals, then both drain at once: when
/// rank 1's drain returns, every byte and the signal have landed, though
/// its copier lags (a drain that did not wait for the frames, or for their
/// device copies, would leave them missing).
TEST_P(FrameTransportTest, DrainReturnsOnceEveryFrameLanded) {
  const uint64_t bytes = kSlice * 9 + 17;
  EXPECT_TRUE(runPair([&](int rank, const UniqueId &id) {
    Rank me;
    Status s = join(id, rank, 10, &me, /*staged=*/true);
    if (!s.isOk())
      return failed(rank, s.message());
    std::vector<unsigned char> window(bytes, 0xee);
    uint64_t semaphore = 0;
    Remote remote;
    s = shareWindow(rank, *me.net, *me.bootstrap, window.data(), bytes,
                    &semaphore, MemoryKind::Device, &remote);
    if (!s.isOk())
      return failed(rank, s.message());
    if (rank == 0) {
      std::vector<unsigned char> src(bytes);
      for (size_t k = 0; k < bytes; ++k)
        src[k] = pattern(1, k);
      LaggingCopier copier;
      TcpChannelSpec spec;
      spec.src[0] = src.data();
      spec.srcExtent[0] = bytes;
      spec.srcKind = MemoryKind::Device;
      spec.copier = &copier;
      spec.dst[1] = remote.window;
      spec.dstExtent[1] = bytes;
      spec.semaphore = remote.semaphore;
      std::unique_ptr<Transport> t;
      s = me.net->channel(1, spec, &t);
      for (int round = 0; round < 3 && s.isOk(); ++round) {
        s = t->put(0, 0, 1, 0, bytes);
        if (s.isOk())
          s = t->signal();
      }
      if (s.isOk())
        s = me.net->drain({1});
      t.reset();
      if (!s.isOk())
        return failed(rank, s.message());
    } else {
      s = me.net->drain({0});
      if (!s.isOk())
        return failed(rank, s.message());
      if (__atomic_load_n(&semaphore, __ATOMIC_ACQUIRE) != 3)
        return failed(rank, fmt::format("semaphore {} after the drain, not 3",
                                        semaphore));
      for (size_t k = 0; k < bytes; ++k)
        if (window[k] != pattern(1, k))
          return failed(rank, fmt::format("byte {} missing after the drain", k));
    }
    s = me.bootstrap->barrier();
    return s.isOk() ? 0 : failed(rank, s.message());
  }));
}

TEST_P(FrameTransportTest, APeerThatDoesNotDrainTimesOut) {
  EXPECT_TRUE(runPair([&](int rank, const UniqueId &id) {
    Rank me;
    Status s = join(id, rank, /*timeout=*/1, &me);
    if (!s.isOk())
      return failed(rank, s.message());
    if (rank == 0) {
      s = me.net->drain({1});
      if (s.isOk() || s.message().find("rank 1 did not drain") == std::string::npos)
        return failed(rank, "drain: " + s.message());
      if (me.net->drain({3}).isOk())
        return failed(rank, "a drain of a rank with no connection");
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    }
    s = me.bootstrap->barrier();
    return s.isOk() ? 0 : failed(rank, s.message());
  }));
}

TEST(TcpWire, FrameChecks) {
  using namespace tcpwire;
  FrameHeader h{kFrameMagic, kFrameData, 0, 0, 0, 100};
  EXPECT_EQ(checkFrameHeader(h, 100), nullptr);
  h.id = 1;
  EXPECT_NE(checkFrameHeader(h, 100), nullptr); // reserved, must be 0
  h.id = 0;
  h.size = 101;
  EXPECT_NE(checkFrameHeader(h, 100), nullptr); // more than a slice
  h.size = 0;
  EXPECT_NE(checkFrameHeader(h, 100), nullptr);
  h = {kFrameMagic, 9, 0, 0, 0, 1};
  EXPECT_NE(checkFrameHeader(h, 100), nullptr);
  h = {kFrameMagic + 1, kFrameSignal, 0, 0, 0, 1};
  EXPECT_NE(checkFrameHeader(h, 100), nullptr);
  h = {kFrameMagic, kFrameSignal, 0, 0, 0, 5};
  EXPECT_EQ(checkFrameHeader(h, 100), nullptr);
  h = {kFrameMagic, kFrameDrain, 0, 0, 0, 0};
  EXPECT_EQ(checkFrameHeader(h, 100), nullptr);
  h.size = 1;
  EXPECT_NE(checkFrameHeader(h, 100), nullptr); // a drain carries nothing
  h = {kFrameMagic, kFrameDrain, 0, 0, 64, 0};
  EXPECT_NE(checkFrameHeader(h, 100), nullptr);

  uint8_t secret[32] = {1, 2, 3};
  wire::Session session;
  session.secret = secret;
  session.purpose = wire::Purpose::TcpPair;
  session.commNonce = 42;
  PairHello p{kPairMagic, 1, 42, {}};
  session.proveMessage(&p, sizeof(p));
  EXPECT_EQ(checkPairHello(p, session, 42, 2), nullptr);
  EXPECT_NE(checkPairHello(p, session, 43, 2), nullptr);
  EXPECT_NE(checkPairHello(p, session, 42, 1), nullptr);
  p.proof[31] ^= 1;
  EXPECT_STREQ(checkPairHello(p, session, 42, 2), "a wrong proof of the secret");
  p.proof[31] ^= 1;
  uint8_t otherSecret[32] = {1, 2, 4};
  wire::Session other = session;
  other.secret = otherSecret;
  other.proveMessage(&p, sizeof(p)); // a stranger's proof
  EXPECT_STREQ(checkPairHello(p, session, 42, 2), "a wrong proof of the secret");
}

/// Per pair: IB verbs where both ends have a port that registers GPU
/// memory, ib staged where both have a port and an end's GPU memory does
/// not register, TCP where an end has no port; and what MSCCLC_TRANSPORT
/// makes of it.
TEST(TransportChoice, EnvironmentVariable) {
  const IbAbility none, port{true, false}, full{true, true};
  TransportKind k;
  std::string why;
  unsetenv("MSCCLC_TRANSPORT");
  ASSERT_TRUE(chooseTransport(true, full, full, &k).isOk());
  EXPECT_EQ(k, TransportKind::CopyEngine);
  struct Case {
    IbAbility mine, theirs;
    TransportKind kind;
    const char *why;
  };
  for (const Case &c :
       {Case{none, none, TransportKind::Tcp, "no IB port at this rank"},
        Case{full, full, TransportKind::Ib, "both ends register"},
        Case{full, port, TransportKind::IbStaged, "the peer's GPU memory does not"},
        Case{port, full, TransportKind::IbStaged, "this rank's GPU memory does not"},
        Case{port, port, TransportKind::IbStaged, "neither end's"},
        Case{full, none, TransportKind::Tcp, "no IB port at the peer"},
        Case{none, port, TransportKind::Tcp, "no IB port at this rank"}}) {
    ASSERT_TRUE(chooseTransport(false, c.mine, c.theirs, &k, &why).isOk());
    EXPECT_EQ(k, c.kind) << c.why;
    EXPECT_NE(why.find(c.why), std::string::npos) << why;
  }
  // A registration without a port cannot happen, and counts for nothing.
  ASSERT_TRUE(chooseTransport(false, {false, true}, full, &k).isOk());
  EXPECT_EQ(k, TransportKind::Tcp);
  EXPECT_FALSE(transportMayUseIb(false));
  EXPECT_TRUE(transportMayUseIb(true));
  EXPECT_STREQ(transportName(TransportKind::IbStaged), "ib staged");

  setenv("MSCCLC_TRANSPORT", "tcp", 1);
  for (IbAbility a : {none, port, full}) {
    ASSERT_TRUE(chooseTransport(true, a, full, &k).isOk());
    EXPECT_EQ(k, TransportKind::Tcp);
    ASSERT_TRUE(chooseTransport(false, full, a, &k, &why).isOk());
    EXPECT_EQ(k, TransportKind::Tcp);
    EXPECT_EQ(why, "MSCCLC_TRANSPORT=tcp");
  }
  EXPECT_FALSE(transportMayUseIb(true));

  setenv("MSCCLC_TRANSPORT", "ib", 1); // even inside a node; or refused
  ASSERT_TRUE(chooseTransport(true, full, full, &k).isOk());
  EXPECT_EQ(k, TransportKind::Ib);
  ASSERT_TRUE(chooseTransport(false, port, full, &k, &why).isOk());
  EXPECT_EQ(k, TransportKind::IbStaged); // accepted, staged
  EXPECT_NE(why.find("MSCCLC_TRANSPORT=ib"), std::string::npos) << why;
  ASSERT_TRUE(chooseTransport(true, port, port, &k).isOk());
  EXPECT_EQ(k, TransportKind::IbStaged);
  Status refused = chooseTransport(false, none, none, &k);
  EXPECT_EQ(refused.code(), Code::Unsupported);
  EXPECT_NE(refused.message().find("no IB verbs"), std::string::npos);
  EXPECT_EQ(chooseTransport(false, full, none, &k).code(), Code::Unsupported);
  EXPECT_TRUE(transportMayUseIb(false));
  EXPECT_TRUE(transportRequiresIb());
  EXPECT_TRUE(checkTransportVariable().isOk());

  setenv("MSCCLC_TRANSPORT", "carrier-pigeon", 1);
  Status s = chooseTransport(true, none, none, &k);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("MSCCLC_TRANSPORT"), std::string::npos);
  EXPECT_FALSE(checkTransportVariable().isOk());
  unsetenv("MSCCLC_TRANSPORT");
}

TEST(TcpOptions, Environment) {
  TcpOptions o;
  setenv("MSCCLC_TCP_SLICE_BYTES", "4096", 1);
  setenv("MSCCLC_TRANSPORT_TIMEOUT", "2.5", 1);
  ASSERT_TRUE(tcpOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.sliceBytes, 4096u);
  EXPECT_EQ(o.timeoutSeconds, 2.5);
  setenv("MSCCLC_TCP_SLICE_BYTES", "12", 1);
  EXPECT_FALSE(tcpOptionsFromEnv(&o).isOk());
  // Sizes of the settings module: binary suffixes (once decimal bytes only).
  setenv("MSCCLC_TCP_SLICE_BYTES", "64K", 1);
  ASSERT_TRUE(tcpOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.sliceBytes, 65536u);
  setenv("MSCCLC_TRANSPORT_TIMEOUT", "-1", 1);
  EXPECT_FALSE(tcpOptionsFromEnv(&o).isOk());
  // Once any positive number: "inf" never timed out, 1e10 overflowed the
  // deadline. Now 0.001 to 86400 s, as the IB transport reads it.
  for (const char *bad : {"inf", "1e10", "0x1p3"}) {
    setenv("MSCCLC_TRANSPORT_TIMEOUT", bad, 1);
    EXPECT_EQ(tcpOptionsFromEnv(&o).message(),
              fmt::format("MSCCLC_TRANSPORT_TIMEOUT='{}': expected a number of "
                          "seconds from 0.001 to 86400",
                          bad));
  }
  unsetenv("MSCCLC_TCP_SLICE_BYTES");
  unsetenv("MSCCLC_TRANSPORT_TIMEOUT");
  ASSERT_TRUE(tcpOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.sliceBytes, 512u * 1024);
}
