//===- BootstrapWireTest.cpp - The bootstrap's decoders on bad frames -----===//
//
// What the root and the ranks make of frames a stray, stale or hostile
// peer sends, and the handshake's proofs (BootstrapWire.h); the fuzz target
// bootstrap-wire-fuzzer runs the same decoders on random bytes.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/BootstrapWire.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstring>
#include <sys/socket.h>

using namespace mscclc::rt;
using namespace mscclc::rt::wire;

namespace {

constexpr uint64_t kNonce = 42;
const uint8_t kSecret[kSecretBytes] = {7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                       11, 12, 13, 14, 15, 16, 17, 18, 19,
                                       20, 21, 22, 23, 24, 25, 26, 27, 28,
                                       29, 30, 31};

WireAddr loopback(uint16_t port) {
  WireAddr w{};
  w.family = AF_INET;
  w.port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", w.addr);
  return w;
}

/// A handshake's session as both sides hold it, under `secret`.
Session sessionUnder(const uint8_t *secret, Purpose purpose = Purpose::Root) {
  Session s;
  s.secret = secret;
  s.purpose = purpose;
  s.commNonce = kNonce;
  for (size_t i = 0; i < kRandomBytes; ++i) {
    s.connectorRandom[i] = uint8_t(i * 3);
    s.acceptorRandom[i] = uint8_t(i * 5 + 1);
  }
  return s;
}

const Session kSession = sessionUnder(kSecret);

/// A hello with its proof under `session`.
Hello hello(uint32_t rank, uint32_t nranks,
            const Session &session = kSession) {
  Hello h{kMagic, rank, kNonce, nranks, loopback(uint16_t(4000 + rank)), {}};
  session.proveMessage(&h, sizeof(h));
  return h;
}

Status add(RootRoster &roster, const Hello &h, const char **stray = nullptr) {
  const char *ignored;
  int rank = -1;
  return roster.add(kSession, &h, sizeof(h), stray ? stray : &ignored, &rank);
}

TEST(BootstrapWire, RosterCollectsEveryRank) {
  RootRoster roster(kNonce);
  for (uint32_t r : {2u, 0u, 1u}) {
    const char *stray = "not set";
    int rank = -1;
    Hello h = hello(r, 3);
    ASSERT_TRUE(roster.add(kSession, &h, sizeof(h), &stray, &rank).isOk());
    EXPECT_EQ(stray, nullptr);
    EXPECT_EQ(rank, int(r));
  }
  EXPECT_TRUE(roster.complete());
  EXPECT_EQ(roster.addresses()[1].port, htons(4001));
}

/// Why the roster dropped `h` (null if it took it).
std::string strayReason(RootRoster &roster, const Hello &h) {
  const char *stray = nullptr;
  EXPECT_TRUE(add(roster, h, &stray).isOk());
  return stray ? stray : "";
}

TEST(BootstrapWire, StrayFramesAreDropped) {
  RootRoster roster(kNonce);
  Hello wrongNonce = hello(0, 2);
  wrongNonce.nonce = kNonce + 1;
  kSession.proveMessage(&wrongNonce, sizeof(wrongNonce));
  EXPECT_NE(strayReason(roster, wrongNonce).find("nonce"), std::string::npos);
  Hello badMagic = hello(0, 2);
  badMagic.magic ^= 1;
  EXPECT_NE(strayReason(roster, badMagic).find("magic"), std::string::npos);
  Hello h = hello(0, 2);
  const char *stray = nullptr;
  int rank = -1;
  EXPECT_TRUE(roster.add(kSession, &h, sizeof(h) - 1, &stray, &rank).isOk());
  EXPECT_NE(stray, nullptr) << "a short frame is not a hello";
  EXPECT_EQ(roster.nranks(), -1);
}

// The proof is checked before the fields a stray hello could otherwise
// use to break the communicator: a wrong proof (a hello proven under
// another secret, or one changed after it was proven) with a conflicting
// rank or rank count is dropped, not an error, and leaves the roster as it
// was.
TEST(BootstrapWire, WrongProofIsDroppedBeforeAnyField) {
  RootRoster roster(kNonce);
  ASSERT_TRUE(add(roster, hello(0, 2)).isOk());
  for (size_t byte : {size_t(0), kSecretBytes / 2, kSecretBytes - 1}) {
    uint8_t otherSecret[kSecretBytes];
    memcpy(otherSecret, kSecret, kSecretBytes);
    otherSecret[byte] ^= 0x80;
    // A taken rank, another rank count.
    Hello intruder = hello(0, 7, sessionUnder(otherSecret));
    EXPECT_NE(strayReason(roster, intruder).find("wrong proof"),
              std::string::npos)
        << "byte " << byte;
  }
  Hello changed = hello(1, 2);
  changed.listen.port = htons(6666); // redirected on the way
  EXPECT_NE(strayReason(roster, changed).find("wrong proof"),
            std::string::npos);
  Hello noProof = hello(1, 2);
  memset(noProof.proof, 0, kProofBytes);
  EXPECT_NE(strayReason(roster, noProof).find("wrong proof"),
            std::string::npos);
  EXPECT_EQ(roster.nranks(), 2);
  EXPECT_FALSE(roster.complete());
  EXPECT_EQ(strayReason(roster, hello(1, 2)), "");
  EXPECT_TRUE(roster.complete());
}

TEST(BootstrapWire, SecretsCompareEveryByte) {
  uint8_t a[kSecretBytes], b[kSecretBytes];
  memcpy(a, kSecret, kSecretBytes);
  memcpy(b, kSecret, kSecretBytes);
  EXPECT_TRUE(secretsEqual(a, b));
  for (size_t i = 0; i < kSecretBytes; ++i) {
    b[i] ^= 1;
    EXPECT_FALSE(secretsEqual(a, b)) << "byte " << i;
    b[i] ^= 1;
  }
}

// A rank of 2^32-1 once passed the range check as -1 and indexed before
// the root's table; a huge rank count made the root allocate for it.
TEST(BootstrapWire, OutOfRangeHellosAreErrors) {
  RootRoster roster(kNonce);
  Status s = add(roster, hello(0xffffffffu, 4));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank out of range"), std::string::npos)
      << s.message();
  EXPECT_FALSE(add(roster, hello(0, 0x7fffffffu)).isOk());
  EXPECT_FALSE(add(roster, hello(0, 0)).isOk());
}

TEST(BootstrapWire, ConflictingHellosAreErrors) {
  RootRoster roster(kNonce);
  ASSERT_TRUE(add(roster, hello(1, 4)).isOk());
  EXPECT_FALSE(add(roster, hello(1, 4)).isOk()) << "duplicate rank";
  EXPECT_FALSE(add(roster, hello(2, 5)).isOk()) << "other rank count";
  Hello badAddr = hello(3, 4);
  badAddr.listen.family = 77;
  kSession.proveMessage(&badAddr, sizeof(badAddr));
  EXPECT_FALSE(add(roster, badAddr).isOk());
}

// The root's answer carries its proof: a list of addresses changed on the
// way (ranks redirected to another address) is refused, and so is one
// proven for another connection.
TEST(BootstrapWire, AnswerMustHoldOneProvenAddressPerRank) {
  std::vector<WireAddr> sent = {loopback(1), loopback(2)};
  std::vector<WireAddr> got;
  std::vector<char> answer = encodeAddresses(sent, kSession);
  ASSERT_EQ(answer.size(), 2 * sizeof(WireAddr) + kProofBytes);
  EXPECT_TRUE(
      decodeAddresses(answer.data(), answer.size(), 2, kSession, &got).isOk());
  EXPECT_EQ(got[1].port, htons(2));
  EXPECT_FALSE(decodeAddresses(answer.data(), answer.size() - 1, 2, kSession,
                               &got)
                   .isOk());
  EXPECT_FALSE(decodeAddresses(answer.data(), 0, 0, kSession, &got).isOk());
  std::vector<char> redirected = answer;
  redirected[sizeof(WireAddr) + 4] ^= 1; // rank 1's address
  Status s = decodeAddresses(redirected.data(), redirected.size(), 2, kSession,
                             &got);
  EXPECT_NE(s.message().find("wrong proof"), std::string::npos)
      << s.message();
  Session otherConnection = kSession;
  otherConnection.acceptorRandom[0] ^= 1;
  EXPECT_FALSE(decodeAddresses(answer.data(), answer.size(), 2,
                               otherConnection, &got)
                   .isOk());
  sent[0].port = 0;
  answer = encodeAddresses(sent, kSession);
  EXPECT_FALSE(
      decodeAddresses(answer.data(), answer.size(), 2, kSession, &got).isOk());
}

/// Runs a handshake's first two steps: the acceptor under `acceptorSecret`
/// as `who`, the connector under kSecret expecting `expectedWho`. Why the
/// connector refused the answer, or "".
std::string handshake(const uint8_t *acceptorSecret, uint32_t who,
                      uint32_t expectedWho,
                      Purpose purpose = Purpose::Ring) {
  uint8_t mine[kRandomBytes], theirs[kRandomBytes];
  memset(mine, 0x11, kRandomBytes);
  memset(theirs, 0x22, kRandomBytes);
  Challenge c = makeChallenge(purpose, kNonce, mine);
  Session acceptor, connector;
  ChallengeAnswer answer;
  if (const char *stray =
          answerChallenge(&c, sizeof(c), acceptorSecret, purpose, kNonce, who,
                          theirs, &acceptor, &answer))
    return std::string("acceptor: ") + stray;
  connector.secret = kSecret;
  connector.purpose = purpose;
  connector.commNonce = kNonce;
  memcpy(connector.connectorRandom, mine, kRandomBytes);
  const char *wrong = checkChallengeAnswer(answer, expectedWho, &connector);
  return wrong ? wrong : "";
}

// Both sides of a handshake prove the secret: an acceptor without it (a
// stranger listening first on a well-known port) is caught before the
// connector sends anything else, and one that is another member of the
// communicator than the one expected too.
TEST(BootstrapWire, HandshakeProvesTheAcceptor) {
  EXPECT_EQ(handshake(kSecret, 3, 3), "");
  uint8_t other[kSecretBytes];
  memcpy(other, kSecret, kSecretBytes);
  other[kSecretBytes - 1] ^= 1;
  EXPECT_NE(handshake(other, 3, 3).find("does not know"), std::string::npos);
  EXPECT_NE(handshake(kSecret, 4, 3).find("another member"),
            std::string::npos);
}

// A proof is bound to its direction, its kind of connection and its
// connection: the connector's own proof reflected back as the acceptor's,
// a proof made for a root connection shown on a ring connection, and an
// answer replayed from an earlier handshake are all refused.
TEST(BootstrapWire, ProofsCannotBeReflectedOrReplayed) {
  Session connector = sessionUnder(kSecret, Purpose::Ring);
  uint32_t who = 3;
  ChallengeAnswer reflected{kMagic, who, {}, {}};
  memcpy(reflected.random, connector.acceptorRandom, kRandomBytes);
  connector.prove(Step::ConnectorProof, &who, sizeof(who), reflected.proof);
  Session check = connector;
  EXPECT_NE(checkChallengeAnswer(reflected, who, &check), nullptr);

  ChallengeAnswer otherPurpose = reflected;
  sessionUnder(kSecret, Purpose::Root)
      .prove(Step::AcceptorProof, &who, sizeof(who), otherPurpose.proof);
  check = connector;
  EXPECT_NE(checkChallengeAnswer(otherPurpose, who, &check), nullptr);

  ChallengeAnswer good = reflected;
  connector.prove(Step::AcceptorProof, &who, sizeof(who), good.proof);
  check = connector;
  EXPECT_EQ(checkChallengeAnswer(good, who, &check), nullptr);
  check = connector;
  check.connectorRandom[7] ^= 1; // a later handshake's own challenge
  EXPECT_NE(checkChallengeAnswer(good, who, &check), nullptr);
}

// The acceptor answers only challenges of its communicator and kind of
// connection; anything else is a stranger's.
TEST(BootstrapWire, AcceptorRefusesForeignChallenges) {
  uint8_t random[kRandomBytes] = {};
  Challenge c = makeChallenge(Purpose::Ring, kNonce, random);
  Session session;
  ChallengeAnswer answer;
  auto why = [&](const Challenge &sent, size_t size = sizeof(Challenge)) {
    const char *s = answerChallenge(&sent, size, kSecret, Purpose::Ring,
                                    kNonce, 1, random, &session, &answer);
    return std::string(s ? s : "");
  };
  EXPECT_EQ(why(c), "");
  EXPECT_NE(why(c, sizeof(c) - 1), "");
  Challenge other = c;
  other.commNonce ^= 1;
  EXPECT_NE(why(other).find("another communicator"), std::string::npos);
  other = c;
  other.purpose = uint32_t(Purpose::TcpPair);
  EXPECT_NE(why(other).find("another kind"), std::string::npos);
  other = c;
  other.magic ^= 1;
  EXPECT_NE(why(other).find("magic"), std::string::npos);
}

TEST(BootstrapWire, UniqueIdNeedsMagicVersionAndAddress) {
  UniqueId id{};
  IdLayout l{kMagic, kVersion, kNonce, 0, loopback(29500), {}};
  memcpy(l.secret, kSecret, kSecretBytes);
  memcpy(id.bytes, &l, sizeof(l));
  IdLayout got;
  ASSERT_TRUE(decodeUniqueId(id, &got).isOk());
  EXPECT_EQ(got.nonce, kNonce);
  EXPECT_TRUE(secretsEqual(got.secret, kSecret));
  l.version = 2; // an id of an mscclc that sent its secret in the clear
  memcpy(id.bytes, &l, sizeof(l));
  EXPECT_FALSE(decodeUniqueId(id, &got).isOk());
  l.version = kVersion;
  memcpy(id.bytes, &l, sizeof(l));
  EXPECT_EQ(describeUniqueId(id), "127.0.0.1:29500");
  l.root.family = 0;
  memcpy(id.bytes, &l, sizeof(l));
  EXPECT_FALSE(decodeUniqueId(id, &got).isOk());
  memset(id.bytes, 0xff, sizeof(id.bytes));
  EXPECT_FALSE(decodeUniqueId(id, &got).isOk());
  EXPECT_EQ(describeUniqueId(id), "(not an mscclc unique id)");
}

TEST(BootstrapWire, RingHelloMustComeFromThePreviousRank) {
  Session session = sessionUnder(kSecret, Purpose::Ring);
  RingHello rh{kMagic, 3, kNonce, {}};
  session.proveMessage(&rh, sizeof(rh));
  auto why = [&](uint64_t nonce, int expected, size_t size = sizeof(RingHello)) {
    const char *s = checkRingHello(&rh, size, session, nonce, expected);
    return std::string(s ? s : "");
  };
  EXPECT_EQ(why(kNonce, 3), "");
  EXPECT_NE(why(kNonce, 2).find("another rank"), std::string::npos);
  EXPECT_NE(why(kNonce + 1, 3).find("nonce"), std::string::npos);
  EXPECT_NE(why(kNonce, 3, sizeof(rh) - 1).find("size"), std::string::npos);
  rh.proof[5] ^= 1;
  EXPECT_NE(why(kNonce, 3).find("wrong proof"), std::string::npos);
  rh.proof[5] ^= 1;
  rh.rank = 0xffffffffu; // changed after it was proven
  EXPECT_NE(why(kNonce, -1), "");
  session.proveMessage(&rh, sizeof(rh));
  EXPECT_NE(why(kNonce, -1), "");
}

} // namespace
