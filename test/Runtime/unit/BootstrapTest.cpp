//===- BootstrapTest.cpp - TCP rendezvous among threads and processes -----===//

#include "RankThreads.h"
#include "mscclc/runtime/Bootstrap.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <climits>
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
  setenv("MSCCLC_BOOTSTRAP_SECRET", "3b9e0f6a1c7d42e8b5a09f3c6d1e7b24", 1);
  ASSERT_TRUE(uniqueIdFromAddress(where, &a).isOk());
  ASSERT_TRUE(uniqueIdFromAddress(where, &b).isOk());
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
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

// A rank count above 65536 (up to INT_MAX) once passed the checks and
// allocated per rank until bad_alloc aborted the process (2e9) or took
// 3.9 GB (2e8): refused before anything is allocated or connected.
TEST_F(BootstrapTest, RankCountsAboveTheLimitAreRefused) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  for (int nranks : {65537, 200000000, 2000000000, INT_MAX, 0, -1}) {
    std::unique_ptr<Bootstrap> b;
    auto start = std::chrono::steady_clock::now();
    Status s = Bootstrap::create(id, 0, nranks, &b);
    EXPECT_EQ(s.code(), Code::InvalidArgument) << nranks;
    EXPECT_NE(s.message().find("1 to 65536 ranks"), std::string::npos)
        << s.message();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count(),
              1.0);
  }
  test::expectAllOk(test::onRankThreads(
      id, 2, [](Bootstrap &b) { return b.barrier(); }));
}

// MSCCLC_BOOTSTRAP_TIMEOUT: 'abc', -1 and 0 once became 120 s silently,
// and values above about 5e9 made the root give up at once while every
// rank hung. Now anything but a whole number of seconds from 1 to 86400 is
// an error naming the variable, the value and the range (the settings
// module's whole-units duration, Settings.def).
TEST_F(BootstrapTest, TimeoutIsParsedStrictly) {
  double seconds = 0;
  // Unset or empty: the default (an empty value was an error before the
  // settings module's one rule).
  for (const char *unset : {(const char *)nullptr, ""}) {
    unset ? setenv("MSCCLC_BOOTSTRAP_TIMEOUT", unset, 1)
          : unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
    ASSERT_TRUE(bootstrapTimeout(&seconds).isOk());
    EXPECT_EQ(seconds, 120);
  }
  for (const char *good : {"1", "30", "86400", "0120"}) {
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", good, 1);
    ASSERT_TRUE(bootstrapTimeout(&seconds).isOk()) << good;
    EXPECT_EQ(seconds, atof(good));
  }
  for (const char *bad :
       {"abc", "-1", "0", " 5", "5 ", "1.5", "1e3", "86401", "1e10",
        "10000000000", "99999999999999999999999", "+5", "inf", "nan", "0x10"}) {
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", bad, 1);
    Status s = bootstrapTimeout(&seconds);
    EXPECT_EQ(s.code(), Code::InvalidArgument) << "'" << bad << "' accepted";
    EXPECT_EQ(s.message(),
              fmt::format("MSCCLC_BOOTSTRAP_TIMEOUT='{}': expected a whole "
                          "number of seconds from 1 to 86400",
                          bad));
  }
  unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
  // Where it is read: making an id and joining fail with that message.
  setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "1e10", 1);
  UniqueId id;
  Status s = createUniqueId(&id);
  unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
  EXPECT_EQ(s.code(), Code::InvalidArgument) << s.message();
  ASSERT_TRUE(createUniqueId(&id).isOk());
  setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "abc", 1);
  std::unique_ptr<Bootstrap> b;
  s = Bootstrap::create(id, 0, 1, &b);
  unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
  EXPECT_NE(s.message().find("MSCCLC_BOOTSTRAP_TIMEOUT='abc'"),
            std::string::npos)
      << s.message();
  test::expectAllOk(test::onRankThreads(
      id, 1, [](Bootstrap &b) { return b.barrier(); }));
}

// Unique ids made in a loop and never used once kept a thread and a
// listening socket each for twice the bootstrap time-out (3,000 calls,
// 3,001 threads). At most 256 roots wait at once; the next id is a clear
// error, and once the unused ones expired ids can be made again. In a
// child: the waiting roots stay in its process.
TEST_F(BootstrapTest, UniqueIdsMadeInALoopAreBounded) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "1", 1);
    UniqueId id;
    int made = 0;
    Status s;
    for (int i = 0; i < 3000 && (s = createUniqueId(&id)).isOk(); ++i)
      ++made;
    // Up to 256: roots the parent left waiting count in the child too.
    bool bounded = made > 200 && made <= 256 &&
                   s.message().find("256 unique ids") != std::string::npos;
    if (!bounded)
      fprintf(stderr, "made %d ids; then: %s\n", made, s.message().c_str());
    // Each waits 2 x 1 s for its ranks, then gives its place back.
    std::this_thread::sleep_for(std::chrono::seconds(4));
    Status again = createUniqueId(&id);
    if (!again.isOk())
      fprintf(stderr, "after the roots expired: %s\n",
              again.message().c_str());
    _exit(bounded && again.isOk() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A ring of two ranks where the other stops answering: the message names
// it once, as both neighbours, not "rank 0 or rank 0".
TEST_F(BootstrapTest, SilentNeighbourIsNamedOnce) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "1", 1);
    UniqueId id;
    if (!createUniqueId(&id).isOk())
      _exit(2);
    Status zero;
    auto statuses = test::onRankThreads(id, 2, [&](Bootstrap &b) {
      if (b.rank() == 1) { // joins, then stays silent past the time-out
        std::this_thread::sleep_for(std::chrono::seconds(2));
        return Status::ok();
      }
      std::vector<char> data(2);
      return b.allGather(data.data(), 1);
    });
    const std::string &m = statuses[0].message();
    bool ok = statuses[0].code() == Code::Timeout &&
              m.find("rank 1 (both neighbours in the ring) stopped "
                     "answering") != std::string::npos &&
              m.find("bootstrap rank 0") != std::string::npos;
    if (!ok)
      fprintf(stderr, "got: %s\n", m.c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
    // A sentence naming who waited, for what and why, e.g. "bootstrap
    // rank 0: receiving the 2 ranks' addresses from the root at ... timed
    // out after 1 s (raise MSCCLC_BOOTSTRAP_TIMEOUT ...)".
    const std::string &m = s.message();
    bool ok = s.code() == Code::Timeout &&
              m.find("MSCCLC_BOOTSTRAP_TIMEOUT") != std::string::npos &&
              m.find("bootstrap rank 0: receiving the 2 ranks' addresses "
                     "from the root at") != std::string::npos &&
              m.find("timed out after 1 s") != std::string::npos;
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
