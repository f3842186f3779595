//===- IbConnectionTest.cpp - Port channels over IB verbs, on a fake HCA --===//
//
// IbConnection and its port channels against the fake libibverbs
// (FakeIbVerbs.cpp), which checks every queue-pair transition and key and
// executes RDMA writes in process: two connections of one process connect
// to each other, as two ranks' would. Puts (cut into messages), signals
// after their data, flushes, a send queue that never overflows, and the
// errors: a bad remote key, a put outside the regions, a peer that never
// completes, InfiniBand against RoCE, bad environment values; GPU memory
// registered as a dma-buf, else through nvidia-peermem, else refused; a
// rank's readiness (a port that registers GPU memory); an HCA that
// registers host memory only (FAKE_IBVERBS_HOST_ONLY), on which unmapped
// and inaccessible pages and dma-bufs are refused and a rank's pairs are ib
// staged. And
// IbNetwork: 3 ranks as threads over a real bootstrap connect every pair
// and move data around a ring; a rank that cannot open its port fails,
// and the others say which rank it was instead of waiting; registrations
// are shared per allocation, their keys exchanged, and a quiesce waits for
// every write (or names the connection whose writes never complete).
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/IbConnection.h"

#include "RankThreads.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#include <numeric>
#include <vector>

using namespace mscclc::rt;

namespace {

/// The fake library's controls.
struct Fake {
  void (*stall)(int) = nullptr;
  unsigned long long (*writes)() = nullptr;
  void (*refuseRegMr)(int) = nullptr;
};

Fake fake() {
  void *h = dlopen(MSCCLC_FAKE_IBVERBS, RTLD_NOW);
  EXPECT_NE(h, nullptr) << dlerror();
  Fake f;
  f.stall = reinterpret_cast<void (*)(int)>(dlsym(h, "fake_ibverbs_stall"));
  f.writes = reinterpret_cast<unsigned long long (*)()>(dlsym(h, "fake_ibverbs_writes"));
  f.refuseRegMr = reinterpret_cast<void (*)(int)>(dlsym(h, "fake_ibverbs_refuse_reg_mr"));
  EXPECT_TRUE(f.stall && f.writes && f.refuseRegMr);
  return f;
}

/// Two connected ends, "rank 0" and "rank 1", each on its own opening of
/// `device`.
struct Pair {
  std::unique_ptr<IbDevice> deviceA, deviceB;
  std::unique_ptr<IbConnection> a, b; // a reaches rank 1, b rank 0
};

Pair connectedPair(const IbOptions &options, const char *device = "mlx5_0") {
  Pair p;
  IbPort port{device, 1, std::string(device) == "mlx5_1"};
  Status s = IbDevice::open(port, options, &p.deviceA);
  EXPECT_TRUE(s.isOk()) << s.message();
  s = IbDevice::open(port, options, &p.deviceB);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (!p.deviceA || !p.deviceB)
    return p;
  s = IbConnection::open(*p.deviceA, 1, &p.a);
  EXPECT_TRUE(s.isOk()) << s.message();
  s = IbConnection::open(*p.deviceB, 0, &p.b);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (!p.a || !p.b)
    return p;
  s = p.a->connect(p.b->local());
  EXPECT_TRUE(s.isOk()) << s.message();
  s = p.b->connect(p.a->local());
  EXPECT_TRUE(s.isOk()) << s.message();
  return p;
}

/// Host buffers of one rank, registered on its device.
struct Buffers {
  std::vector<char> input, output, scratch;
  std::vector<uint64_t> semaphores;
  IbRegion region[3], semaphoreRegion;
  IbDevice &device; ///< registered on; outlives the buffers

  Buffers(IbDevice &c, size_t bytes)
      : input(bytes), output(bytes), scratch(bytes), semaphores(4, 0),
        device(c) {
    std::iota(input.begin(), input.end(), char(1));
    char *bases[3] = {input.data(), output.data(), scratch.data()};
    for (int b = 0; b < 3; ++b) {
      Status s = c.registerHost(bases[b], bytes, &region[b]);
      EXPECT_TRUE(s.isOk()) << s.message();
    }
    Status s = c.registerHost(semaphores.data(),
                              semaphores.size() * sizeof(uint64_t), &semaphoreRegion);
    EXPECT_TRUE(s.isOk()) << s.message();
  }
  ~Buffers() {
    for (const IbRegion &r : region)
      device.deregister(r);
    device.deregister(semaphoreRegion);
  }
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;
};

IbRemote remoteOf(const IbRegion &r) { return {r.address, r.bytes, r.rkey}; }

/// A channel from `from`'s buffers to `to`'s, raising `to`'s semaphore 2.
IbChannelSpec specOf(const Buffers &from, const Buffers &to) {
  IbChannelSpec spec;
  for (int b = 0; b < 3; ++b) {
    spec.src[b] = from.region[b];
    spec.dst[b] = remoteOf(to.region[b]);
  }
  spec.semaphore = remoteOf(to.semaphoreRegion);
  spec.semaphore.address += 2 * sizeof(uint64_t);
  spec.semaphore.bytes = sizeof(uint64_t);
  spec.planIndex = 3;
  return spec;
}

class IbConnectionTest : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("MSCCLC_IBVERBS_LIBRARY", MSCCLC_FAKE_IBVERBS, 1);
    controls = fake();
  }
  void TearDown() override {
    controls.stall(0);
    controls.refuseRegMr(0);
    for (const char *v : {"MSCCLC_IBVERBS_LIBRARY", "MSCCLC_IB_GID_INDEX",
                          "NCCL_IB_GID_INDEX", "MSCCLC_IB_TIMEOUT",
                          "NCCL_IB_TIMEOUT", "MSCCLC_TRANSPORT_TIMEOUT",
                          "FAKE_IBVERBS_HOST_ONLY", "MSCCLC_TRANSPORT",
                          "MSCCLC_IB_RING_BYTES"})
      unsetenv(v);
  }
  Fake controls;
};

} // namespace

TEST_F(IbConnectionTest, EndpointsDescribeTheirPorts) {
  IbOptions options;
  Pair ib = connectedPair(options, "mlx5_0");
  ASSERT_TRUE(ib.a && ib.b);
  EXPECT_EQ(ib.a->local().lid, 7);
  EXPECT_EQ(ib.a->local().ethernet, 0);
  EXPECT_EQ(ib.a->local().mtu, IBV_MTU_4096);
  EXPECT_NE(ib.a->local().qpn, ib.b->local().qpn);
  EXPECT_LE(ib.a->local().psn, 0xffffffu);

  options.gidIndex = 3;
  Pair roce = connectedPair(options, "mlx5_1");
  ASSERT_TRUE(roce.a && roce.b);
  EXPECT_EQ(roce.a->local().ethernet, 1);
  EXPECT_EQ(roce.a->local().gid[0], 0xfe);
  EXPECT_EQ(roce.a->local().gid[15], 3);
  EXPECT_EQ(roce.a->local().gidIndex, 3);
}

TEST_F(IbConnectionTest, PutsLandAndSignalsFollowTheirData) {
  IbOptions options;
  options.maxMessageBytes = 1000; // a put of 2500 bytes is 3 writes
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 4096), theirs(*p.deviceB, 4096);
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), specOf(mine, theirs), &channel).isOk());
  EXPECT_EQ(channel->kind(), TransportKind::Ib);

  unsigned long long before = controls.writes();
  // input[10, 2510) -> output[100, 2600), then the signal.
  ASSERT_TRUE(channel->put(0, 10, 1, 100, 2500).isOk());
  ASSERT_TRUE(channel->signal().isOk());
  EXPECT_EQ(controls.writes() - before, 3u + 1u);
  EXPECT_EQ(theirs.semaphores[2], 1u);
  EXPECT_EQ(0, memcmp(theirs.output.data() + 100, mine.input.data() + 10, 2500));
  EXPECT_EQ(theirs.output[99], 0);
  EXPECT_EQ(theirs.output[2600], 0);
  // A zero-byte put moves nothing; into scratch; a second signal.
  ASSERT_TRUE(channel->put(0, 0, 2, 0, 0).isOk());
  ASSERT_TRUE(channel->put(1, 0, 2, 7, 1).isOk());
  ASSERT_TRUE(channel->signal().isOk());
  ASSERT_TRUE(channel->flush().isOk());
  EXPECT_EQ(theirs.semaphores[2], 2u);
  EXPECT_EQ(theirs.scratch[7], mine.output[0]);
  EXPECT_TRUE(channel->asyncError().isOk());
}

TEST_F(IbConnectionTest, ASharedCounterRaisesOneSemaphore) {
  IbOptions options;
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 64), theirs(*p.deviceB, 64);
  uint64_t counter = 40;
  IbChannelSpec spec = specOf(mine, theirs);
  spec.counter = &counter;
  std::unique_ptr<Transport> first, second;
  ASSERT_TRUE(makeIbChannel(p.a.get(), spec, &first).isOk());
  ASSERT_TRUE(makeIbChannel(p.a.get(), spec, &second).isOk());
  ASSERT_TRUE(first->signal().isOk());
  ASSERT_TRUE(second->signal().isOk());
  ASSERT_TRUE(second->flush().isOk());
  EXPECT_EQ(theirs.semaphores[2], 42u);
  EXPECT_EQ(counter, 42u);
}

TEST_F(IbConnectionTest, ManyPutsNeverOverflowTheSendQueue) {
  IbOptions options;
  options.sendDepth = 8; // the fake refuses a ninth outstanding write
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 1024), theirs(*p.deviceB, 1024);
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), specOf(mine, theirs), &channel).isOk());
  for (int i = 0; i < 1000; ++i) {
    Status s = channel->put(0, uint64_t(i % 1000), 1, uint64_t(i % 1000), 1);
    ASSERT_TRUE(s.isOk()) << i << ": " << s.message();
    if (i % 7 == 0)
      ASSERT_TRUE(channel->signal().isOk());
  }
  ASSERT_TRUE(channel->flush().isOk());
  EXPECT_EQ(0, memcmp(theirs.output.data(), mine.input.data(), 1000));
  EXPECT_EQ(theirs.semaphores[2], 143u);
}

TEST_F(IbConnectionTest, ABadRemoteKeyFailsTheFlushNamingThePeer) {
  IbOptions options;
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 256), theirs(*p.deviceB, 256);
  IbChannelSpec spec = specOf(mine, theirs);
  spec.dst[1].rkey += 1000; // a key the peer never handed out
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), spec, &channel).isOk());
  ASSERT_TRUE(channel->put(0, 0, 1, 0, 128).isOk()); // queued: fails later
  Status s = channel->flush();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("remote access error"), std::string::npos) << s.message();
  // From then on every call reports it; nothing else lands.
  EXPECT_EQ(channel->asyncError().message(), s.message());
  EXPECT_FALSE(channel->signal().isOk());
  EXPECT_EQ(theirs.semaphores[2], 0u);
  EXPECT_EQ(theirs.output[0], 0);
}

TEST_F(IbConnectionTest, PutsOutsideTheRegionsAreRefused) {
  IbOptions options;
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 256), theirs(*p.deviceB, 256);
  IbChannelSpec spec = specOf(mine, theirs);
  spec.dst[2] = {}; // the peer's scratch is not reachable
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), spec, &channel).isOk());
  unsigned long long before = controls.writes();
  EXPECT_FALSE(channel->put(0, 200, 1, 0, 57).isOk());  // past the source
  EXPECT_FALSE(channel->put(0, 0, 1, 255, 2).isOk());   // past the target
  EXPECT_FALSE(channel->put(0, 0, 2, 0, 1).isOk());     // unreachable
  EXPECT_FALSE(channel->put(3, 0, 1, 0, 1).isOk());     // no such buffer
  EXPECT_FALSE(channel->put(0, ~0ull, 1, 0, 2).isOk()); // overflow
  EXPECT_EQ(controls.writes(), before);
  // The connection itself is fine.
  EXPECT_TRUE(channel->asyncError().isOk());
  EXPECT_TRUE(channel->put(0, 0, 1, 0, 256).isOk());
  EXPECT_TRUE(channel->flush().isOk());
}

TEST_F(IbConnectionTest, APeerThatNeverCompletesTimesOut) {
  IbOptions options;
  options.timeoutSeconds = 0.2;
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  Buffers mine(*p.deviceA, 64), theirs(*p.deviceB, 64);
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), specOf(mine, theirs), &channel).isOk());
  controls.stall(1);
  ASSERT_TRUE(channel->put(0, 0, 1, 0, 64).isOk());
  Status s = channel->flush();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no completion within"), std::string::npos) << s.message();
}

TEST_F(IbConnectionTest, WritesNeedAConnectedQueuePair) {
  IbOptions options;
  std::unique_ptr<IbDevice> device;
  ASSERT_TRUE(IbDevice::open({"mlx5_0", 1, false}, options, &device).isOk());
  std::unique_ptr<IbConnection> alone;
  ASSERT_TRUE(IbConnection::open(*device, 5, &alone).isOk());
  Buffers mine(*device, 64);
  uint64_t seq = 0;
  Status s = alone->write(mine.region[0], 0, remoteOf(mine.region[1]), 0, 8, &seq);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("before connect()"), std::string::npos) << s.message();
}

TEST_F(IbConnectionTest, InfinibandAndRoceDoNotConnect) {
  IbOptions options;
  std::unique_ptr<IbDevice> ibDevice, roceDevice;
  ASSERT_TRUE(IbDevice::open({"mlx5_0", 1, false}, options, &ibDevice).isOk());
  ASSERT_TRUE(IbDevice::open({"mlx5_1", 1, true}, options, &roceDevice).isOk());
  std::unique_ptr<IbConnection> ib, roce;
  ASSERT_TRUE(IbConnection::open(*ibDevice, 1, &ib).isOk());
  ASSERT_TRUE(IbConnection::open(*roceDevice, 0, &roce).isOk());
  Status s = ib->connect(roce->local());
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 1's port is RoCE and ours InfiniBand"),
            std::string::npos)
      << s.message();
}

TEST_F(IbConnectionTest, PortsThatDoNotServeAreErrors) {
  IbOptions options;
  std::unique_ptr<IbDevice> d;
  Status s = IbDevice::open({"mlx5_0", 2, false}, options, &d);
  EXPECT_NE(s.message().find("IB device mlx5_0:2: the port is not active"),
            std::string::npos) << s.message();
  s = IbDevice::open({"mlx5_9", 1, false}, options, &d);
  EXPECT_NE(s.message().find("does not open"), std::string::npos) << s.message();
  options.gidIndex = 9; // the fake RoCE port has GIDs 0 to 3
  s = IbDevice::open({"mlx5_1", 1, true}, options, &d);
  EXPECT_NE(s.message().find("no GID at index 9"), std::string::npos) << s.message();
  EXPECT_EQ(d, nullptr);
}

TEST_F(IbConnectionTest, OptionsFromTheEnvironment) {
  IbOptions o;
  ASSERT_TRUE(ibOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.gidIndex, 0);
  setenv("NCCL_IB_GID_INDEX", "3", 1);
  setenv("NCCL_IB_TIMEOUT", "18", 1);
  ASSERT_TRUE(ibOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.gidIndex, 3);
  EXPECT_EQ(o.ackTimeout, 18);
  setenv("MSCCLC_IB_GID_INDEX", "1", 1); // ours wins
  ASSERT_TRUE(ibOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.gidIndex, 1);
  setenv("MSCCLC_IB_TIMEOUT", "40", 1);
  Status s = ibOptionsFromEnv(&o);
  EXPECT_NE(s.message().find("MSCCLC_IB_TIMEOUT='40'"), std::string::npos) << s.message();
  unsetenv("MSCCLC_IB_TIMEOUT");
  setenv("MSCCLC_IB_GID_INDEX", "x", 1);
  s = ibOptionsFromEnv(&o);
  EXPECT_NE(s.message().find("MSCCLC_IB_GID_INDEX='x'"), std::string::npos) << s.message();
  unsetenv("MSCCLC_IB_GID_INDEX");
  // The ib staged ring: 4 MiB unless set, a set size taken, one below the
  // smallest refused with the variable named.
  ASSERT_TRUE(ibOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.ringBytes, uint64_t(4) << 20);
  setenv("MSCCLC_IB_RING_BYTES", "65536", 1);
  ASSERT_TRUE(ibOptionsFromEnv(&o).isOk());
  EXPECT_EQ(o.ringBytes, 65536u);
  setenv("MSCCLC_IB_RING_BYTES", "100", 1);
  s = ibOptionsFromEnv(&o);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("MSCCLC_IB_RING_BYTES='100'"), std::string::npos) << s.message();
}

TEST_F(IbConnectionTest, ANetworkConnectsEveryPairThroughTheBootstrap) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  const int n = 3;
  IbOptions options;
  // Rank r's output and semaphore, registered on its device, are where
  // rank r-1 writes; the regions cross threads by this table, as they
  // would by an exchange.
  std::vector<std::vector<char>> outputs(n, std::vector<char>(64, 0));
  std::vector<uint64_t> semaphores(n, 0);
  std::vector<IbRemote> outputAt(n), semaphoreAt(n);
  std::vector<std::unique_ptr<IbNetwork>> nets(n);
  test::expectAllOk(test::onRankThreads(id, n, [&](Bootstrap &b) {
    const int r = b.rank();
    std::vector<int> peers;
    for (int p = 0; p < n; ++p)
      if (p != r)
        peers.push_back(p);
    MSCCLC_TRY(IbNetwork::connect(b, peers, {"mlx5_0", 1, false}, options,
                                  &nets[size_t(r)]));
    if (nets[size_t(r)]->peers() != peers)
      return internalError("the network does not reach every peer");
    IbDevice *device = nets[size_t(r)]->device();
    IbRegion out, sem;
    MSCCLC_TRY(device->registerHost(outputs[size_t(r)].data(), 64, &out));
    MSCCLC_TRY(device->registerHost(&semaphores[size_t(r)], 8, &sem));
    outputAt[size_t(r)] = remoteOf(out);
    semaphoreAt[size_t(r)] = remoteOf(sem);
    MSCCLC_TRY(b.barrier());
    // Rank r writes its message into rank r+1's output, then signals.
    IbConnection *to = nets[size_t(r)]->connection((r + 1) % n);
    std::vector<char> message(64, char('a' + r));
    IbRegion src;
    MSCCLC_TRY(device->registerHost(message.data(), 64, &src));
    IbChannelSpec spec;
    spec.src[0] = src;
    spec.dst[1] = outputAt[size_t((r + 1) % n)];
    spec.semaphore = semaphoreAt[size_t((r + 1) % n)];
    std::unique_ptr<Transport> channel;
    MSCCLC_TRY(makeIbChannel(to, spec, &channel));
    MSCCLC_TRY(channel->put(0, 0, 1, 0, 64));
    MSCCLC_TRY(channel->signal());
    MSCCLC_TRY(channel->flush());
    device->deregister(src);
    MSCCLC_TRY(b.barrier());
    device->deregister(out);
    device->deregister(sem);
    return Status::ok();
  }));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(outputs[size_t(r)], std::vector<char>(64, char('a' + (r + n - 1) % n)))
        << "rank " << r;
    EXPECT_EQ(semaphores[size_t(r)], 1u) << "rank " << r;
  }
}

TEST_F(IbConnectionTest, ARankThatCannotOpenItsPortFailsEveryRank) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  IbOptions options;
  std::vector<Status> statuses = test::onRankThreads(id, 2, [&](Bootstrap &b) {
    // Rank 1 names a port that is down.
    IbPort port{"mlx5_0", b.rank() == 1 ? 2 : 1, false};
    std::unique_ptr<IbNetwork> net;
    return IbNetwork::connect(b, {1 - b.rank()}, port, options, &net);
  });
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_NE(statuses[1].message().find("not active"), std::string::npos)
      << statuses[1].message();
  EXPECT_NE(statuses[0].message().find("rank 1 opened no IB connection to rank 0"),
            std::string::npos)
      << statuses[0].message();
}

/// An exporter standing in for CUDA's: a memfd for any range, recording it.
struct MemfdExporter {
  uint64_t base = 0, bytes = 0;
  DmaBufExporter exporter() {
    return [this](void *b, uint64_t n, int *fd) {
      base = reinterpret_cast<uint64_t>(b);
      bytes = n;
      *fd = memfd_create("fake-dma-buf", 0);
      return *fd >= 0 ? Status::ok() : systemError("memfd_create");
    };
  }
};

/// GPU memory refused both ways: Unsupported, with the dma-buf's reason
/// and nvidia-peermem's.
static void expectRefusedBothWays(const Status &s, const std::string &dmaBufWhy) {
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), Code::Unsupported);
  for (const std::string &why :
       {dmaBufWhy, std::string("nvidia-peermem (ibv_reg_mr: Bad address)")})
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
}

TEST_F(IbConnectionTest, GpuMemoryRegistersAsADmaBufFirst) {
  IbOptions options;
  Pair p = connectedPair(options);
  ASSERT_TRUE(p.a && p.b);
  // "GPU memory" of rank 1 that rank 0 writes, off a page boundary.
  std::vector<char> gpu(3 * 4096 + 100, 0);
  char *target = gpu.data() + 4096 + 10;
  MemfdExporter exporter;
  IbRegion region;
  std::string how;
  Status s = p.deviceB->registerDevice(target, 5000, exporter.exporter(),
                                       &region, &how);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(how, "dma-buf");
  // The exported range is whole pages around the buffer.
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t at = reinterpret_cast<uint64_t>(target);
  EXPECT_EQ(exporter.base % page, 0u);
  EXPECT_EQ(exporter.bytes % page, 0u);
  EXPECT_LE(exporter.base, at);
  EXPECT_GE(exporter.base + exporter.bytes, at + 5000);
  // A write into it lands.
  Buffers mine(*p.deviceA, 5000), theirs(*p.deviceB, 64);
  IbChannelSpec spec = specOf(mine, theirs);
  spec.dst[1] = remoteOf(region);
  std::unique_ptr<Transport> channel;
  ASSERT_TRUE(makeIbChannel(p.a.get(), spec, &channel).isOk());
  ASSERT_TRUE(channel->put(0, 0, 1, 0, 5000).isOk());
  ASSERT_TRUE(channel->flush().isOk());
  EXPECT_EQ(0, memcmp(target, mine.input.data(), 5000));
  p.deviceB->deregister(region);
}

TEST_F(IbConnectionTest, GpuMemoryFallsBackToPeermemThenRefuses) {
  IbOptions options;
  std::unique_ptr<IbDevice> device;
  ASSERT_TRUE(IbDevice::open({"mlx5_0", 1, false}, options, &device).isOk());
  std::vector<char> gpu(4096);
  DmaBufExporter noDmaBuf = [](void *, uint64_t, int *) {
    return unsupported("the CUDA driver has no cuMemGetHandleForAddressRange");
  };
  IbRegion region;
  std::string how;
  Status s = device->registerDevice(gpu.data(), 4096, noDmaBuf, &region, &how);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(how, "nvidia-peermem");
  device->deregister(region);
  // A descriptor that is not open: also nvidia-peermem.
  DmaBufExporter badFd = [](void *, uint64_t, int *fd) {
    *fd = 1000000;
    return Status::ok();
  };
  ASSERT_TRUE(device->registerDevice(gpu.data(), 4096, badFd, &region, &how).isOk());
  EXPECT_EQ(how, "nvidia-peermem");
  device->deregister(region);
  // Neither way: refused with both reasons, for the caller to stage.
  controls.refuseRegMr(1);
  s = device->registerDevice(gpu.data(), 4096, noDmaBuf, &region, &how);
  expectRefusedBothWays(s, "no cuMemGetHandleForAddressRange");
  EXPECT_NE(s.message().find("MSCCLC_TRANSPORT=tcp stages it through pinned host memory"),
            std::string::npos)
      << s.message();
}

TEST_F(IbConnectionTest, ReadinessNeedsAPortThatRegistersGpuMemory) {
  IbOptions options;
  std::vector<char> memory(1 << 16); // stands in for GPU memory
  IbProbe probe = probeIbDevices();
  ASSERT_FALSE(probe.ports.empty()) << probe.why;
  IbReadiness r =
      findIbReadiness(probe, options, memory.data(), memory.size(), nullptr);
  EXPECT_TRUE(r.ready) << r.detail;
  EXPECT_TRUE(r.hasPort);
  EXPECT_EQ(r.port.device, "mlx5_0");
  EXPECT_EQ(r.detail, "mlx5_0:1 (InfiniBand), GPU memory through nvidia-peermem");
  const IbReadiness full = r;
  // A port that cannot reach GPU memory is not ready, and says why; it
  // still has its port, which ib staged uses.
  controls.refuseRegMr(1);
  r = findIbReadiness(probe, options, memory.data(), memory.size(), nullptr);
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(r.hasPort);
  EXPECT_EQ(r.port.device, "mlx5_0");
  EXPECT_NE(r.detail.find("registers neither as a dma-buf"), std::string::npos)
      << r.detail;
  // The pairs these findings make: staged where one end does not register.
  TransportKind k;
  ASSERT_TRUE(chooseTransport(false, full.ability(), full.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::Ib);
  ASSERT_TRUE(chooseTransport(false, full.ability(), r.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::IbStaged);
  // No port: the probe's reason.
  IbProbe none;
  none.why = "no RDMA device (ibv_get_device_list found none)";
  r = findIbReadiness(none, options, memory.data(), memory.size(), nullptr);
  EXPECT_FALSE(r.ready);
  EXPECT_FALSE(r.hasPort);
  EXPECT_EQ(r.detail, none.why);
  ASSERT_TRUE(chooseTransport(false, full.ability(), r.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::Tcp);
}

TEST_F(IbConnectionTest, AHostOnlyHcaRegistersHostMemoryAndStagesGpuMemory) {
  setenv("FAKE_IBVERBS_HOST_ONLY", "1", 1);
  IbOptions options;
  std::unique_ptr<IbDevice> device;
  ASSERT_TRUE(IbDevice::open({"mlx5_0", 1, false}, options, &device).isOk());
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  auto map = [&](size_t pages, int prot) {
    void *p = mmap(nullptr, pages * page, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    return static_cast<char *>(p);
  };
  auto registers = [&](void *base, size_t bytes) {
    IbRegion region;
    if (!device->registerHost(base, bytes, &region).isOk())
      return false;
    device->deregister(region);
    return true;
  };
  // Host memory registers: the heap, and mapped pages off their boundary
  // (pinned host memory is mapped like them).
  std::vector<char> heap(3 * page);
  EXPECT_TRUE(registers(heap.data() + 10, heap.size() - 10));
  char *mapped = map(3, PROT_READ | PROT_WRITE);
  EXPECT_TRUE(registers(mapped + 100, 2 * page));
  // What the CPU cannot touch does not: an address whose pages were
  // unmapped, a PROT_NONE reservation (as the CUDA driver keeps around GPU
  // memory), a range that runs past its mapping, and read-only pages for a
  // registration that is written.
  char *gone = map(2, PROT_READ | PROT_WRITE);
  ASSERT_EQ(munmap(gone, 2 * page), 0);
  EXPECT_FALSE(registers(gone, page));
  char *reserved = map(4, PROT_NONE);
  EXPECT_FALSE(registers(reserved + page, page));
  ASSERT_EQ(munmap(mapped + 2 * page, page), 0);
  EXPECT_FALSE(registers(mapped + page, 2 * page));
  EXPECT_TRUE(registers(mapped, 2 * page));
  char *readOnly = map(1, PROT_READ);
  EXPECT_FALSE(registers(readOnly, page));
  IbRegion region;
  Status s = device->registerHost(reserved, page, &region);
  EXPECT_NE(s.message().find("Bad address"), std::string::npos) << s.message();
  // No dma-buf either: GPU memory is refused both ways, with both reasons.
  MemfdExporter exporter;
  std::string how;
  s = device->registerDevice(reserved, 2 * page, exporter.exporter(), &region, &how);
  expectRefusedBothWays(s, "ibv_reg_dmabuf_mr: Operation not supported");

  // A rank's readiness on such an HCA, as learnIbReadiness finds it from
  // its cudaMalloc'd memory (here the reservation): a port, GPU memory that
  // does not register; between nodes, and under MSCCLC_TRANSPORT=ib, its
  // pairs are ib staged.
  IbProbe probe = probeIbDevices();
  IbReadiness r = findIbReadiness(probe, options, reserved, 2 * page,
                                  exporter.exporter());
  EXPECT_TRUE(r.hasPort) << r.detail;
  EXPECT_FALSE(r.ready);
  EXPECT_NE(r.detail.find("registers neither as a dma-buf"), std::string::npos)
      << r.detail;
  EXPECT_TRUE(transportMayUseIb(true));
  TransportKind k;
  std::string why;
  ASSERT_TRUE(chooseTransport(false, r.ability(), r.ability(), &k, &why).isOk());
  EXPECT_EQ(k, TransportKind::IbStaged);
  EXPECT_NE(why.find("neither end's GPU memory"), std::string::npos) << why;
  ASSERT_TRUE(chooseTransport(true, r.ability(), r.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::CopyEngine);
  setenv("MSCCLC_TRANSPORT", "ib", 1);
  ASSERT_TRUE(chooseTransport(true, r.ability(), r.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::IbStaged);
  unsetenv("MSCCLC_TRANSPORT");
  munmap(mapped, 2 * page);
  munmap(reserved, 4 * page);
  munmap(readOnly, page);
}

TEST_F(IbConnectionTest, NetworksShareRegistrationsAndExchangeKeys) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  IbOptions options;
  options.timeoutSeconds = 0.2;
  std::vector<std::vector<char>> buffers(2, std::vector<char>(8192, 0));
  std::iota(buffers[0].begin(), buffers[0].end(), char(3));
  test::expectAllOk(test::onRankThreads(id, 2, [&](Bootstrap &b) -> Status {
    const int r = b.rank();
    std::unique_ptr<IbNetwork> net;
    MSCCLC_TRY(IbNetwork::connect(b, {1 - r}, {"mlx5_0", 1, false}, options, &net));
    char *mine = buffers[size_t(r)].data();
    // One registration per allocation, however often it is asked for.
    IbRegion first, again, other;
    MSCCLC_TRY(net->acquire(mine, 8192, 7, nullptr, &first));
    MSCCLC_TRY(net->acquire(mine, 8192, 7, nullptr, &again));
    if (net->registrations() != 1 || again.handle != first.handle)
      return internalError("the same allocation registered twice");
    // Memory freed and allocated again at the same address is new.
    MSCCLC_TRY(net->acquire(mine, 8192, 8, nullptr, &other));
    if (net->registrations() != 2)
      return internalError("a new allocation shares an old registration");
    IbRegion wrong;
    if (net->acquire(mine, 4096, 7, nullptr, &wrong).isOk())
      return internalError("an allocation asked for with another size");
    net->release(other);
    net->release(sliceOf(again, 100)); // a slice names its registration
    if (net->registrations() != 1)
      return internalError("a release did not drop its registration");

    // The peer learns the key; rank 0 writes bytes 100.. of its buffer
    // into rank 1's at offset 50.
    std::vector<std::vector<IbRemote>> all;
    MSCCLC_TRY(IbNetwork::exchange(b, {sliceOf(first, 0)}, &all));
    if (all.size() != 2 || all[size_t(1 - r)][0].bytes != 8192)
      return internalError("the exchange lost a region");
    if (r == 0) {
      IbChannelSpec spec;
      spec.src[0] = sliceOf(first, 100);
      spec.dst[1] = sliceOf(all[1][0], 50);
      std::unique_ptr<Transport> channel;
      MSCCLC_TRY(makeIbChannel(net->connection(1), spec, &channel));
      MSCCLC_TRY(channel->put(0, 0, 1, 0, 1000));
      MSCCLC_TRY(net->quiesce());
    }
    MSCCLC_TRY(b.barrier());
    net->release(first);
    if (net->registrations() != 0)
      return internalError("the last release kept the registration");
    return Status::ok();
  }));
  EXPECT_EQ(0, memcmp(buffers[1].data() + 50, buffers[0].data() + 100, 1000));
  EXPECT_EQ(buffers[1][49], 0);
  EXPECT_EQ(buffers[1][1050], 0);
}

TEST_F(IbConnectionTest, QuiesceReportsWritesThatNeverComplete) {
  IbOptions options;
  options.timeoutSeconds = 0.2;
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  std::vector<Status> statuses = test::onRankThreads(id, 2, [&](Bootstrap &b) -> Status {
    const int r = b.rank();
    std::unique_ptr<IbNetwork> net;
    MSCCLC_TRY(IbNetwork::connect(b, {1 - r}, {"mlx5_0", 1, false}, options, &net));
    std::vector<char> buffer(64, char(r));
    IbRegion region;
    MSCCLC_TRY(net->acquire(buffer.data(), 64, 1, nullptr, &region));
    std::vector<std::vector<IbRemote>> all;
    MSCCLC_TRY(IbNetwork::exchange(b, {region}, &all));
    Status s = Status::ok();
    if (r == 0) {
      controls.stall(1); // the peer never acknowledges
      uint64_t seq = 0;
      MSCCLC_TRY(net->connection(1)->write(region, 0, all[1][0], 0, 64, &seq));
      s = net->quiesce();
      controls.stall(0);
    }
    MSCCLC_TRY(b.barrier());
    net->release(region);
    return s;
  });
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_TRUE(statuses[1].isOk()) << statuses[1].message();
  EXPECT_NE(statuses[0].message().find("IB connection to rank 1"), std::string::npos)
      << statuses[0].message();
  EXPECT_NE(statuses[0].message().find("no completion within"), std::string::npos)
      << statuses[0].message();
}
