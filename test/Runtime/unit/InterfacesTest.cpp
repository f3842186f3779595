//===- InterfacesTest.cpp - MSCCLC_SOCKET_IFNAME and the default choice ---===//
//
// The matching rules on made-up interface lists (Interfaces.h), then a
// communicator built over the loopback that MSCCLC_SOCKET_IFNAME picks.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Interfaces.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/socket.h>
#include <thread>

using namespace mscclc::rt;

namespace {

InterfaceAddress v4(const char *name, const char *ip, bool up = true) {
  InterfaceAddress a;
  a.name = name;
  a.up = up;
  a.loopback = std::string(name) == "lo";
  a.addr.family = AF_INET;
  inet_pton(AF_INET, ip, a.addr.addr);
  return a;
}

InterfaceAddress v6(const char *name, const char *ip) {
  InterfaceAddress a = v4(name, "0.0.0.0");
  a.addr.family = AF_INET6;
  inet_pton(AF_INET6, ip, a.addr.addr);
  return a;
}

/// The name of the interface chosen from `list` under `spec`, or "none".
std::string chosen(const std::vector<InterfaceAddress> &list,
                   const char *spec) {
  auto i = chooseInterface(list, spec);
  return i ? list[*i].name : "none";
}

bool matches(const char *spec, const char *name) {
  return InterfaceFilter::parse(spec).matches(name);
}

} // namespace

TEST(InterfaceFilter, PrefixesExactNamesAndExclusion) {
  EXPECT_TRUE(matches("eth", "eth0"));
  EXPECT_TRUE(matches("eth", "eth"));
  EXPECT_FALSE(matches("eth", "en0"));
  EXPECT_TRUE(matches("ib,eth", "eth1"));
  EXPECT_TRUE(matches("ib,eth", "ib0"));
  EXPECT_FALSE(matches("ib,eth", "lo"));

  EXPECT_TRUE(matches("=eth0", "eth0"));
  EXPECT_FALSE(matches("=eth0", "eth01")) << "= is the whole name";
  EXPECT_TRUE(matches("=eth0,ib1", "ib1"));

  EXPECT_FALSE(matches("^docker", "docker0"));
  EXPECT_TRUE(matches("^docker", "eth0"));
  EXPECT_FALSE(matches("^docker,lo", "lo"));
  EXPECT_FALSE(matches("^=docker0", "docker0"));
  EXPECT_TRUE(matches("^=docker0", "docker1")) << "^= excludes that name only";

  InterfaceFilter f = InterfaceFilter::parse("^=a,,b,");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  EXPECT_EQ(f.names, (std::vector<std::string>{"a", "b"})) << "empty names dropped";
}

TEST(InterfaceChoice, DefaultAvoidsLoopbackAndDocker) {
  std::vector<InterfaceAddress> list = {v4("lo", "127.0.0.1"),
                                        v4("docker0", "172.17.0.1"),
                                        v4("eth0", "10.0.0.5")};
  EXPECT_EQ(chosen(list, nullptr), "eth0");
  list.pop_back();
  EXPECT_EQ(chosen(list, nullptr), "docker0") << "docker before lo";
  list.pop_back();
  EXPECT_EQ(chosen(list, nullptr), "lo") << "lo when nothing else exists";
  list[0].up = false;
  EXPECT_EQ(chosen(list, nullptr), "none") << "down interfaces do not count";
}

TEST(InterfaceChoice, IPv4FirstAndNoLinkLocalIPv6) {
  std::vector<InterfaceAddress> list = {v6("eth0", "fd00::5"),
                                        v4("eth1", "10.0.0.6")};
  EXPECT_EQ(chosen(list, nullptr), "eth1");
  list.pop_back();
  EXPECT_EQ(chosen(list, nullptr), "eth0") << "IPv6 when there is no IPv4";
  list = {v6("eth0", "fe80::1"), v4("lo", "127.0.0.1")};
  EXPECT_EQ(chosen(list, nullptr), "lo") << "link-local IPv6 needs a scope";
}

TEST(InterfaceChoice, SpecPicksAmongTheUpInterfaces) {
  std::vector<InterfaceAddress> list = {
      v4("lo", "127.0.0.1"), v4("docker0", "172.17.0.1"),
      v4("eth0", "10.0.0.5", false), v4("eth1", "10.0.1.5"),
      v4("ib0", "192.168.0.5")};
  EXPECT_EQ(chosen(list, "lo"), "lo");
  EXPECT_EQ(chosen(list, "docker"), "docker0");
  EXPECT_EQ(chosen(list, "eth"), "eth1") << "eth0 is down";
  EXPECT_EQ(chosen(list, "=eth0"), "none");
  EXPECT_EQ(chosen(list, "ib,eth"), "eth1") << "the list's order, not the spec's";
  EXPECT_EQ(chosen(list, "^lo,docker,eth"), "ib0");
  EXPECT_EQ(chosen(list, "^=lo"), "docker0");
  EXPECT_EQ(chosen(list, "wlan"), "none");
}

// An address to listen on has port 0 (the kernel picks a free one) and
// zeros past an IPv4 address, whatever the memory held before: a port left
// from earlier contents once made a rank bind a port in use.
TEST(InterfaceChoice, ListenAddressesHavePortZero) {
  alignas(InterfaceAddress) unsigned char raw[sizeof(InterfaceAddress)];
  memset(raw, 0xab, sizeof(raw));
  auto *a = new (raw) InterfaceAddress;
  EXPECT_EQ(a->addr.port, 0);
  EXPECT_EQ(a->addr.family, 0);
  for (uint8_t b : a->addr.addr)
    EXPECT_EQ(b, 0);
  a->~InterfaceAddress();

  wire::WireAddr chosen;
  memset(&chosen, 0xab, sizeof(chosen));
  Status s = chooseListenAddress("lo", "MSCCLC_SOCKET_IFNAME", &chosen);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(chosen.family, AF_INET);
  EXPECT_EQ(chosen.port, 0);
  for (size_t i = 4; i < sizeof(chosen.addr); ++i)
    EXPECT_EQ(chosen.addr[i], 0) << "byte " << i;
}

class InterfacesLoopbackTest : public ::testing::Test {
protected:
  void SetUp() override {
    unsetenv("MSCCLC_BOOTSTRAP_ADDR");
    unsetenv("MSCCLC_COMM_ID");
    unsetenv("MSCCLC_SOCKET_IFNAME");
    unsetenv("NCCL_SOCKET_IFNAME");
  }
  void TearDown() override { SetUp(); }
};

// MSCCLC_SOCKET_IFNAME=lo puts the root on 127.0.0.1 (without
// MSCCLC_BOOTSTRAP_ADDR), and the ranks listen there too: a communicator
// is built over it. NCCL_SOCKET_IFNAME does the same when ours is unset.
TEST_F(InterfacesLoopbackTest, RootAndRanksOnTheChosenLoopback) {
  for (const char *variable : {"MSCCLC_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"})
    for (const char *spec : {"lo", "=lo"}) {
      SCOPED_TRACE(std::string(variable) + "=" + spec);
      setenv(variable, spec, 1);
      UniqueId id;
      Status s = createUniqueId(&id);
      ASSERT_TRUE(s.isOk()) << s.message();
      EXPECT_EQ(describeUniqueId(id).rfind("127.0.0.1:", 0), 0u)
          << describeUniqueId(id);
      std::vector<Status> statuses(3);
      std::vector<std::thread> ranks;
      for (int r = 0; r < 3; ++r)
        ranks.emplace_back([&, r] {
          std::unique_ptr<Bootstrap> b;
          Status st = Bootstrap::create(id, r, 3, &b);
          if (st.isOk())
            st = b->barrier();
          statuses[size_t(r)] = st;
        });
      for (auto &t : ranks)
        t.join();
      for (const Status &st : statuses)
        EXPECT_TRUE(st.isOk()) << st.message();
      unsetenv(variable);
    }
}

TEST_F(InterfacesLoopbackTest, OursWinsAndNoMatchIsAClearError) {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  setenv("MSCCLC_SOCKET_IFNAME", "=no-such-interface0", 1);
  UniqueId id;
  Status s = createUniqueId(&id);
  EXPECT_EQ(s.code(), Code::InvalidArgument);
  EXPECT_NE(s.message().find("MSCCLC_SOCKET_IFNAME='=no-such-interface0' "
                             "matches no interface"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("lo"), std::string::npos)
      << "the message lists the interfaces there are: " << s.message();
}
