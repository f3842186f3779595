//===- ApiTest.cpp - The C API's argument checks and error messages -------===//
//
// Runs without a GPU: everything here fails (or succeeds) before a device is
// needed, and must say why.
//
//===----------------------------------------------------------------------===//

#include "TestFiles.h"
#include "mscclc/mscclc.h"
#include "mscclc/runtime/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace mscclc::rt;

namespace {

/// The stand-in compiler's folder (removed when the test binary ends); its
/// `calls` file gets a line per run.
std::string fakeCompilerDir() {
  static mscclc::test::TempDir dir("mscclc-fake");
  return dir.path();
}

/// Runs of the stand-in compiler so far.
int fakeCompilerCalls() {
  std::ifstream in(fakeCompilerDir() + "/calls");
  int lines = 0;
  for (std::string line; std::getline(in, line);)
    ++lines;
  return lines;
}

/// A stand-in compiler: prints a bundle of a fixed CUDA source and plan, or
/// fails like mscclc does on a bad program. Each run is counted.
std::string writeFakeCompiler(const std::string &plan) {
  std::string dir = fakeCompilerDir();
  std::string planPath = dir + "/plan.json";
  std::ofstream(planPath) << plan;
  std::string path = dir + "/mscclc";
  std::ofstream f(path);
  f << "#!/bin/sh\n"
       "echo \"$*\" >> " << dir << "/calls\n"
       "for a in \"$@\"; do\n"
       "  case \"$a\" in\n"
       "    *bad.mscl) echo \"$a:3:5: error: unknown channel 'c'\" >&2; exit 1;;\n"
       "    --emit=bundle)\n"
       "      printf '{\"format\": \"mscclc-bundle\", \"version\": 1, \"plan\": '\n"
       "      cat " << planPath << "\n"
       "      printf ', \"cuda\": \"extern \\\\\"C\\\\\" __global__ void k() {}\"}'\n"
       "      exit 0;;\n"
       "  esac\n"
       "done\n"
       "echo 'no --emit given' >&2; exit 2\n";
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

const char *kPlan = R"({"format": "mscclc-plan", "version": 1, "abiVersion": 3,
  "name": "tiny", "collective": "allreduce", "ranks": 2, "chunks": 1,
  "inputChunks": 1, "outputChunks": 1, "inPlace": false,
  "threadsPerBlock": 256, "scratch": [],
  "rankPlans": [
    {"rank": 0, "kernel": "k", "blocks": 1, "memoryChannels": [], "portChannels": [], "switchChannels": []},
    {"rank": 1, "kernel": "k", "blocks": 1, "memoryChannels": [], "portChannels": [], "switchChannels": []}]})";
/// A stand-in source: it defines kPlan's kernel (plans naming a kernel
/// their source lacks are refused), and NVRTC refuses it.
const char *kSource = "extern \"C\" __global__ void k() { not_cuda }";

} // namespace

TEST(ApiTest, ErrorStringsAndVersion) {
  EXPECT_STREQ(mscclcGetErrorString(mscclcSuccess), "success");
  EXPECT_STREQ(mscclcGetErrorString(mscclcDeviceError), "device error");
  EXPECT_EQ(mscclcGetVersion(), 100);
}

TEST(ApiTest, NullArgumentsAreRejected) {
  EXPECT_EQ(mscclcGetUniqueId(nullptr), mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("NULL"), std::string::npos);
  mscclcProgram_t p = nullptr;
  EXPECT_EQ(mscclcProgramCompileFile(&p, "x.mscl", nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("ranks"), std::string::npos);
  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  EXPECT_EQ(mscclcProgramCompileFile(&p, "x.mscl", &opts), mscclcInvalidArgument);
  EXPECT_EQ(mscclcProgramRun(nullptr, nullptr, nullptr, nullptr, 4,
                             mscclcFloat32, mscclcSum, nullptr),
            mscclcInvalidArgument);
  EXPECT_EQ(mscclcGroupEnd(), mscclcInvalidArgument);
  EXPECT_EQ(mscclcCommAbort(nullptr), mscclcInvalidArgument);
  EXPECT_EQ(mscclcCommSetMaxBlocks(nullptr, 8), mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("comm must not be NULL"),
            std::string::npos);
  mscclcResult_t asyncError = mscclcInternalError;
  EXPECT_EQ(mscclcCommGetAsyncError(nullptr, &asyncError), mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("must not be NULL"),
            std::string::npos);
  mscclcUniqueId id{};
  mscclcComm_t comm = nullptr;
  EXPECT_EQ(mscclcCommInitRank(&comm, 65537, id, 0), mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError())
                .find("nranks is 65537, expected 1 to 65536"),
            std::string::npos)
      << mscclcGetLastError();
  EXPECT_EQ(mscclcCommInitRankOnNode(&comm, 2, id, 0, -2), mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("node must be a node number"),
            std::string::npos)
      << mscclcGetLastError();
  // More ranks than the limit are refused before the bootstrap sizes its
  // tables (issue 41: 2e9 ranks aborted on bad_alloc).
  EXPECT_EQ(mscclcCommInitRankOnNode(&comm, 65537, id, 0, -1),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find(
                "nranks is 65537, expected 1 to 65536"),
            std::string::npos)
      << mscclcGetLastError();
  int node = 0;
  EXPECT_EQ(mscclcCommNode(nullptr, &node), mscclcInvalidArgument);
  EXPECT_EQ(mscclcMemAlloc(nullptr, 1024), mscclcInvalidArgument);
  void *ptr = &p;
  EXPECT_EQ(mscclcMemAlloc(&ptr, 0), mscclcInvalidArgument);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_NE(std::string(mscclcGetLastError()).find("0 bytes"),
            std::string::npos);
}

TEST(ApiTest, CommInitWithoutDeviceSaysSo) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
    GTEST_SKIP() << "a GPU is present";
  mscclcComm_t comms[2];
  EXPECT_EQ(mscclcCommInitAll(comms, 2, nullptr), mscclcCudaError);
  EXPECT_NE(std::string(mscclcGetLastError()).find("no CUDA device"),
            std::string::npos)
      << mscclcGetLastError();
}

TEST(ApiTest, CompilerIsFoundAndItsDiagnosticsAreKept) {
  std::string compiler = writeFakeCompiler(kPlan);
  setenv("MSCCLC_COMPILER", compiler.c_str(), 1);
  std::string good = fakeCompilerDir() + "/api-good.mscl";
  std::string bad = fakeCompilerDir() + "/api-bad.mscl";
  std::ofstream(good) << "algorithm x : allreduce(chunks = 1) {}\n";
  std::ofstream(bad) << "algorithm x : allreduce(chunks = 1) {}\n";

  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  opts.ranks = 2;
  mscclcProgram_t prog = nullptr;
  int callsBefore = fakeCompilerCalls();
  ASSERT_EQ(mscclcProgramCompileFile(&prog, good.c_str(), &opts), mscclcSuccess)
      << mscclcGetLastError();
  // One compiler process per program: it writes the CUDA and the plan.
  EXPECT_EQ(fakeCompilerCalls() - callsBefore, 1);
  size_t send = 0, recv = 0;
  ASSERT_EQ(mscclcProgramBufferCounts(prog, 1000, &send, &recv), mscclcSuccess);
  EXPECT_EQ(send, 1000u);
  EXPECT_EQ(recv, 1000u);
  int inPlace = -1;
  ASSERT_EQ(mscclcProgramInPlace(prog, &inPlace), mscclcSuccess);
  EXPECT_EQ(inPlace, 0);
  const char *collective = nullptr;
  ASSERT_EQ(mscclcProgramCollective(prog, &collective), mscclcSuccess);
  EXPECT_STREQ(collective, "allreduce");
  int root = -1;
  ASSERT_EQ(mscclcProgramRoot(prog, &root), mscclcSuccess);
  EXPECT_EQ(root, 0);
  EXPECT_EQ(mscclcProgramRoot(nullptr, &root), mscclcInvalidArgument);
  EXPECT_EQ(mscclcProgramCollective(prog, nullptr), mscclcInvalidArgument);
  // Out-of-place program, same buffer: refused before any device work.
  int dummy;
  EXPECT_EQ(mscclcProgramRun(prog, reinterpret_cast<mscclcComm_t>(&dummy),
                             &dummy, &dummy, 1, mscclcFloat32, mscclcSum,
                             nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("out of place"),
            std::string::npos);
  mscclcProgramDestroy(prog);

  // Four ranks asked, plan for two: the mismatch is reported.
  opts.ranks = 4;
  EXPECT_EQ(mscclcProgramCompileFile(&prog, good.c_str(), &opts),
            mscclcInternalError);

  opts.ranks = 2;
  EXPECT_EQ(mscclcProgramCompileFile(&prog, bad.c_str(), &opts),
            mscclcCompileError);
  std::string msg = mscclcGetLastError();
  EXPECT_NE(msg.find(":3:5: error: unknown channel"), std::string::npos) << msg;

  EXPECT_EQ(mscclcProgramCompileString(&prog, "algorithm y : allreduce(chunks = 1) {}",
                                       &opts),
            mscclcSuccess)
      << mscclcGetLastError();
  mscclcProgramDestroy(prog);

  setenv("MSCCLC_COMPILER", "/nonexistent/mscclc", 1);
  EXPECT_EQ(mscclcProgramCompileFile(&prog, good.c_str(), &opts),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("MSCCLC_COMPILER"),
            std::string::npos);
  unsetenv("MSCCLC_COMPILER");
  unlink(good.c_str());
  unlink(bad.c_str());
}

TEST(ApiTest, BadGeneratedPlanIsRejected) {
  mscclcProgram_t prog = nullptr;
  EXPECT_EQ(mscclcProgramCreateFromGenerated(&prog, "code", "{\"format\": 1}"),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("plan"), std::string::npos);
  // A kernel the source does not define.
  EXPECT_EQ(mscclcProgramCreateFromGenerated(&prog, "code", kPlan),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError())
                .find("rankPlans[0].kernel 'k' is not defined in the "
                      "program's source"),
            std::string::npos)
      << mscclcGetLastError();
  EXPECT_EQ(mscclcProgramCreateFromGenerated(&prog, kSource, kPlan), mscclcSuccess);
  mscclcProgramDestroy(prog);
}

TEST(ApiTest, CompileKernelChecksItsArguments) {
  mscclcProgram_t prog = nullptr;
  ASSERT_EQ(mscclcProgramCreateFromGenerated(&prog, kSource, kPlan), mscclcSuccess);
  EXPECT_EQ(mscclcProgramCompileKernel(nullptr, 0, mscclcFloat32, mscclcSum, 0),
            mscclcInvalidArgument);
  EXPECT_EQ(mscclcProgramCompileKernel(prog, 2, mscclcFloat32, mscclcSum, 0),
            mscclcInvalidArgument);
  EXPECT_NE(std::string(mscclcGetLastError()).find("rank 2 is not a rank of program tiny (2 ranks)"),
            std::string::npos) << mscclcGetLastError();
  EXPECT_EQ(mscclcProgramCompileKernel(prog, -1, mscclcFloat32, mscclcSum, 0),
            mscclcInvalidArgument);
  EXPECT_EQ(mscclcProgramCompileKernel(prog, 0, mscclcDataType_t(99), mscclcSum, 0),
            mscclcInvalidArgument);
  EXPECT_EQ(mscclcProgramCompileKernel(prog, 0, mscclcFloat32, mscclcRedOp_t(99), 0),
            mscclcInvalidArgument);
  // Valid arguments reach the device and the compiler: no GPU here (or the
  // stand-in source, which NVRTC refuses), so an error, not a crash.
  EXPECT_NE(mscclcProgramCompileKernel(prog, 0, mscclcFloat32, mscclcSum, 0),
            mscclcSuccess);
  EXPECT_STRNE(mscclcGetLastError(), "");
  mscclcProgramDestroy(prog);
}

TEST(ApiTest, StdlibCallsCheckTheirArguments) {
  int supported = 1;
  EXPECT_EQ(mscclcCollectiveSupported(nullptr, mscclcCollAllReduce, 16,
                                      mscclcFloat32, mscclcSum, 0, 0,
                                      &supported),
            mscclcInvalidArgument);
  EXPECT_EQ(supported, 0);
  EXPECT_NE(std::string(mscclcGetLastError()).find("comm must not be NULL"),
            std::string::npos);
  EXPECT_EQ(mscclcCollectiveSupported(nullptr, mscclcCollAllReduce, 16,
                                      mscclcFloat32, mscclcSum, 0, 0, nullptr),
            mscclcInvalidArgument);
  const char *name = "x";
  EXPECT_EQ(mscclcCollectiveAlgorithm(nullptr, mscclcCollBroadcast, 16,
                                      mscclcFloat32, mscclcSum, 0, 0, &name),
            mscclcInvalidArgument);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(mscclcRunCollective(nullptr, mscclcCollAllGather, nullptr, nullptr,
                                4, mscclcFloat32, mscclcSum, 0, nullptr),
            mscclcInvalidArgument);
}

TEST(ApiTest, PreMulSumTakesItsScalarThroughItsOwnCall) {
  auto lastError = [] { return std::string(mscclcGetLastError()); };
  EXPECT_EQ(mscclcRunCollective(nullptr, mscclcCollAllReduce, nullptr, nullptr,
                                4, mscclcFloat32, mscclcPreMulSum, 0, nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(lastError().find("mscclcRunCollectivePreMulSum"), std::string::npos)
      << lastError();
  float two = 2.0f;
  EXPECT_EQ(mscclcRunCollectivePreMulSum(nullptr, mscclcCollAllGather, nullptr,
                                         nullptr, 4, mscclcFloat32, &two, 0, 0,
                                         nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(lastError().find("does not reduce"), std::string::npos)
      << lastError();
  EXPECT_EQ(mscclcRunCollectivePreMulSum(nullptr, mscclcCollAllReduce, nullptr,
                                         nullptr, 4, mscclcFloat32, nullptr, 0,
                                         0, nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(lastError().find("scalar must not be NULL"), std::string::npos)
      << lastError();
  EXPECT_EQ(mscclcRunCollectivePreMulSum(nullptr, mscclcCollAllReduce, nullptr,
                                         nullptr, 4, mscclcFloat32, &two, 0, 0,
                                         nullptr),
            mscclcInvalidArgument);
  EXPECT_NE(lastError().find("comm must not be NULL"), std::string::npos)
      << lastError();
}
