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

WireAddr loopback(uint16_t port) {
  WireAddr w{};
  w.family = AF_INET;
  w.port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", w.addr);
  return w;
}

Hello hello(uint32_t rank, uint32_t nranks) {
  return Hello{kMagic, rank, kNonce, nranks, loopback(uint16_t(4000 + rank))};
}

Status add(RootRoster &roster, const Hello &h, bool *stray = nullptr) {
  bool ignored;
  int rank = -1;
  return roster.add(&h, sizeof(h), stray ? stray : &ignored, &rank);
}

TEST(BootstrapWire, RosterCollectsEveryRank) {
  RootRoster roster(kNonce);
  for (uint32_t r : {2u, 0u, 1u}) {
    bool stray = true;
    int rank = -1;
    Hello h = hello(r, 3);
    ASSERT_TRUE(roster.add(&h, sizeof(h), &stray, &rank).isOk());
    EXPECT_FALSE(stray);
    EXPECT_EQ(rank, int(r));
  }
  EXPECT_TRUE(roster.complete());
  EXPECT_EQ(roster.addresses()[1].port, htons(4001));
}

TEST(BootstrapWire, StrayFramesAreDropped) {
  RootRoster roster(kNonce);
  Hello wrongNonce = hello(0, 2);
  wrongNonce.nonce = kNonce + 1;
  bool stray = false;
  EXPECT_TRUE(add(roster, wrongNonce, &stray).isOk());
  EXPECT_TRUE(stray);
  Hello h = hello(0, 2);
  int rank = -1;
  EXPECT_TRUE(roster.add(&h, sizeof(h) - 1, &stray, &rank).isOk());
  EXPECT_TRUE(stray) << "a short frame is not a hello";
  EXPECT_EQ(roster.nranks(), -1);
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
  IdLayout l{kMagic, kVersion, kNonce, 0, loopback(29500)};
  memcpy(id.bytes, &l, sizeof(l));
  IdLayout got;
  ASSERT_TRUE(decodeUniqueId(id, &got).isOk());
  EXPECT_EQ(got.nonce, kNonce);
  EXPECT_EQ(describeUniqueId(id), "127.0.0.1:29500");
  l.root.family = 0;
  memcpy(id.bytes, &l, sizeof(l));
  EXPECT_FALSE(decodeUniqueId(id, &got).isOk());
  memset(id.bytes, 0xff, sizeof(id.bytes));
  EXPECT_FALSE(decodeUniqueId(id, &got).isOk());
  EXPECT_EQ(describeUniqueId(id), "(not an mscclc unique id)");
}

TEST(BootstrapWire, RingHelloMustComeFromThePreviousRank) {
  RingHello rh{kMagic, 3, kNonce};
  EXPECT_TRUE(isRingHelloFrom(&rh, sizeof(rh), kNonce, 3));
  EXPECT_FALSE(isRingHelloFrom(&rh, sizeof(rh), kNonce, 2));
  EXPECT_FALSE(isRingHelloFrom(&rh, sizeof(rh), kNonce + 1, 3));
  EXPECT_FALSE(isRingHelloFrom(&rh, sizeof(rh) - 1, kNonce, 3));
  rh.rank = 0xffffffffu;
  EXPECT_FALSE(isRingHelloFrom(&rh, sizeof(rh), kNonce, -1));
}

} // namespace
