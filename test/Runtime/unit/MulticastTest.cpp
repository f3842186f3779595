//===- MulticastTest.cpp - SwitchChannel setup is refused when disabled ---===//

#include "mscclc/runtime/Multicast.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mscclc::rt;

TEST(MulticastTest, RefusedWithNvlsDisabled) {
  unsetenv("MSCCLC_DISABLE_MULTICAST");
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  Status s = multicastAllowed();
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("NCCL_NVLS_ENABLE=0"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("refused"), std::string::npos);
}

TEST(MulticastTest, RefusedWithMscclcSwitch) {
  unsetenv("NCCL_NVLS_ENABLE");
  setenv("MSCCLC_DISABLE_MULTICAST", "1", 1);
  Status s = multicastAllowed();
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("MSCCLC_DISABLE_MULTICAST=1"), std::string::npos)
      << s.message();
}

TEST(MulticastTest, AllowedOnlyWhenNothingForbidsIt) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  setenv("MSCCLC_DISABLE_MULTICAST", "0", 1);
  EXPECT_TRUE(multicastAllowed().isOk());
  unsetenv("NCCL_NVLS_ENABLE");
  unsetenv("MSCCLC_DISABLE_MULTICAST");
  EXPECT_TRUE(multicastAllowed().isOk());
  // Leave the process as every run on the lent machines must be.
  setenv("MSCCLC_DISABLE_MULTICAST", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
}
