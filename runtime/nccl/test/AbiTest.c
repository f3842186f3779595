/*===- AbiTest.c - nccl.h against NCCL 2.28's documented ABI -------------===//
 *
 * Compiled as C (as applications include it) and run by ctest: every value
 * and layout an application built against NVIDIA's nccl.h relies on.
 * Exits 1 naming each mismatch.
 *
 *===---------------------------------------------------------------------===*/

#include "nccl.h"

#include <stddef.h>
#include <stdio.h>

static int failures = 0;

#define EXPECT_EQ(actual, expected)                                            \
  do {                                                                         \
    long long a_ = (long long)(actual), e_ = (long long)(expected);            \
    if (a_ != e_) {                                                            \
      fprintf(stderr, "%s:%d: %s is %lld, NCCL 2.28 has %lld\n", __FILE__,     \
              __LINE__, #actual, a_, e_);                                      \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void results(void) {
  EXPECT_EQ(ncclSuccess, 0);
  EXPECT_EQ(ncclUnhandledCudaError, 1);
  EXPECT_EQ(ncclSystemError, 2);
  EXPECT_EQ(ncclInternalError, 3);
  EXPECT_EQ(ncclInvalidArgument, 4);
  EXPECT_EQ(ncclInvalidUsage, 5);
  EXPECT_EQ(ncclRemoteError, 6);
  EXPECT_EQ(ncclInProgress, 7);
  EXPECT_EQ(ncclNumResults, 8);
  EXPECT_EQ(sizeof(ncclResult_t), 4);
}

static void dataTypes(void) {
  EXPECT_EQ(ncclInt8, 0);
  EXPECT_EQ(ncclChar, 0);
  EXPECT_EQ(ncclUint8, 1);
  EXPECT_EQ(ncclInt32, 2);
  EXPECT_EQ(ncclInt, 2);
  EXPECT_EQ(ncclUint32, 3);
  EXPECT_EQ(ncclInt64, 4);
  EXPECT_EQ(ncclUint64, 5);
  EXPECT_EQ(ncclFloat16, 6);
  EXPECT_EQ(ncclHalf, 6);
  EXPECT_EQ(ncclFloat32, 7);
  EXPECT_EQ(ncclFloat, 7);
  EXPECT_EQ(ncclFloat64, 8);
  EXPECT_EQ(ncclDouble, 8);
  EXPECT_EQ(ncclBfloat16, 9);
  EXPECT_EQ(ncclFloat8e4m3, 10);
  EXPECT_EQ(ncclFloat8e5m2, 11);
  EXPECT_EQ(ncclNumTypes, 12);
  EXPECT_EQ(sizeof(ncclDataType_t), 4);
}

static void redOps(void) {
  EXPECT_EQ(ncclSum, 0);
  EXPECT_EQ(ncclProd, 1);
  EXPECT_EQ(ncclMax, 2);
  EXPECT_EQ(ncclMin, 3);
  EXPECT_EQ(ncclAvg, 4);
  EXPECT_EQ(ncclNumOps, 5);
  /* Dynamic (PreMulSum) operators take the ids up to the int enum's top. */
  EXPECT_EQ(ncclMaxRedOp, 0x7fffffff);
  EXPECT_EQ(sizeof(ncclRedOp_t), 4);
  EXPECT_EQ(ncclScalarDevice, 0);
  EXPECT_EQ(ncclScalarHostImmediate, 1);
}

static void uniqueId(void) {
  EXPECT_EQ(NCCL_UNIQUE_ID_BYTES, 128);
  EXPECT_EQ(sizeof(ncclUniqueId), 128);
}

static void version(void) {
  EXPECT_EQ(NCCL_MAJOR, 2);
  EXPECT_EQ(NCCL_MINOR, 28);
  EXPECT_EQ(NCCL_VERSION(2, 28, 3), 22803);
  /* The old encoding below 2.9. */
  EXPECT_EQ(NCCL_VERSION(2, 8, 4), 2804);
  EXPECT_EQ(NCCL_VERSION_CODE, 22800 + NCCL_PATCH);
}

static void config(void) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  /* The header: size, magic, version. */
  EXPECT_EQ(offsetof(ncclConfig_t, size), 0);
  EXPECT_EQ(offsetof(ncclConfig_t, magic), sizeof(size_t));
  EXPECT_EQ(offsetof(ncclConfig_t, version), sizeof(size_t) + 4);
  EXPECT_EQ(c.size, sizeof(ncclConfig_t));
  EXPECT_EQ(c.magic, 0xcafebeef);
  EXPECT_EQ(c.version, NCCL_VERSION_CODE);
  /* The 2.28 fields in order (LP64). */
  EXPECT_EQ(offsetof(ncclConfig_t, blocking), 16);
  EXPECT_EQ(offsetof(ncclConfig_t, cgaClusterSize), 20);
  EXPECT_EQ(offsetof(ncclConfig_t, minCTAs), 24);
  EXPECT_EQ(offsetof(ncclConfig_t, maxCTAs), 28);
  EXPECT_EQ(offsetof(ncclConfig_t, netName), 32);
  EXPECT_EQ(offsetof(ncclConfig_t, splitShare), 40);
  EXPECT_EQ(offsetof(ncclConfig_t, trafficClass), 44);
  EXPECT_EQ(offsetof(ncclConfig_t, commName), 48);
  EXPECT_EQ(offsetof(ncclConfig_t, collnetEnable), 56);
  EXPECT_EQ(offsetof(ncclConfig_t, CTAPolicy), 60);
  EXPECT_EQ(offsetof(ncclConfig_t, shrinkShare), 64);
  EXPECT_EQ(offsetof(ncclConfig_t, nvlsCTAs), 68);
  EXPECT_EQ(offsetof(ncclConfig_t, nChannelsPerNetPeer), 72);
  EXPECT_EQ(offsetof(ncclConfig_t, nvlinkCentricSched), 76);
  EXPECT_EQ(sizeof(ncclConfig_t), 80);
  /* Every option starts undefined. */
  EXPECT_EQ(NCCL_CONFIG_UNDEF_INT, INT_MIN);
  EXPECT_EQ(c.blocking, INT_MIN);
  EXPECT_EQ(c.cgaClusterSize, INT_MIN);
  EXPECT_EQ(c.minCTAs, INT_MIN);
  EXPECT_EQ(c.maxCTAs, INT_MIN);
  EXPECT_EQ(c.netName == NULL, 1);
  EXPECT_EQ(c.splitShare, INT_MIN);
  EXPECT_EQ(c.trafficClass, INT_MIN);
  EXPECT_EQ(c.commName == NULL, 1);
  EXPECT_EQ(c.collnetEnable, INT_MIN);
  EXPECT_EQ(c.CTAPolicy, INT_MIN);
  EXPECT_EQ(c.shrinkShare, INT_MIN);
  EXPECT_EQ(c.nvlsCTAs, INT_MIN);
  EXPECT_EQ(c.nChannelsPerNetPeer, INT_MIN);
  EXPECT_EQ(c.nvlinkCentricSched, INT_MIN);
  EXPECT_EQ(NCCL_SPLIT_NOCOLOR, -1);
  EXPECT_EQ(NCCL_CTA_POLICY_DEFAULT, 0);
  EXPECT_EQ(NCCL_CTA_POLICY_EFFICIENCY, 1);
  EXPECT_EQ(NCCL_CTA_POLICY_ZERO, 2);
  EXPECT_EQ(NCCL_SHRINK_DEFAULT, 0);
  EXPECT_EQ(NCCL_SHRINK_ABORT, 1);
  EXPECT_EQ(NCCL_WIN_DEFAULT, 0);
  EXPECT_EQ(NCCL_WIN_COLL_SYMMETRIC, 1);
}

static void simInfo(void) {
  ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(s.size, sizeof(ncclSimInfo_t));
  EXPECT_EQ(s.magic, 0x74685283);
  EXPECT_EQ(s.version, NCCL_VERSION_CODE);
  EXPECT_EQ(s.estimatedTime == NCCL_UNDEF_FLOAT, 1);
  EXPECT_EQ(offsetof(ncclSimInfo_t, estimatedTime), 16);
}

int main(void) {
  results();
  dataTypes();
  redOps();
  uniqueId();
  version();
  config();
  simInfo();
  if (failures) {
    fprintf(stderr, "%d ABI mismatches\n", failures);
    return 1;
  }
  printf("nccl.h matches NCCL 2.28's ABI\n");
  return 0;
}
