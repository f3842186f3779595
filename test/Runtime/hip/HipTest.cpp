//===- HipTest.cpp - The HIP build of the runtime, without an AMD GPU ----===//
//
// What can be checked where ROCm is installed but no AMD GPU is: the
// library reports the missing device instead of failing, hipRTC is found
// and kept to the processors it knows, and a program from the compiler
// becomes AMDGPU code objects through the kernel cache, with hipRTC for
// gfx90a and the offload compiler for gfx942. Nothing here runs a kernel.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/Hiprtc.h"
#include "mscclc/mscclc.h"
#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace mscclc::rt;

namespace {

constexpr int kGfx90a = 0x90a;
constexpr int kGfx942 = 0x942;

/// An AMDGPU ELF code object for the processor `mach` (EF_AMDGPU_MACH,
/// the low byte of e_flags): ELF magic, 64-bit, e_machine EM_AMDGPU (224).
constexpr uint32_t kMachGfx90a = 0x3f, kMachGfx942 = 0x4c;
bool isAmdgpuCodeObject(const std::string &bytes, uint32_t mach) {
  if (bytes.size() < 64 || bytes.compare(0, 4, "\177ELF") != 0 || bytes[4] != 2)
    return false;
  uint16_t machine = 0;
  uint32_t flags = 0;
  memcpy(&machine, bytes.data() + 18, sizeof(machine));
  memcpy(&flags, bytes.data() + 48, sizeof(flags));
  return machine == 224 && (flags & 0xff) == mach;
}

bool haveCompiler() {
  const char *c = getenv("MSCCLC_COMPILER");
  return c && *c;
}

/// The 2-rank LL all-reduce of the stdlib, compiled by MSCCLC_COMPILER.
std::unique_ptr<Program> allreduceLL() {
  CompilerOptions options;
  options.ranks = 2;
  std::unique_ptr<Program> program;
  Status s = Program::compileFile(std::string(MSCCLC_TEST_STDLIB_DIR) +
                                      "/allreduce_2pa_ll.mscl",
                                  options, &program);
  EXPECT_TRUE(s.isOk()) << s.message();
  return program;
}

} // namespace

TEST(HipBuildTest, IsTheHipBuild) {
  EXPECT_EQ(MSCCLC_TARGET_HIP, 1);
  EXPECT_STREQ(MSCCLC_GPU_API, "HIP");
  // AMD's packets: 4 data bytes and a flag in one 8-byte store.
  EXPECT_EQ(MSCCLC_LL_PACKET_BYTES, 8u);
  EXPECT_EQ(archName(kGfx90a), "gfx90a");
  EXPECT_EQ(archName(kGfx942), "gfx942");
}

TEST(HipBuildTest, NoDeviceIsReportedCleanly) {
  int count = 0;
  if (hipGetDeviceCount(&count) == hipSuccess && count > 0)
    GTEST_SKIP() << "an AMD GPU is present";
  (void)hipGetLastError();
  mscclcComm_t comms[2];
  EXPECT_EQ(mscclcCommInitAll(comms, 2, nullptr), mscclcCudaError);
  EXPECT_NE(std::string(mscclcGetLastError()).find("no HIP device"),
            std::string::npos)
      << mscclcGetLastError();
}

TEST(HipBuildTest, CudaOnlyMemoryIsRefusedWithAReason) {
  // mscclcMemAlloc's memory (cuMem, for multicast): no HIP counterpart.
  void *ptr = &ptr;
  Status s = allocateCuMem(0, 1 << 21, &ptr);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_NE(s.message().find("HIP"), std::string::npos) << s.message();
}

TEST(HipBuildTest, HiprtcIsFoundAndKeptToItsProcessors) {
  std::string version, why;
  ASSERT_TRUE(mscclc::jit::hiprtcAvailable(&version)) << version;
  EXPECT_TRUE(mscclc::jit::hiprtcSupportsArch("gfx90a", &why)) << why;
  int runtime = 0;
  ASSERT_EQ(hipRuntimeGetVersion(&runtime), hipSuccess);
  if (runtime < 60000000) { // ROCm 5: its hipRTC would abort for MI300
    EXPECT_FALSE(mscclc::jit::hiprtcSupportsArch("gfx942", &why));
    EXPECT_NE(why.find("gfx942"), std::string::npos) << why;
  }
  EXPECT_FALSE(mscclc::jit::hiprtcSupportsArch("sm_90", &why));
}

TEST(HipBuildTest, GeneratedKernelBecomesAGfx90aCodeObjectThroughTheCache) {
  if (!haveCompiler())
    GTEST_SKIP() << "set MSCCLC_COMPILER to an mscclc binary";
  std::unique_ptr<Program> program = allreduceLL();
  ASSERT_TRUE(program);
  EXPECT_NE(program->cudaSource().find("HIP"), std::string::npos)
      << "the program holds the HIP emission";
  KernelCache cache;
  ASSERT_TRUE(KernelCache::fromEnvironment(&cache).isOk());
  std::string first, second;
  CompileStats stats;
  CompileRequest req;
  req.source = program->cudaSource();
  req.name = "allreduce_2pa_ll.hip";
  req.arch = kGfx90a;
  req.options = {"-DMSCCLC_DTYPE=f16", "-DMSCCLC_REDOP=sum", "-DMSCCLC_RANK=1"};
  Status s = compileCached(req, cache, &first, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(isAmdgpuCodeObject(first, kMachGfx90a));
  EXPECT_NE(first.find(program->plan().rankPlans[1].kernel), std::string::npos)
      << "rank 1's kernel is in the code object";
  s = compileCached(req, cache, &second, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(stats.cacheHit);
  EXPECT_EQ(first, second);
  EXPECT_NE(cache.pathFor(stats.key).find(".hsaco"), std::string::npos);
}

TEST(HipBuildTest, Gfx942GoesToTheOffloadCompiler) {
  if (!haveCompiler())
    GTEST_SKIP() << "set MSCCLC_COMPILER to an mscclc binary";
  std::string version, why;
  if (mscclc::jit::hiprtcSupportsArch("gfx942", &why))
    GTEST_SKIP() << "this hipRTC compiles gfx942 itself";
  if (system("command -v \"${MSCCLC_HIP_CLANG:-clang++-22}\" >/dev/null") != 0)
    GTEST_SKIP() << "no clang++-22 (MSCCLC_HIP_CLANG) for gfx942";
  std::unique_ptr<Program> program = allreduceLL();
  ASSERT_TRUE(program);
  std::string code;
  // Program::cubin: the runtime's own request (dtype, op, rank), cached.
  Status s = program->cubin(kGfx942, "f32", "sum", 0, &code);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(isAmdgpuCodeObject(code, kMachGfx942));
  EXPECT_NE(code.find(program->plan().rankPlans[0].kernel), std::string::npos);
}
