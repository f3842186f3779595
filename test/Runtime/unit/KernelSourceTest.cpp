//===- KernelSourceTest.cpp - The GPU test kernels compile with NVRTC -----===//
//
// NVRTC needs no GPU, so the hand-written kernels of the GPU self-test are
// compiled here for sm_90 in every data type: a broken kernel shows up in
// CI, not only on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "../gpu/SelfTestKernels.h"
#include "mscclc/runtime/Loader.h"

#include <gtest/gtest.h>

using namespace mscclc::rt;

TEST(KernelSourceTest, SelfTestKernelsCompileForEveryType) {
  for (const char *t : {"f32", "f16", "bf16", "i32"}) {
    CompileRequest req;
    req.source = gputest::selfTestSource();
    req.name = std::string("selftest_") + t + ".cu";
    req.arch = 90;
    req.options = {std::string("-DMSCCLC_DTYPE=") + t, "-DMSCCLC_REDOP=sum"};
    std::string cubin;
    Status s = compileToCubin(req, &cubin);
    EXPECT_TRUE(s.isOk()) << t << ": " << s.message();
    EXPECT_GT(cubin.size(), 1000u);
  }
}
