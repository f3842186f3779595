//===- BootstrapIntruderTest.cpp - Strangers at a live bootstrap ----------===//
//
// Processes that are not ranks of the communicator being built connect to
// its root, and to a rank's ring listener, while it is built: with a wrong
// or no secret, another communicator's id, garbage, truncated or oversized
// frames, or nothing at all. Each must be dropped (its connection closed,
// the reason logged) and the communicator built as if it had not come. The
// decoders themselves are tested in BootstrapWireTest.
//
//===----------------------------------------------------------------------===//

#include "RankThreads.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;
using namespace mscclc::rt::wire;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

IdLayout layoutOf(const UniqueId &id) {
  IdLayout l{};
  EXPECT_TRUE(decodeUniqueId(id, &l).isOk());
  return l;
}

sockaddr_in toSockaddr(const WireAddr &w) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = w.port;
  memcpy(&sa.sin_addr, w.addr, 4);
  return sa;
}

/// A blocking TCP connection to `w` (IPv4: the tests use 127.0.0.1).
int dial(const WireAddr &w) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa = toSockaddr(w);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)))
    ADD_FAILURE() << "connect: " << strerror(errno);
  return fd;
}

void sendBytes(int fd, const void *data, size_t size) {
  ASSERT_EQ(send(fd, data, size, MSG_NOSIGNAL), ssize_t(size));
}

/// Whether the other end closes `fd` within `seconds`: recv sees the end
/// of the stream or a reset. The bootstrap never sends a stranger data.
bool closedWithin(int fd, double seconds) {
  auto start = Clock::now();
  char byte;
  for (;;) {
    double left = seconds - secondsSince(start);
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, left <= 0 ? 0 : left > 0.05 ? 50 : int(left * 1000));
    if (r <= 0 && left <= 0)
      return false;
    if (r <= 0)
      continue;
    ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return true;
    if (n > 0)
      ADD_FAILURE() << "the bootstrap sent a stranger data";
  }
}

Hello helloFor(const IdLayout &l, uint32_t rank, uint32_t nranks) {
  Hello h{kMagic, rank, l.nonce, nranks, l.root, {}};
  memcpy(h.secret, l.secret, kSecretBytes);
  return h;
}

/// Builds a communicator of `n` rank threads; the status of each.
std::vector<Status> buildRanks(const UniqueId &id, int n) {
  return test::onRankThreads(id, n, [](Bootstrap &b) { return b.barrier(); });
}

using test::expectAllOk;

/// Sends what this process writes to stderr (where the runtime logs by
/// default) to a file while it lives; text() reads it back.
class StderrCapture {
public:
  StderrCapture() {
    fflush(stderr);
    saved_ = dup(2);
    char path[] = "/tmp/mscclc-intruder-log-XXXXXX";
    int fd = mkstemp(path);
    path_ = path;
    dup2(fd, 2);
    close(fd);
  }
  ~StderrCapture() {
    restore();
    unlink(path_.c_str());
  }
  void restore() {
    if (saved_ < 0)
      return;
    fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::string text() {
    fflush(stderr);
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

private:
  int saved_ = -1;
  std::string path_;
};

class BootstrapIntruderTest : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("MSCCLC_BOOTSTRAP_ADDR", "127.0.0.1", 1);
    unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
    unsetenv("MSCCLC_COMM_ID");
  }
  void TearDown() override { unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT"); }
};

} // namespace

// Every kind of bad opening at once, before the ranks come. The ones that
// sent something are refused on sight: closed well within the 10 s a
// silent peer gets, with the reason logged. The communicator is then built
// at once: the silent stranger does not hold the root up.
TEST_F(BootstrapIntruderTest, RootDropsStrangersAndBuildsTheCommunicator) {
  StderrCapture log;
  UniqueId id, stale;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  ASSERT_TRUE(createUniqueId(&stale).isOk());
  IdLayout l = layoutOf(id);
  const int n = 3;

  Hello wrongSecret = helloFor(l, 0, n);
  wrongSecret.secret[kSecretBytes - 1] ^= 1;
  Hello noSecret = helloFor(l, 1, n);
  memset(noSecret.secret, 0, kSecretBytes);
  IdLayout old = layoutOf(stale); // a process of another communicator
  old.root = l.root;
  Hello staleHello = helloFor(old, 2, n);
  std::vector<char> garbage(sizeof(Hello), 0x5a);
  std::vector<char> oversized(size_t(1) << 20, 0x33);
  Hello valid = helloFor(l, 0, n);

  struct Stranger {
    const char *what;
    const void *data;
    size_t size;
    bool halfClose; // shut its sending side after the bytes
  };
  std::vector<Stranger> refused = {
      {"wrong secret", &wrongSecret, sizeof(Hello), false},
      {"no secret", &noSecret, sizeof(Hello), false},
      {"stale id", &staleHello, sizeof(Hello), false},
      {"garbage", garbage.data(), garbage.size(), false},
      {"truncated, then closed", &valid, sizeof(Hello) / 2, true},
  };
  auto start = Clock::now();
  int silent = dial(l.root);
  int truncatedSilent = dial(l.root);
  sendBytes(truncatedSilent, &valid, sizeof(Hello) - 1);
  std::vector<int> fds;
  for (const Stranger &s : refused) {
    fds.push_back(dial(l.root));
    sendBytes(fds.back(), s.data, s.size);
    if (s.halfClose)
      shutdown(fds.back(), SHUT_WR);
  }
  // More than any socket buffer holds: the root reads a hello's worth and
  // drops the rest with the connection (the send may then fail).
  int big = dial(l.root);
  std::thread flood([&] {
    (void)send(big, oversized.data(), oversized.size(), MSG_NOSIGNAL);
  });
  for (size_t i = 0; i < refused.size(); ++i)
    EXPECT_TRUE(closedWithin(fds[i], 5)) << refused[i].what << ": not refused";
  EXPECT_TRUE(closedWithin(big, 5)) << "oversized: not refused";
  flood.join();

  expectAllOk(buildRanks(id, n));
  EXPECT_LT(secondsSince(start), 8)
      << "the silent connections held the root up";
  EXPECT_TRUE(closedWithin(silent, 5)) << "the finished root keeps a socket";
  EXPECT_TRUE(closedWithin(truncatedSilent, 5));
  for (int fd : fds)
    close(fd);
  close(big);
  close(silent);
  close(truncatedSilent);

  log.restore();
  std::string text = log.text();
  for (const char *why : {"a wrong secret", "bad magic",
                          "it closed the connection"})
    EXPECT_NE(text.find(why), std::string::npos)
        << "no '" << why << "' in the log:\n" << text;
}

// A stranger that connects and sends nothing is dropped after its own
// limit (min(10 s, MSCCLC_BOOTSTRAP_TIMEOUT)) while the root goes on
// waiting for the ranks, who then build the communicator.
TEST_F(BootstrapIntruderTest, SilentStrangerIsDroppedWhileTheRootWaits) {
  setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "3", 1);
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  auto start = Clock::now();
  int silent = dial(layoutOf(id).root);
  EXPECT_TRUE(closedWithin(silent, 6)) << "the silent stranger stays";
  double after = secondsSince(start);
  EXPECT_GT(after, 2.0) << "dropped before its limit";
  close(silent);
  // The root waits 2 x 3 s in all; the ranks come after 3 s.
  expectAllOk(buildRanks(id, 2));
}

// Connections beyond what the root holds at once (64) push the oldest out,
// so a flood costs bounded memory and descriptors; the ranks that come
// after it are served.
TEST_F(BootstrapIntruderTest, AFloodOfConnectionsIsBounded) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  WireAddr root = layoutOf(id).root;
  const int flood = 200, held = 64;
  std::vector<int> fds;
  for (int i = 0; i < flood; ++i)
    fds.push_back(dial(root));
  auto start = Clock::now();
  int closed = 0;
  std::vector<bool> isClosed(fds.size(), false);
  while (closed < flood - held && secondsSince(start) < 8) {
    for (size_t i = 0; i < fds.size(); ++i)
      if (!isClosed[i] && closedWithin(fds[i], 0.001)) {
        isClosed[i] = true;
        ++closed;
      }
  }
  EXPECT_GE(closed, flood - held) << "the root holds every connection";
  expectAllOk(buildRanks(id, 3));
  for (int fd : fds)
    close(fd);
}

// The same at a rank's ring listener. This test plays rank 1 of 2 by hand,
// which tells it rank 0's listening address: strangers there (wrong
// secret, another rank's hello, silence) are dropped, and rank 0 still
// takes this test's own ring hello and finishes.
TEST_F(BootstrapIntruderTest, RankDropsStrangersAtItsRingListener) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  IdLayout l = layoutOf(id);

  // Rank 1's listener, where rank 0 will connect.
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof(sa);
  getsockname(listener, reinterpret_cast<sockaddr *>(&sa), &len);

  Status rank0;
  std::thread zero([&] {
    std::unique_ptr<Bootstrap> b;
    rank0 = Bootstrap::create(id, 0, 2, &b);
  });
  int root = dial(l.root);
  Hello hello = helloFor(l, 1, 2);
  hello.listen.port = sa.sin_port;
  sendBytes(root, &hello, sizeof(hello));
  WireAddr addrs[2];
  ASSERT_EQ(recv(root, addrs, sizeof(addrs), MSG_WAITALL),
            ssize_t(sizeof(addrs)));
  close(root);

  RingHello mine{kMagic, 1, l.nonce, {}};
  memcpy(mine.secret, l.secret, kSecretBytes);
  RingHello wrongSecret = mine;
  wrongSecret.secret[0] ^= 0xff;
  RingHello otherRank = mine;
  otherRank.rank = 0;
  int silent = dial(addrs[0]);
  std::vector<int> strangers;
  for (const RingHello *h : {&wrongSecret, &otherRank}) {
    strangers.push_back(dial(addrs[0]));
    sendBytes(strangers.back(), h, sizeof(*h));
  }
  for (int fd : strangers)
    EXPECT_TRUE(closedWithin(fd, 5)) << "a stranger at rank 0 stays";

  int next = dial(addrs[0]);
  sendBytes(next, &mine, sizeof(mine));
  int prev = accept(listener, nullptr, nullptr);
  ASSERT_GE(prev, 0);
  RingHello theirs;
  ASSERT_EQ(recv(prev, &theirs, sizeof(theirs), MSG_WAITALL),
            ssize_t(sizeof(theirs)));
  EXPECT_EQ(checkRingHello(&theirs, sizeof(theirs), l.nonce, l.secret, 0),
            nullptr);
  zero.join();
  EXPECT_TRUE(rank0.isOk()) << rank0.message();
  EXPECT_TRUE(closedWithin(silent, 5)) << "rank 0 keeps the silent stranger";
  for (int fd : strangers)
    close(fd);
  for (int fd : {silent, next, prev, listener})
    close(fd);
}

// An id made from an address carries a secret from MSCCLC_BOOTSTRAP_SECRET:
// the same value gives every rank the same id, another value another
// secret (whose hellos the root drops), and a short value is refused.
TEST_F(BootstrapIntruderTest, AddressIdsTakeTheLaunchersSecret) {
  const char *where = "127.0.0.1:29555";
  std::string secret(32, 'k');
  setenv("MSCCLC_BOOTSTRAP_SECRET", secret.c_str(), 1);
  UniqueId a, b, other;
  ASSERT_TRUE(uniqueIdFromAddress(where, &a).isOk());
  ASSERT_TRUE(uniqueIdFromAddress(where, &b).isOk());
  EXPECT_EQ(memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0);
  secret[31] = 'j';
  setenv("MSCCLC_BOOTSTRAP_SECRET", secret.c_str(), 1);
  ASSERT_TRUE(uniqueIdFromAddress(where, &other).isOk());
  EXPECT_FALSE(secretsEqual(layoutOf(a).secret, layoutOf(other).secret));
  EXPECT_EQ(layoutOf(a).nonce, layoutOf(other).nonce)
      << "only the secret tells the two apart";
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  UniqueId none;
  ASSERT_TRUE(uniqueIdFromAddress(where, &none).isOk());
  EXPECT_FALSE(secretsEqual(layoutOf(a).secret, layoutOf(none).secret));

  setenv("MSCCLC_BOOTSTRAP_SECRET", "short", 1);
  Status s = uniqueIdFromAddress(where, &a);
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  EXPECT_EQ(s.code(), Code::InvalidArgument);
  EXPECT_NE(s.message().find("MSCCLC_BOOTSTRAP_SECRET"), std::string::npos)
      << s.message();
}

// Ids made by createUniqueId carry fresh random secrets and nonces.
TEST_F(BootstrapIntruderTest, EveryIdHasItsOwnSecret) {
  std::vector<IdLayout> ids;
  for (int i = 0; i < 4; ++i) {
    UniqueId id;
    ASSERT_TRUE(createUniqueId(&id).isOk());
    ids.push_back(layoutOf(id));
    // The root of each is served and leaves.
    expectAllOk(buildRanks(id, 1));
  }
  static const uint8_t zero[kSecretBytes] = {};
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_FALSE(secretsEqual(ids[i].secret, zero));
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(secretsEqual(ids[i].secret, ids[j].secret));
      EXPECT_NE(ids[i].nonce, ids[j].nonce);
    }
  }
}
