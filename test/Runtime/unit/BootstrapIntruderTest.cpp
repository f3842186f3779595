//===- BootstrapIntruderTest.cpp - Strangers at a live bootstrap ----------===//
//
// Processes that are not ranks of the communicator being built connect to
// its root, to a rank's ring listener and to the TCP transport's, while it
// is built: with a wrong secret, another communicator's id, garbage,
// truncated or oversized frames, or nothing at all. Each must be dropped
// (its connection closed, refusals counted in the log) and the
// communicator built as if it had not come. Strangers also wait where a
// rank connects to (a root's well-known port, a neighbour's address): the
// rank must find out before it sends anything that matters, and never send
// the secret. The decoders themselves are tested in BootstrapWireTest.
//
//===----------------------------------------------------------------------===//

#include "RankThreads.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/FrameStream.h"
#include "mscclc/runtime/Socket.h"
#include "mscclc/runtime/TcpWire.h"

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
#include <algorithm>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;
using namespace mscclc::rt::wire;
namespace net = mscclc::rt::net;

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
  return Hello{kMagic, rank, l.nonce, nranks, l.root, {}};
}

net::Deadline shortDeadline() {
  return net::Deadline::in(10, "test", "MSCCLC_BOOTSTRAP_TIMEOUT");
}

/// A session under `secret` for a handshake whose challenge and answer
/// were `challenge` and `answer`.
Session sessionOf(const uint8_t *secret, const Challenge &challenge,
                  const ChallengeAnswer &answer) {
  Session s;
  s.secret = secret;
  s.purpose = Purpose(challenge.purpose);
  s.commNonce = challenge.commNonce;
  memcpy(s.connectorRandom, challenge.random, kRandomBytes);
  memcpy(s.acceptorRandom, answer.random, kRandomBytes);
  return s;
}

/// Plays the connecting side of a handshake on `fd` as a process that
/// believes the secret is `secret` (right or wrong), without checking the
/// acceptor's answer, then sends `message` of `size` bytes with its proof.
void sendWithProof(int fd, Purpose purpose, uint64_t commNonce,
                   const uint8_t *secret, void *message, size_t size) {
  uint8_t random[kRandomBytes];
  ASSERT_TRUE(randomBytes(random, sizeof(random)).isOk());
  Challenge c = makeChallenge(purpose, commNonce, random);
  ASSERT_EQ(send(fd, &c, sizeof(c), MSG_NOSIGNAL), ssize_t(sizeof(c)));
  ChallengeAnswer answer;
  ASSERT_EQ(recv(fd, &answer, sizeof(answer), MSG_WAITALL),
            ssize_t(sizeof(answer)));
  sessionOf(secret, c, answer).proveMessage(message, size);
  ASSERT_EQ(send(fd, message, size, MSG_NOSIGNAL), ssize_t(size));
}

/// A secret one bit off `secret`.
std::vector<uint8_t> wrongSecret(const uint8_t *secret) {
  std::vector<uint8_t> wrong(secret, secret + kSecretBytes);
  wrong.back() ^= 1;
  return wrong;
}

/// A loopback listener on a free port; its address in *addr.
int listenLoopback(WireAddr *addr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
  *addr = WireAddr{};
  addr->family = AF_INET;
  addr->port = sa.sin_port;
  memcpy(addr->addr, &sa.sin_addr, 4);
  return fd;
}

/// Everything a peer sends on `fd` until it closes or `seconds` pass.
std::string drain(int fd, double seconds) {
  std::string got;
  auto start = Clock::now();
  char buf[4096];
  while (secondsSince(start) < seconds) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0)
      continue;
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0)
      break;
    got.append(buf, size_t(n));
  }
  return got;
}

/// Whether `bytes` hold the `size` bytes at `what` anywhere.
bool holds(const std::string &bytes, const void *what, size_t size) {
  return bytes.find(std::string(static_cast<const char *>(what), size)) !=
         std::string::npos;
}

/// Answers a handshake on `fd` as a stranger: it does not know the secret
/// and proves with a made-up one. What the connecting side sent, in all.
std::string strangerAnswers(int fd, uint32_t who) {
  Challenge c;
  if (recv(fd, &c, sizeof(c), MSG_WAITALL) != ssize_t(sizeof(c)))
    return "";
  std::string got(reinterpret_cast<const char *>(&c), sizeof(c));
  uint8_t madeUp[kSecretBytes] = {1, 2, 3};
  ChallengeAnswer answer{kMagic, who, {}, {}};
  sessionOf(madeUp, c, answer)
      .prove(Step::AcceptorProof, &who, sizeof(who), answer.proof);
  (void)send(fd, &answer, sizeof(answer), MSG_NOSIGNAL);
  // A redirection too: a list of addresses as a root would send it.
  std::vector<char> addrs(4 * sizeof(WireAddr) + kProofBytes, 7);
  (void)send(fd, addrs.data(), addrs.size(), MSG_NOSIGNAL);
  return got + drain(fd, 3);
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
  void TearDown() override {
    unsetenv("MSCCLC_BOOTSTRAP_TIMEOUT");
    unsetenv("MSCCLC_BOOTSTRAP_SECRET");
    unsetenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET");
  }
};

} // namespace

// Every kind of bad opening at once, before the ranks come. The ones that
// sent something are refused on sight: closed well within the 10 s a
// silent peer gets. The communicator is then built at once: the silent
// stranger does not hold the root up. The refusals make a couple of log
// lines with a count, not one line each.
TEST_F(BootstrapIntruderTest, RootDropsStrangersAndBuildsTheCommunicator) {
  StderrCapture log;
  UniqueId id, stale;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  ASSERT_TRUE(createUniqueId(&stale).isOk());
  IdLayout l = layoutOf(id);
  IdLayout old = layoutOf(stale); // a process of another communicator
  const int n = 3;
  std::vector<uint8_t> wrong = wrongSecret(l.secret);
  uint8_t random[kRandomBytes] = {};
  Challenge staleChallenge = makeChallenge(Purpose::Root, old.nonce, random);
  Challenge ringChallenge = makeChallenge(Purpose::Ring, l.nonce, random);
  std::vector<char> garbage(sizeof(Challenge), 0x5a);
  std::vector<char> oversized(size_t(1) << 20, 0x33);
  Challenge valid = makeChallenge(Purpose::Root, l.nonce, random);

  struct Stranger {
    const char *what;
    const void *data;
    size_t size;
    bool halfClose; // shut its sending side after the bytes
  };
  std::vector<Stranger> refused = {
      {"stale id", &staleChallenge, sizeof(Challenge), false},
      {"a ring handshake", &ringChallenge, sizeof(Challenge), false},
      {"garbage", garbage.data(), garbage.size(), false},
      {"truncated, then closed", &valid, sizeof(Challenge) / 2, true},
  };
  auto start = Clock::now();
  int silent = dial(l.root);
  int truncatedSilent = dial(l.root);
  sendBytes(truncatedSilent, &valid, sizeof(Challenge) - 1);
  std::vector<int> fds;
  for (const Stranger &s : refused) {
    fds.push_back(dial(l.root));
    sendBytes(fds.back(), s.data, s.size);
    if (s.halfClose)
      shutdown(fds.back(), SHUT_WR);
  }
  // A stranger with a wrong secret: the root answers its challenge (which
  // proves the root, and gives away nothing), then refuses its hello.
  int wrongProof = dial(l.root);
  Hello wrongHello = helloFor(l, 0, n);
  sendWithProof(wrongProof, Purpose::Root, l.nonce, wrong.data(), &wrongHello,
                sizeof(wrongHello));
  // More than any socket buffer holds: the root reads a challenge's worth
  // and drops the rest with the connection (the send may then fail).
  int big = dial(l.root);
  std::thread flood([&] {
    (void)send(big, oversized.data(), oversized.size(), MSG_NOSIGNAL);
  });
  for (size_t i = 0; i < refused.size(); ++i)
    EXPECT_TRUE(closedWithin(fds[i], 5)) << refused[i].what << ": not refused";
  EXPECT_TRUE(closedWithin(wrongProof, 5)) << "wrong secret: not refused";
  EXPECT_TRUE(closedWithin(big, 5)) << "oversized: not refused";
  flood.join();

  expectAllOk(buildRanks(id, n));
  EXPECT_LT(secondsSince(start), 8)
      << "the silent connections held the root up";
  EXPECT_TRUE(closedWithin(silent, 5)) << "the finished root keeps a socket";
  EXPECT_TRUE(closedWithin(truncatedSilent, 5));
  for (int fd : fds)
    close(fd);
  for (int fd : {big, silent, truncatedSilent, wrongProof})
    close(fd);

  log.restore();
  std::string text = log.text();
  EXPECT_NE(text.find("refused a connection from"), std::string::npos)
      << text;
  EXPECT_NE(text.find("more connections"), std::string::npos)
      << "no count of the refusals after the first:\n" << text;
  size_t lines = size_t(std::count(text.begin(), text.end(), '\n'));
  EXPECT_LE(lines, 3u) << "a line per refused connection:\n" << text;
}

// A flood of strangers makes a line per interval with a count, not a line
// each (once 37,269 lines in 4 s).
TEST_F(BootstrapIntruderTest, AFloodOfStrangersIsLoggedWithACount) {
  StderrCapture log;
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  WireAddr root = layoutOf(id).root;
  const int strangers = 300;
  std::vector<char> garbage(sizeof(Challenge), 0x77);
  for (int i = 0; i < strangers; ++i) {
    int fd = dial(root);
    sendBytes(fd, garbage.data(), garbage.size());
    EXPECT_TRUE(closedWithin(fd, 5));
    close(fd);
  }
  expectAllOk(buildRanks(id, 2));
  log.restore();
  std::string text = log.text();
  size_t lines = size_t(std::count(text.begin(), text.end(), '\n'));
  EXPECT_LE(lines, 3u) << text.substr(0, 2000);
  EXPECT_NE(text.find(std::to_string(strangers - 1) + " more connections"),
            std::string::npos)
      << text;
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

/// Plays rank 1 of 2 at the root of `l` by hand: the handshake, a hello
/// naming `listening`; the ranks' addresses.
std::vector<WireAddr> joinAsRankOne(const IdLayout &l,
                                    const WireAddr &listening) {
  net::Fd root(dial(l.root));
  Session session;
  Status s = net::openHandshake(root.get(), l.secret, Purpose::Root, l.nonce,
                                kRootWho, shortDeadline(), "the root",
                                &session);
  EXPECT_TRUE(s.isOk()) << s.message();
  Hello hello = helloFor(l, 1, 2);
  hello.listen = listening;
  session.proveMessage(&hello, sizeof(hello));
  sendBytes(root.get(), &hello, sizeof(hello));
  std::vector<char> answer(2 * sizeof(WireAddr) + kProofBytes);
  EXPECT_EQ(recv(root.get(), answer.data(), answer.size(), MSG_WAITALL),
            ssize_t(answer.size()));
  std::vector<WireAddr> addrs;
  s = decodeAddresses(answer.data(), answer.size(), 2, session, &addrs);
  EXPECT_TRUE(s.isOk()) << s.message();
  return addrs;
}

// The same at a rank's ring listener. This test plays rank 1 of 2 by hand,
// which tells it rank 0's listening address: strangers there (a wrong
// secret, another rank's hello, silence) are dropped, and rank 0 still
// takes this test's own ring hello and finishes.
TEST_F(BootstrapIntruderTest, RankDropsStrangersAtItsRingListener) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  IdLayout l = layoutOf(id);
  WireAddr mine;
  int listener = listenLoopback(&mine); // rank 1's, where rank 0 connects

  Status rank0;
  std::thread zero([&] {
    std::unique_ptr<Bootstrap> b;
    rank0 = Bootstrap::create(id, 0, 2, &b);
  });
  std::vector<WireAddr> addrs = joinAsRankOne(l, mine);
  ASSERT_EQ(addrs.size(), 2u);

  std::vector<uint8_t> wrong = wrongSecret(l.secret);
  int silent = dial(addrs[0]);
  std::vector<int> strangers;
  RingHello wrongSecretHello{kMagic, 1, l.nonce, {}};
  strangers.push_back(dial(addrs[0]));
  sendWithProof(strangers.back(), Purpose::Ring, l.nonce, wrong.data(),
                &wrongSecretHello, sizeof(wrongSecretHello));
  RingHello otherRank{kMagic, 0, l.nonce, {}};
  strangers.push_back(dial(addrs[0]));
  sendWithProof(strangers.back(), Purpose::Ring, l.nonce, l.secret,
                &otherRank, sizeof(otherRank));
  for (int fd : strangers)
    EXPECT_TRUE(closedWithin(fd, 5)) << "a stranger at rank 0 stays";

  net::Fd next(dial(addrs[0]));
  Session toZero;
  Status s = net::openHandshake(next.get(), l.secret, Purpose::Ring, l.nonce,
                                0, shortDeadline(), "rank 0", &toZero);
  ASSERT_TRUE(s.isOk()) << s.message();
  RingHello hello{kMagic, 1, l.nonce, {}};
  toZero.proveMessage(&hello, sizeof(hello));
  sendBytes(next.get(), &hello, sizeof(hello));

  // Rank 0 connects here as to its next rank: answer its handshake as
  // rank 1 and check its ring hello.
  net::Fd prev(accept(listener, nullptr, nullptr));
  ASSERT_GE(prev.get(), 0);
  Challenge c;
  ASSERT_EQ(recv(prev.get(), &c, sizeof(c), MSG_WAITALL), ssize_t(sizeof(c)));
  uint8_t random[kRandomBytes] = {9};
  Session fromZero;
  ChallengeAnswer answer;
  ASSERT_EQ(answerChallenge(&c, sizeof(c), l.secret, Purpose::Ring, l.nonce,
                            1, random, &fromZero, &answer),
            nullptr);
  sendBytes(prev.get(), &answer, sizeof(answer));
  RingHello theirs;
  ASSERT_EQ(recv(prev.get(), &theirs, sizeof(theirs), MSG_WAITALL),
            ssize_t(sizeof(theirs)));
  EXPECT_EQ(checkRingHello(&theirs, sizeof(theirs), fromZero, l.nonce, 0),
            nullptr);
  zero.join();
  EXPECT_TRUE(rank0.isOk()) << rank0.message();
  EXPECT_TRUE(closedWithin(silent, 5)) << "rank 0 keeps the silent stranger";
  for (int fd : strangers)
    close(fd);
  for (int fd : {silent, listener})
    close(fd);
}

// A stranger where a rank's next neighbour should be (it got the address
// into the root's list by hand, as a rank): the rank finds out from the
// handshake's answer, sends nothing more (no hello, no secret) and fails
// with a message that says why.
TEST_F(BootstrapIntruderTest, RankRefusesAStrangerAsItsNextNeighbour) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  IdLayout l = layoutOf(id);
  WireAddr mine;
  int listener = listenLoopback(&mine);
  Status rank0;
  std::thread zero([&] {
    std::unique_ptr<Bootstrap> b;
    rank0 = Bootstrap::create(id, 0, 2, &b);
  });
  joinAsRankOne(l, mine);
  net::Fd prev(accept(listener, nullptr, nullptr));
  ASSERT_GE(prev.get(), 0);
  std::string got = strangerAnswers(prev.get(), 1);
  zero.join();
  EXPECT_EQ(got.size(), sizeof(Challenge))
      << "rank 0 sent more than its challenge to a stranger";
  EXPECT_FALSE(holds(got, l.secret, kSecretBytes));
  EXPECT_FALSE(rank0.isOk());
  EXPECT_NE(rank0.message().find("does not know the communicator's secret"),
            std::string::npos)
      << rank0.message();
  close(listener);
}

// A process listening first on the well-known port of an address id (as
// MSCCLC_COMM_ID or torchrun's MASTER_ADDR name it) once received every
// rank's secret in the clear and could redirect the ranks. Now a rank that
// reaches it sends a random challenge only, and stops with a clear error;
// the stranger's list of addresses is never read.
TEST_F(BootstrapIntruderTest, StrangerOnTheRootPortLearnsNoSecret) {
  WireAddr port;
  int stranger = listenLoopback(&port);
  std::string where = "127.0.0.1:" + std::to_string(ntohs(port.port));
  const char *launcherSecret = "5f0c1e9a7b3d48e2a61f9c0d2b7e4a38";
  setenv("MSCCLC_BOOTSTRAP_SECRET", launcherSecret, 1);
  UniqueId id;
  Status made = uniqueIdFromAddress(where, &id);
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  ASSERT_TRUE(made.isOk()) << made.message();
  IdLayout l = layoutOf(id);

  Status ranks[2];
  std::thread one([&] {
    std::unique_ptr<Bootstrap> b;
    ranks[1] = Bootstrap::create(id, 1, 2, &b);
  });
  net::Fd conn(accept(stranger, nullptr, nullptr));
  ASSERT_GE(conn.get(), 0);
  std::string got = strangerAnswers(conn.get(), kRootWho);
  one.join();
  // Rank 0 cannot host the root where the stranger listens.
  std::unique_ptr<Bootstrap> b;
  ranks[0] = Bootstrap::create(id, 0, 2, &b);

  EXPECT_EQ(got.size(), sizeof(Challenge))
      << "the rank sent more than its challenge to a stranger";
  EXPECT_FALSE(holds(got, l.secret, kSecretBytes));
  EXPECT_FALSE(holds(got, launcherSecret, strlen(launcherSecret)));
  EXPECT_FALSE(ranks[1].isOk());
  EXPECT_NE(ranks[1].message().find("does not know the communicator's secret"),
            std::string::npos)
      << ranks[1].message();
  EXPECT_FALSE(ranks[0].isOk());
  EXPECT_NE(ranks[0].message().find("another process listening"),
            std::string::npos)
      << ranks[0].message();
  close(stranger);
}

/// Two ranks' bootstraps on threads: rank 0 runs `zero`, rank 1 `one`.
void onTwoRanks(const std::function<Status(Bootstrap &)> &zero,
                const std::function<Status(Bootstrap &)> &one) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  expectAllOk(test::onRankThreads(id, 2, [&](Bootstrap &b) {
    return b.rank() == 0 ? zero(b) : one(b);
  }));
}

/// The TCP transport's address exchange as connectSocketStreams makes it,
/// with `listening` as this rank's listener; the peer's address.
WireAddr exchangeTransportAddresses(Bootstrap &b, const WireAddr &listening) {
  std::vector<WireAddr> addrs(2);
  addrs[size_t(b.rank())] = listening;
  EXPECT_TRUE(b.allGather(addrs.data(), sizeof(WireAddr)).isOk());
  return addrs[size_t(1 - b.rank())];
}

// Between two ranks of the TCP transport: rank 1 takes rank 0's
// connection and refuses a stranger's first (a wrong secret); rank 0,
// played by hand, then connects as the transport does.
TEST_F(BootstrapIntruderTest, TcpPairAcceptorRefusesStrangers) {
  onTwoRanks(
      [](Bootstrap &b) -> Status {
        WireAddr unused;
        int dummy = listenLoopback(&unused);
        WireAddr one = exchangeTransportAddresses(b, unused);
        std::vector<uint8_t> wrong = wrongSecret(b.secret());
        int stranger = dial(one);
        tcpwire::PairHello hello{tcpwire::kPairMagic, 0, b.nonce(), {}};
        sendWithProof(stranger, Purpose::TcpPair, b.nonce(), wrong.data(),
                      &hello, sizeof(hello));
        EXPECT_TRUE(closedWithin(stranger, 5)) << "rank 1 keeps a stranger";
        close(stranger);
        net::Fd fd(dial(one));
        Session session;
        MSCCLC_TRY(net::openHandshake(fd.get(), b.secret(),
                                      Purpose::TcpPair, b.nonce(), 1,
                                      shortDeadline(), "rank 1", &session));
        session.proveMessage(&hello, sizeof(hello));
        sendBytes(fd.get(), &hello, sizeof(hello));
        close(dummy);
        return b.barrier();
      },
      [](Bootstrap &b) -> Status {
        FrameStreams streams;
        MSCCLC_TRY(connectSocketStreams(b, {0}, 10, &streams));
        EXPECT_EQ(streams.size(), 1u);
        return b.barrier();
      });
}

// Between two ranks of the TCP transport: rank 0 connects to where rank 1
// said it listens, and a stranger answers there. Rank 0 refuses it without
// sending its hello.
TEST_F(BootstrapIntruderTest, TcpPairConnectorRefusesAStranger) {
  onTwoRanks(
      [](Bootstrap &b) -> Status {
        FrameStreams streams;
        Status s = connectSocketStreams(b, {1}, 10, &streams);
        EXPECT_FALSE(s.isOk());
        EXPECT_NE(s.message().find("does not know the communicator's secret"),
                  std::string::npos)
            << s.message();
        return b.barrier();
      },
      [](Bootstrap &b) -> Status {
        WireAddr strangerAddr;
        int stranger = listenLoopback(&strangerAddr);
        exchangeTransportAddresses(b, strangerAddr);
        net::Fd conn(accept(stranger, nullptr, nullptr));
        std::string got = strangerAnswers(conn.get(), 1);
        EXPECT_EQ(got.size(), sizeof(Challenge))
            << "rank 0 sent a stranger more than its challenge";
        EXPECT_FALSE(holds(got, b.secret(), kSecretBytes));
        close(stranger);
        return b.barrier();
      });
}

// An id made from an address carries a secret from MSCCLC_BOOTSTRAP_SECRET:
// the same value gives every rank the same id, another value another
// secret (whose proofs the root refuses).
TEST_F(BootstrapIntruderTest, AddressIdsTakeTheLaunchersSecret) {
  const char *where = "127.0.0.1:29555";
  std::string secret = "8c2b6e1f0a9d47c3b5e8f1a2d4c6b0e9";
  setenv("MSCCLC_BOOTSTRAP_SECRET", secret.c_str(), 1);
  UniqueId a, b, other;
  ASSERT_TRUE(uniqueIdFromAddress(where, &a).isOk());
  ASSERT_TRUE(uniqueIdFromAddress(where, &b).isOk());
  EXPECT_EQ(memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0);
  secret[31] = '1';
  setenv("MSCCLC_BOOTSTRAP_SECRET", secret.c_str(), 1);
  ASSERT_TRUE(uniqueIdFromAddress(where, &other).isOk());
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  EXPECT_FALSE(secretsEqual(layoutOf(a).secret, layoutOf(other).secret));
  EXPECT_EQ(layoutOf(a).nonce, layoutOf(other).nonce)
      << "only the secret tells the two apart";
}

/// The error uniqueIdFromAddress gives with MSCCLC_BOOTSTRAP_SECRET set to
/// `value` (null: unset), "" if it makes an id.
std::string addressIdError(const char *value) {
  if (value)
    setenv("MSCCLC_BOOTSTRAP_SECRET", value, 1);
  else
    unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  UniqueId id;
  Status s = uniqueIdFromAddress("127.0.0.1:29556", &id);
  unsetenv("MSCCLC_BOOTSTRAP_SECRET");
  if (!s.isOk())
    EXPECT_EQ(s.code(), Code::InvalidArgument);
  return s.message();
}

// Secrets of fewer than 128 random bits are refused, by a rule the message
// states (32 times 'a' was taken, only its length was checked); the value
// itself is never echoed.
TEST_F(BootstrapIntruderTest, WeakLauncherSecretsAreRefused) {
  for (const char *weak :
       {"short", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "0123456789abcdef0123456789abcdef", "abababababababababababababababab",
        "deadbeefdeadbeefdeadbeefdeadbeef", "correct horse battery staple!!",
        "0c1e9a7b3d48e2a61f9c0d2b7e4a38"}) {
    std::string why = addressIdError(weak);
    EXPECT_NE(why.find("MSCCLC_BOOTSTRAP_SECRET"), std::string::npos)
        << weak << ": " << why;
    EXPECT_NE(why.find("128 random bits"), std::string::npos) << why;
    EXPECT_NE(why.find("openssl rand -hex 16"), std::string::npos) << why;
    if (strlen(weak) > 8) // "short" is a word of the message too
      EXPECT_EQ(why.find(weak), std::string::npos) << "the secret is echoed";
  }
  for (const char *strong :
       {"5f0c1e9a7b3d48e2a61f9c0d2b7e4a38", "5F0C1E9A7B3D48E2A61F9C0D2B7E4A38",
        "q2Xv8LmP0zR4tN7wYb1Kc9==", "q2Xv8LmP0zR4tN7wYb1Kc9Hd3Jf6Ga5S"})
    EXPECT_EQ(addressIdError(strong), "") << strong;
}

// An id made from an address without a secret lets anyone who reaches the
// address join: refused, with how to set one or allow it.
TEST_F(BootstrapIntruderTest, AddressIdsWithoutASecretAreRefused) {
  unsetenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET");
  std::string why = addressIdError(nullptr);
  EXPECT_NE(why.find("MSCCLC_BOOTSTRAP_SECRET"), std::string::npos) << why;
  EXPECT_NE(why.find("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET=1"), std::string::npos)
      << why;
  // A boolean of the settings module: "yes" allows too (it was refused
  // while only 1 and 0 were accepted), "0" and "off" do not.
  for (const char *allow : {"1", "yes", "on", "TRUE"}) {
    setenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET", allow, 1);
    EXPECT_EQ(addressIdError(nullptr), "") << allow;
  }
  for (const char *refuse : {"0", "off"}) {
    setenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET", refuse, 1);
    EXPECT_NE(addressIdError(nullptr).find("needs a secret"),
              std::string::npos)
        << refuse;
  }
  setenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET", "maybe", 1);
  why = addressIdError(nullptr);
  EXPECT_EQ(why, "MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET='maybe': expected 1, 0, "
                 "true, false, yes, no, on or off");
  unsetenv("MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET");
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
