//===- SettingsTest.cpp - The NCCL library's settings ---------------------===//
//
// The library reads its variables through the runtime's settings module: a
// value that is not a boolean is an error naming it, where only "1" once
// counted and anything else silently meant "no".
//
//===----------------------------------------------------------------------===//

#include "Comm.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mscclc::nccl;

TEST(NcclSettings, SharedGpuIsABoolean) {
  bool allowed = true;
  unsetenv("MSCCLC_ALLOW_SHARED_GPU");
  ASSERT_TRUE(sharedGpuAllowed(&allowed).ok());
  EXPECT_FALSE(allowed);
  setenv("MSCCLC_ALLOW_SHARED_GPU", "true", 1);
  ASSERT_TRUE(sharedGpuAllowed(&allowed).ok());
  EXPECT_TRUE(allowed);
  setenv("MSCCLC_ALLOW_SHARED_GPU", "2", 1);
  Outcome o = sharedGpuAllowed(&allowed);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("MSCCLC_ALLOW_SHARED_GPU='2': expected 1, 0, true, "
                           "false, yes, no, on or off"),
            std::string::npos)
      << o.message;
  unsetenv("MSCCLC_ALLOW_SHARED_GPU");
}
