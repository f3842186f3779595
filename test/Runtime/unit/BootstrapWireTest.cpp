//===- BootstrapWireTest.cpp - The bootstrap's decoders on bad frames -----===//
//
// What the root and the ranks make of frames a stray, stale or hostile
// peer sends (BootstrapWire.h); the fuzz target bootstrap-wire-fuzzer runs
// the same decoders on random bytes.
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

Hello hello(uint32_t rank, uint32_t nranks) {
  Hello h{kMagic, rank, kNonce, nranks, loopback(uint16_t(4000 + rank)), {}};
  memcpy(h.secret, kSecret, kSecretBytes);
  return h;
}

Status add(RootRoster &roster, const Hello &h, const char **stray = nullptr) {
  const char *ignored;
  int rank = -1;
  return roster.add(&h, sizeof(h), stray ? stray : &ignored, &rank);
}

TEST(BootstrapWire, RosterCollectsEveryRank) {
  RootRoster roster(kNonce, kSecret);
  for (uint32_t r : {2u, 0u, 1u}) {
    const char *stray = "not set";
    int rank = -1;
    Hello h = hello(r, 3);
    ASSERT_TRUE(roster.add(&h, sizeof(h), &stray, &rank).isOk());
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
  RootRoster roster(kNonce, kSecret);
  Hello wrongNonce = hello(0, 2);
  wrongNonce.nonce = kNonce + 1;
  EXPECT_NE(strayReason(roster, wrongNonce).find("nonce"), std::string::npos);
  Hello badMagic = hello(0, 2);
  badMagic.magic ^= 1;
  EXPECT_NE(strayReason(roster, badMagic).find("magic"), std::string::npos);
  Hello h = hello(0, 2);
  const char *stray = nullptr;
  int rank = -1;
  EXPECT_TRUE(roster.add(&h, sizeof(h) - 1, &stray, &rank).isOk());
  EXPECT_NE(stray, nullptr) << "a short frame is not a hello";
  EXPECT_EQ(roster.nranks(), -1);
}

// The secret is checked before the fields a stray hello could otherwise
// use to break the communicator: a wrong secret with a conflicting rank or
// rank count is dropped, not an error, and leaves the roster as it was.
TEST(BootstrapWire, WrongSecretIsDroppedBeforeAnyField) {
  RootRoster roster(kNonce, kSecret);
  ASSERT_TRUE(add(roster, hello(0, 2)).isOk());
  for (size_t byte : {size_t(0), kSecretBytes / 2, kSecretBytes - 1}) {
    Hello intruder = hello(0, 7); // a taken rank, another rank count
    intruder.secret[byte] ^= 0x80;
    EXPECT_NE(strayReason(roster, intruder).find("wrong secret"),
              std::string::npos)
        << "byte " << byte;
  }
  Hello noSecret = hello(1, 2);
  memset(noSecret.secret, 0, kSecretBytes);
  EXPECT_NE(strayReason(roster, noSecret).find("wrong secret"),
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
  RootRoster roster(kNonce, kSecret);
  Status s = add(roster, hello(0xffffffffu, 4));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank out of range"), std::string::npos)
      << s.message();
  EXPECT_FALSE(add(roster, hello(0, 0x7fffffffu)).isOk());
  EXPECT_FALSE(add(roster, hello(0, 0)).isOk());
}

TEST(BootstrapWire, ConflictingHellosAreErrors) {
  RootRoster roster(kNonce, kSecret);
  ASSERT_TRUE(add(roster, hello(1, 4)).isOk());
  EXPECT_FALSE(add(roster, hello(1, 4)).isOk()) << "duplicate rank";
  EXPECT_FALSE(add(roster, hello(2, 5)).isOk()) << "other rank count";
  Hello badAddr = hello(3, 4);
  badAddr.listen.family = 77;
  EXPECT_FALSE(add(roster, badAddr).isOk());
}

TEST(BootstrapWire, AnswerMustHoldOneAddressPerRank) {
  std::vector<WireAddr> sent = {loopback(1), loopback(2)};
  std::vector<WireAddr> got;
  EXPECT_TRUE(decodeAddresses(sent.data(), 2 * sizeof(WireAddr), 2, &got)
                  .isOk());
  EXPECT_EQ(got[1].port, htons(2));
  EXPECT_FALSE(
      decodeAddresses(sent.data(), 2 * sizeof(WireAddr) - 1, 2, &got).isOk());
  EXPECT_FALSE(decodeAddresses(sent.data(), 0, 0, &got).isOk());
  sent[0].port = 0;
  EXPECT_FALSE(decodeAddresses(sent.data(), 2 * sizeof(WireAddr), 2, &got)
                   .isOk());
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
  l.version = 1; // an id of an mscclc without secrets
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
  RingHello rh{kMagic, 3, kNonce, {}};
  memcpy(rh.secret, kSecret, kSecretBytes);
  auto why = [&](uint64_t nonce, int expected, size_t size = sizeof(RingHello)) {
    const char *s = checkRingHello(&rh, size, nonce, kSecret, expected);
    return std::string(s ? s : "");
  };
  EXPECT_EQ(why(kNonce, 3), "");
  EXPECT_NE(why(kNonce, 2).find("another rank"), std::string::npos);
  EXPECT_NE(why(kNonce + 1, 3).find("nonce"), std::string::npos);
  EXPECT_NE(why(kNonce, 3, sizeof(rh) - 1).find("size"), std::string::npos);
  rh.secret[5] ^= 1;
  EXPECT_NE(why(kNonce, 3).find("wrong secret"), std::string::npos);
  rh.secret[5] ^= 1;
  rh.rank = 0xffffffffu;
  EXPECT_NE(why(kNonce, -1), "");
}

} // namespace
