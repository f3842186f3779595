//===- ApiTest.cpp - The exported NCCL functions without a GPU ------------===//
//
// Through libmscclc_nccl.so as applications see it: version, error
// strings, last-error messages, and every function's refusal of a NULL
// communicator and of bad arguments, none of which needs a GPU. Where a
// step needs CUDA (creating a communicator) and no GPU is present, the
// test checks that the failure is a clean error and skips the rest.
//
//===----------------------------------------------------------------------===//

#include "nccl.h"

#include <gtest/gtest.h>

#include <climits>

#include <cstring>
#include <set>

#include <cstdlib>
#include <string>

// NCCL's profiling aliases (its nccl.h declares them; ours does not).
extern "C" ncclResult_t pncclGetVersion(int *version);

namespace {

bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::string lastError() { return ncclGetLastError(nullptr); }

TEST(Version, Is2_28) {
  int v = 0;
  ASSERT_EQ(ncclGetVersion(&v), ncclSuccess);
  EXPECT_EQ(v, NCCL_VERSION_CODE);
  EXPECT_EQ(v / 100, 228);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  // The profiling alias is the same function.
  int pv = 0;
  ASSERT_EQ(pncclGetVersion(&pv), ncclSuccess);
  EXPECT_EQ(pv, v);
}

TEST(ErrorStrings, EveryResultHasItsOwn) {
  std::set<std::string> seen;
  for (int r = ncclSuccess; r < ncclNumResults; ++r) {
    const char *s = ncclGetErrorString(ncclResult_t(r));
    ASSERT_NE(s, nullptr);
    EXPECT_GT(strlen(s), 5u) << r;
    EXPECT_TRUE(seen.insert(s).second) << "duplicate string for " << r;
  }
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_NE(std::string(ncclGetErrorString(ncclInProgress)).find("in progress"),
            std::string::npos);
  EXPECT_STREQ(ncclGetErrorString(ncclResult_t(99)), "unknown result code");
}

TEST(UniqueId, IsMadeWithoutAGpu) {
  ncclUniqueId a, b;
  ASSERT_EQ(ncclGetUniqueId(&a), ncclSuccess) << lastError();
  ASSERT_EQ(ncclGetUniqueId(&b), ncclSuccess) << lastError();
  EXPECT_NE(memcmp(&a, &b, sizeof(a)), 0); // two roots, two ids
  EXPECT_EQ(ncclGetUniqueId(nullptr), ncclInvalidArgument);
}

TEST(NullCommunicator, EveryCallRefusesIt) {
  int i = 0;
  void *p = nullptr;
  char buf[64];
  ncclResult_t async;
  ncclRedOp_t op;
  float scalar = 1;
  ncclWindow_t win;
  ncclComm_t out;
  struct Call {
    const char *name;
    ncclResult_t result;
  } calls[] = {
      {"ncclAllReduce", ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, nullptr, 0)},
      {"ncclAllGather", ncclAllGather(buf, buf, 4, ncclFloat32, nullptr, 0)},
      {"ncclReduceScatter", ncclReduceScatter(buf, buf, 4, ncclFloat32, ncclSum, nullptr, 0)},
      {"ncclBroadcast", ncclBroadcast(buf, buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclBcast", ncclBcast(buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclReduce", ncclReduce(buf, buf, 4, ncclFloat32, ncclSum, 0, nullptr, 0)},
      {"ncclAlltoAll", ncclAlltoAll(buf, buf, 4, ncclFloat32, nullptr, 0)},
      {"ncclGather", ncclGather(buf, buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclScatter", ncclScatter(buf, buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclSend", ncclSend(buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclRecv", ncclRecv(buf, 4, ncclFloat32, 0, nullptr, 0)},
      {"ncclCommCount", ncclCommCount(nullptr, &i)},
      {"ncclCommCuDevice", ncclCommCuDevice(nullptr, &i)},
      {"ncclCommUserRank", ncclCommUserRank(nullptr, &i)},
      {"ncclCommGetAsyncError", ncclCommGetAsyncError(nullptr, &async)},
      {"ncclCommFinalize", ncclCommFinalize(nullptr)},
      {"ncclCommSplit", ncclCommSplit(nullptr, 0, 0, &out, nullptr)},
      {"ncclCommShrink", ncclCommShrink(nullptr, nullptr, 0, &out, nullptr, 0)},
      {"ncclCommRegister", ncclCommRegister(nullptr, buf, 64, &p)},
      {"ncclCommDeregister", ncclCommDeregister(nullptr, p)},
      {"ncclCommWindowRegister", ncclCommWindowRegister(nullptr, buf, 64, &win, 0)},
      {"ncclCommWindowDeregister", ncclCommWindowDeregister(nullptr, nullptr)},
      {"ncclRedOpCreatePreMulSum",
       ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, nullptr)},
      {"ncclRedOpDestroy", ncclRedOpDestroy(ncclRedOp_t(ncclNumOps), nullptr)},
      {"ncclCommSuspend", ncclCommSuspend(nullptr, 0)},
      {"ncclCommResume", ncclCommResume(nullptr)},
      {"ncclDevCommCreate", ncclDevCommCreate(nullptr, nullptr, nullptr)},
      {"ncclDevCommDestroy", ncclDevCommDestroy(nullptr, nullptr)},
  };
  for (const Call &c : calls) {
    EXPECT_EQ(c.result, ncclInvalidArgument) << c.name;
  }
  // The message names the call and the problem.
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, nullptr, 0),
            ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclAllReduce: the communicator is NULL"),
            std::string::npos)
      << lastError();
  // As in NCCL, destroying or aborting NULL is a no-op.
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(BogusCommunicator, IsRefusedNotDereferenced) {
  // A pointer that never was a communicator (or one already destroyed).
  ncclComm_t bogus = reinterpret_cast<ncclComm_t>(uintptr_t(0x1000));
  char buf[16];
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, bogus, 0),
            ncclInvalidArgument);
  EXPECT_NE(lastError().find("was destroyed"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommDestroy(bogus), ncclInvalidArgument);
  EXPECT_EQ(ncclCommAbort(bogus), ncclInvalidArgument);
}

TEST(Init, RejectsBadArgumentsBeforeTouchingCuda) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(uintptr_t(1));
  EXPECT_EQ(ncclCommInitRank(nullptr, 1, id, 0), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 2000000000, id, 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("nranks is 2000000000, expected 1 to 65536"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(comm, nullptr); // cleared on failure
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  EXPECT_NE(lastError().find("rank 2 is not in [0, 2)"), std::string::npos)
      << lastError();
  // Above 65536 ranks: refused before the bootstrap allocates per rank
  // (2e9 once aborted on bad_alloc, 2e8 took 3.9 GB).
  for (int nranks : {65537, 200000000, 2000000000, INT_MAX}) {
    EXPECT_EQ(ncclCommInitRank(&comm, nranks, id, 0), ncclInvalidArgument);
    EXPECT_NE(lastError().find("nranks is " + std::to_string(nranks) +
                               ", expected 1 to 65536"),
              std::string::npos)
        << lastError();
  }
  ncclConfig_t bad;
  memset(&bad, 0, sizeof(bad));
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, id, 0, &bad), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_CONFIG_INITIALIZER"), std::string::npos);
  EXPECT_EQ(ncclCommInitRankScalable(&comm, 1, 0, 0, &id, nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitAll(&comm, 0, nullptr), ncclInvalidArgument);
}

TEST(Init, WithoutAGpuFailsCleanly) {
  if (haveGpu())
    GTEST_SKIP() << "a GPU is present (the GPU tests cover initialisation)";
  if (getenv("MSCCLC_NCCL_FALLBACK"))
    GTEST_SKIP() << "MSCCLC_NCCL_FALLBACK is set (another test's case)";
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRank(&comm, 1, id, 0);
  EXPECT_EQ(r, ncclUnhandledCudaError);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(lastError().find("cudaGetDevice"), std::string::npos) << lastError();
  int devs[] = {0, 0};
  EXPECT_NE(ncclCommInitAll(&comm, 2, devs), ncclSuccess);
}

// Run by ctest with MSCCLC_NCCL_FALLBACK=allreduce,bogus: a typo must not
// silently change where calls run.
TEST(BadFallbackPolicy, FailsEveryInit) {
  const char *v = getenv("MSCCLC_NCCL_FALLBACK");
  if (!v || std::string(v) != "allreduce,bogus")
    GTEST_SKIP() << "run with MSCCLC_NCCL_FALLBACK=allreduce,bogus";
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclInvalidUsage);
  EXPECT_NE(lastError().find("'bogus' is not a collective"), std::string::npos)
      << lastError();
}

TEST(Groups, UnbalancedEndIsInvalidUsage) {
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(lastError().find("no group is open"), std::string::npos);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(nullptr), ncclInvalidArgument);
}

// NCCL's ncclGroupEnd returns the error of a call inside the group: most
// callers check only the group's result.
TEST(Groups, EndReturnsTheErrorOfACallInside) {
  float buf[4] = {};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, nullptr, 0),
            ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(buf, buf, 4, ncclFloat32, 0, nullptr, 0),
            ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  EXPECT_NE(lastError().find("2 of the group's calls failed"), std::string::npos)
      << lastError();
  EXPECT_NE(lastError().find("ncclAllReduce"), std::string::npos) << lastError();
  // The error belongs to that group only.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
}

TEST(Memory, AllocationErrorsAreClean) {
  void *p = reinterpret_cast<void *>(1);
  EXPECT_EQ(ncclMemAlloc(nullptr, 64), ncclInvalidArgument);
  EXPECT_EQ(ncclMemAlloc(&p, 0), ncclInvalidArgument);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ncclMemAlloc(&p, SIZE_MAX), ncclInvalidArgument);
  EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
  if (!haveGpu()) {
    EXPECT_EQ(ncclMemAlloc(&p, 64), ncclUnhandledCudaError);
    EXPECT_NE(lastError().find("cudaMalloc"), std::string::npos);
    return;
  }
  ASSERT_EQ(ncclMemAlloc(&p, 64), ncclSuccess) << lastError();
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
}

} // namespace
