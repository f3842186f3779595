//===- BootstrapTest.cpp - TCP rendezvous among threads and processes -----===//

#include "RankThreads.h"
#include "mscclc/runtime/Bootstrap.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cstring>
#include <functional>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;

namespace {

/// Every rank contributes `bytes` of a rank-specific pattern; after the
/// all-gather every rank must hold every pattern.
Status gatherAndCheck(Bootstrap &b, size_t bytes) {
  int n = b.nranks();
  std::vector<unsigned char> data(bytes * size_t(n), 0xee);
  for (size_t i = 0; i < bytes; ++i)
    data[size_t(b.rank()) * bytes + i] = (unsigned char)(b.rank() * 31 + i * 7);
  MSCCLC_TRY(b.allGather(data.data(), bytes));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < bytes; ++i)
      if (data[size_t(r) * bytes + i] != (unsigned char)(r * 31 + i * 7))
        return internalError(fmt::format(
            "rank {} sees a wrong byte {} of rank {}", b.rank(), i, r));
  return b.barrier();
}

void runThreads(const UniqueId &id, int n, size_t bytes) {
  test::expectAllOk(test::onRankThreads(id, n, [bytes](Bootstrap &b) {
    Status s = gatherAndCheck(b, bytes);
    if (s.isOk())
      s = gatherAndCheck(b, 3); // a second collective on the same ring
    return s;
  }));
}

/// One child process per rank, each exiting with `rank`'s code.
std::vector<pid_t> forkRanks(int n, const std::function<int(int)> &rank) {
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(rank(r));
    kids.push_back(pid);
  }
  return kids;
}

class BootstrapTest : public ::testing::Test {
protected:
  void SetUp() override { setenv("MSCCLC_BOOTSTRAP_ADDR", "127.0.0.1", 1); }
};

} // namespace

TEST_F(BootstrapTest, ThreadsAllGather) {
  for (int n : {1, 2, 5}) {
    UniqueId id;
    ASSERT_TRUE(createUniqueId(&id).isOk());
    EXPECT_NE(describeUniqueId(id).find("127.0.0.1:"), std::string::npos);
    runThreads(id, n, 16);
  }
}

TEST_F(BootstrapTest, LargeAllGatherDoesNotDeadlock) {
  // 4 MB slices overflow every socket buffer on the ring.
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  runThreads(id, 3, size_t(4) << 20);
}

TEST_F(BootstrapTest, RootHostedByRankZeroFromAddress) {
  // A port the kernel just handed out is very likely still free.
  int probe = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(probe, reinterpret_cast<sockaddr *>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(probe);
  UniqueId a, b;
  std::string where = "127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(uniqueIdFromAddress(where, &a).isOk());
  ASSERT_TRUE(uniqueIdFromAddress(where, &b).isOk());
  EXPECT_EQ(memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0)
      << "every rank must derive the same id";
  runThreads(a, 4, 100);
}

TEST_F(BootstrapTest, Processes) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk()); // root thread stays in the parent
  const int n = 3;
  std::vector<pid_t> kids = forkRanks(n, [&](int r) {
    std::unique_ptr<Bootstrap> b;
    Status s = Bootstrap::create(id, r, n, &b);
    if (s.isOk())
      s = gatherAndCheck(*b, 1000);
    if (!s.isOk())
      fprintf(stderr, "rank %d: %s\n", r, s.message().c_str());
    return s.isOk() ? 0 : 1;
  });
  for (pid_t pid : kids) {
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

TEST_F(BootstrapTest, BadArguments) {
  UniqueId junk;
  memset(junk.bytes, 0x5a, sizeof(junk.bytes));
  std::unique_ptr<Bootstrap> b;
  Status s = Bootstrap::create(junk, 0, 2, &b);
  EXPECT_EQ(s.code(), Code::InvalidArgument);
  EXPECT_NE(s.message().find("unique id"), std::string::npos) << s.message();

  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  s = Bootstrap::create(id, 2, 2, &b);
  EXPECT_EQ(s.code(), Code::InvalidArgument);
  EXPECT_NE(s.message().find("out of range"), std::string::npos);

  EXPECT_FALSE(uniqueIdFromAddress("nohostport", &id).isOk());
  EXPECT_FALSE(uniqueIdFromAddress("127.0.0.1:99999", &id).isOk());
}

TEST_F(BootstrapTest, MissingRankTimesOut) {
  // In a child, so the short time-out (read once per process) stays there.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "1", 1);
    UniqueId id;
    if (!createUniqueId(&id).isOk())
      _exit(2);
    std::unique_ptr<Bootstrap> b;
    Status s = Bootstrap::create(id, 0, 2, &b); // rank 1 never comes
    bool ok = s.code() == Code::Timeout &&
              s.message().find("MSCCLC_BOOTSTRAP_TIMEOUT") != std::string::npos;
    if (!ok)
      fprintf(stderr, "got: %s\n", s.message().c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A rank's process dies (SIGKILL) between collectives: the others must get
// an error quickly, without dying themselves (a write to its closed socket
// must not raise SIGPIPE), naming the rank whose connection failed: the
// dead one for its neighbours (a rank further away may see a neighbour
// that gave up first).
TEST_F(BootstrapTest, DeadRankIsReportedNotAHang) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  const int n = 3, victim = 2;
  enum { kNamedVictim = 0, kNamedOther = 3 };
  std::vector<pid_t> kids = forkRanks(n, [&](int r) {
    std::unique_ptr<Bootstrap> b;
    Status s = Bootstrap::create(id, r, n, &b);
    if (s.isOk())
      s = b->barrier();
    if (!s.isOk()) {
      fprintf(stderr, "rank %d set-up: %s\n", r, s.message().c_str());
      return 2;
    }
    if (r == victim)
      kill(getpid(), SIGKILL);
    auto start = std::chrono::steady_clock::now();
    // Two collectives: the first may still complete on some ranks.
    for (int i = 0; i < 2 && s.isOk(); ++i)
      s = gatherAndCheck(*b, 4096);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    fprintf(stderr, "rank %d after %.1f s: %s\n", r, seconds,
            s.isOk() ? "no error" : s.message().c_str());
    if (s.isOk() || seconds > 20 ||
        s.message().find("did its process die?") == std::string::npos)
      return 1;
    bool named = s.message().find("rank " + std::to_string(victim) + " ") !=
                 std::string::npos;
    return named ? int(kNamedVictim) : int(kNamedOther);
  });
  int namedVictim = 0;
  for (int r = 0; r < n; ++r) {
    ASSERT_GT(kids[size_t(r)], 0);
    int status = 0;
    ASSERT_EQ(waitpid(kids[size_t(r)], &status, 0), kids[size_t(r)]);
    if (r == victim) {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
      continue;
    }
    ASSERT_TRUE(WIFEXITED(status)) << "rank " << r << " died of a signal";
    int code = WEXITSTATUS(status);
    EXPECT_TRUE(code == kNamedVictim || code == kNamedOther)
        << "rank " << r << ": no quick error that names a rank";
    namedVictim += code == kNamedVictim;
  }
  EXPECT_GE(namedVictim, 1) << "no rank named the dead one";
}
