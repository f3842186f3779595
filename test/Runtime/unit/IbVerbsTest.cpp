//===- IbVerbsTest.cpp - Finding RDMA devices, and falling back to TCP ----===//
//
// NCCL_IB_HCA-style filters; the probe without libibverbs, with a library
// that is not libibverbs, and (where the build has rdma-core's headers)
// with a fake libibverbs holding two HCAs; and a host without rdma-core,
// which is not ready for IB verbs, so port channels between nodes use TCP.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/IbConnection.h"
#include "mscclc/runtime/IbVerbs.h"
#include "mscclc/runtime/Transport.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mscclc::rt;

namespace {

HcaFilter parse(const char *spec) {
  HcaFilter f;
  Status s = parseHcaFilter(spec, "NCCL_IB_HCA", &f);
  EXPECT_TRUE(s.isOk()) << s.message();
  return f;
}

/// Whether this build probes at all (it has rdma-core's headers).
bool probes() {
  setenv("MSCCLC_IBVERBS_LIBRARY", "/nonexistent/libibverbs.so.1", 1);
  IbProbe p = probeIbDevices();
  unsetenv("MSCCLC_IBVERBS_LIBRARY");
  return p.why.find("without rdma-core's headers") == std::string::npos;
}

class IbVerbsTest : public ::testing::Test {
protected:
  void TearDown() override {
    for (const char *v : {"MSCCLC_IBVERBS_LIBRARY", "MSCCLC_IB_HCA",
                          "NCCL_IB_HCA", "FAKE_IBVERBS_NONE"})
      unsetenv(v);
  }
};

} // namespace

TEST(HcaFilter, PrefixesExactNamesPortsAndExclusion) {
  EXPECT_TRUE(parse("").matches("mlx5_3", 1));
  HcaFilter f = parse("mlx5");
  EXPECT_TRUE(f.matches("mlx5_0", 1));
  EXPECT_FALSE(f.matches("bnxt_re0", 1));
  f = parse("=mlx5_0:1,mlx5_1");
  EXPECT_TRUE(f.matches("mlx5_0", 1));
  EXPECT_FALSE(f.matches("mlx5_0", 2));
  EXPECT_TRUE(f.matches("mlx5_1", 2));
  EXPECT_FALSE(f.matches("mlx5_10", 1)); // exact: not a prefix
  f = parse("^=mlx5_2");
  EXPECT_TRUE(f.matches("mlx5_0", 1));
  EXPECT_FALSE(f.matches("mlx5_2", 1));
  EXPECT_TRUE(f.matches("mlx5_20", 1));
  f = parse("^mlx5_1:2");
  EXPECT_TRUE(f.matches("mlx5_1", 1));
  EXPECT_FALSE(f.matches("mlx5_1", 2));
  for (const char *bad : {"mlx5_0:", "mlx5_0:x", "mlx5_0:0", ":1"}) {
    HcaFilter g;
    Status s = parseHcaFilter(bad, "NCCL_IB_HCA", &g);
    EXPECT_FALSE(s.isOk()) << bad;
    EXPECT_NE(s.message().find("NCCL_IB_HCA"), std::string::npos);
  }
}

TEST_F(IbVerbsTest, WithoutLibibverbsTheProbeSaysWhy) {
  setenv("MSCCLC_IBVERBS_LIBRARY", "/nonexistent/libibverbs.so.1", 1);
  IbProbe p = probeIbDevices();
  EXPECT_TRUE(p.ports.empty());
  bool unbuilt = p.why.find("without rdma-core's headers") != std::string::npos;
  EXPECT_TRUE(unbuilt || p.why.find("/nonexistent/libibverbs.so.1 did not "
                                    "load") != std::string::npos)
      << p.why;
  if (!unbuilt) {
    setenv("MSCCLC_IBVERBS_LIBRARY", "libc.so.6", 1);
    p = probeIbDevices();
    EXPECT_TRUE(p.ports.empty());
    EXPECT_NE(p.why.find("is not libibverbs"), std::string::npos) << p.why;
  }
}

TEST_F(IbVerbsTest, ABadHcaListIsTheReason) {
  setenv("NCCL_IB_HCA", "mlx5_0:zero", 1);
  IbProbe p = probeIbDevices();
  EXPECT_TRUE(p.ports.empty());
  EXPECT_NE(p.why.find("NCCL_IB_HCA"), std::string::npos) << p.why;
}

#ifdef MSCCLC_FAKE_IBVERBS
TEST_F(IbVerbsTest, FindsActivePortsAndHonoursTheFilter) {
  ASSERT_TRUE(probes());
  setenv("MSCCLC_IBVERBS_LIBRARY", MSCCLC_FAKE_IBVERBS, 1);
  IbProbe p = probeIbDevices();
  ASSERT_EQ(p.ports.size(), 2u) << p.why;
  EXPECT_EQ(describePorts(p.ports), "mlx5_0:1 (InfiniBand), mlx5_1:1 (RoCE)");
  // MSCCLC_IB_HCA wins over NCCL_IB_HCA.
  setenv("NCCL_IB_HCA", "=mlx5_0", 1);
  setenv("MSCCLC_IB_HCA", "^mlx5_0", 1);
  p = probeIbDevices();
  ASSERT_EQ(p.ports.size(), 1u) << p.why;
  EXPECT_EQ(p.ports[0].device, "mlx5_1");
  setenv("MSCCLC_IB_HCA", "mlx5_0:2", 1); // a port that is down
  p = probeIbDevices();
  EXPECT_TRUE(p.ports.empty());
  EXPECT_NE(p.why.find("mlx5_0:2 (not active)"), std::string::npos) << p.why;
  EXPECT_NE(p.why.find("left out by MSCCLC_IB_HCA"), std::string::npos)
      << p.why;
  unsetenv("MSCCLC_IB_HCA");
  unsetenv("NCCL_IB_HCA");
  setenv("FAKE_IBVERBS_NONE", "1", 1);
  p = probeIbDevices();
  EXPECT_TRUE(p.ports.empty());
  EXPECT_NE(p.why.find("no RDMA device"), std::string::npos) << p.why;
}
#endif

TEST_F(IbVerbsTest, AHostWithoutRdmaCoreIsNotReadyAndUsesTcp) {
  setenv("MSCCLC_IBVERBS_LIBRARY", "/nonexistent/libibverbs.so.1", 1);
  IbProbe probe = probeIbDevices();
  EXPECT_TRUE(probe.ports.empty());
  char memory[64];
  IbReadiness r = findIbReadiness(probe, IbOptions(), memory, sizeof(memory), nullptr);
  EXPECT_FALSE(r.ready);
  EXPECT_FALSE(r.hasPort);
  EXPECT_EQ(r.detail, probe.why);
  EXPECT_NE(r.detail.find("/nonexistent/libibverbs.so.1"), std::string::npos)
      << r.detail;
  TransportKind k = TransportKind::CopyEngine;
  ASSERT_TRUE(chooseTransport(false, r.ability(), r.ability(), &k).isOk());
  EXPECT_EQ(k, TransportKind::Tcp);
}
