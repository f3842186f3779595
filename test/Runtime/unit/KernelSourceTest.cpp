//===- KernelSourceTest.cpp - The GPU test kernels compile with NVRTC -----===//
//
// NVRTC needs no GPU, so the hand-written kernels of the GPU self-test are
// compiled here for sm_90 in every data type: a broken kernel shows up in
// CI, not only on the GPU machine. LL8 packets, which generated code does
// not use yet, are compiled here too, so they keep working until it does.
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
    for (const char *kernel :
         {"selftest_hb_rank7", "selftest_port_rank7", "selftest_ll8_rank7"})
      EXPECT_NE(cubin.find(kernel), std::string::npos) << t << ": " << kernel;
  }
}

TEST(KernelSourceTest, LL8PacketsCompileWithTheDeviceLibrary) {
  // Every thread writes one LL8 packet and reads it back, as generated code
  // would include them: through Device.h, with the block prologue and
  // epilogue.
  CompileRequest req;
  req.source = R"CUDA(
#include "mscclc/device/Device.h"
using namespace mscclc::dev;
extern "C" __global__ void ll8_round_trip(const __grid_constant__ MscclcKernelArgs args) {
  Ctx ctx(args, args.rank);
  beginBlock(ctx, args);
  LL8Packet *packets = static_cast<LL8Packet *>(args.scratch) + 2 * threadIdx.x;
  Site site = {7, MSCCLC_CHAN_MEMORY, 0, MSCCLC_OPC_LL_READ};
  storeLL8(packets + packetParity(ctx), threadIdx.x * 3u, ctx.flag);
  static_cast<u32 *>(args.output)[threadIdx.x] =
      readLL8(ctx, site, packets + packetParity(ctx), ctx.flag);
  endBlock(ctx, args);
}
)CUDA";
  req.name = "ll8_round_trip.cu";
  req.arch = 90;
  req.options = {"-DMSCCLC_DTYPE=u32", "-DMSCCLC_REDOP=sum"};
  std::string cubin;
  Status s = compileToCubin(req, &cubin);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_NE(cubin.find("ll8_round_trip"), std::string::npos);
}
