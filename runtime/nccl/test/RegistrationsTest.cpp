//===- RegistrationsTest.cpp - Windows and their allocations, without a GPU =//
//
// The bookkeeping behind calls on symmetric windows, over a stand-in for
// CU_POINTER_ATTRIBUTE_BUFFER_ID: "allocations" are ranges of a host array
// with ids that change when a range is freed and allocated again, as CUDA's
// do, at the same address.
//
//===----------------------------------------------------------------------===//

#include "Registrations.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mscclc::nccl;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

struct FakeAllocation {
  const char *base;
  size_t size;
  uint64_t id;
};
std::vector<FakeAllocation> allocations;
uint64_t nextId = 1;
std::vector<char> arena(16 * kMiB);

uint64_t fakeBufferId(const void *p) {
  const char *q = static_cast<const char *>(p);
  for (const FakeAllocation &a : allocations)
    if (q >= a.base && q < a.base + a.size)
      return a.id;
  return 0;
}

const char *allocate(size_t offset, size_t size) {
  allocations.push_back({arena.data() + offset, size, nextId++});
  return arena.data() + offset;
}

void release(const char *base) {
  for (size_t i = 0; i < allocations.size(); ++i)
    if (allocations[i].base == base) {
      allocations.erase(allocations.begin() + long(i));
      return;
    }
}

class RegistrationsTest : public ::testing::Test {
protected:
  void SetUp() override { allocations.clear(); }
  Registrations regs{fakeBufferId};
  int handles[4] = {};
};

} // namespace

TEST_F(RegistrationsTest, ACallInsideASymmetricWindowRunsOnIt) {
  const char *buf = allocate(0, 4 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], buf, 4 * kMiB, true).ok());
  std::string why;
  EXPECT_TRUE(regs.inSymmetricWindow(buf, 4 * kMiB, &why)) << why;
  EXPECT_TRUE(regs.inSymmetricWindow(buf + kMiB, 3 * kMiB, &why)) << why;
}

TEST_F(RegistrationsTest, RangesOutsideOrAcrossTheEndAreNotInIt) {
  const char *buf = allocate(0, 8 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], buf, 4 * kMiB, true).ok());
  std::string why;
  EXPECT_FALSE(regs.inSymmetricWindow(buf + 3 * kMiB, 2 * kMiB, &why));
  EXPECT_NE(why.find("in no registered window"), std::string::npos) << why;
  EXPECT_FALSE(regs.inSymmetricWindow(buf + 5 * kMiB, 1, &why));
  EXPECT_FALSE(regs.inSymmetricWindow(buf - 1, 2, &why));
  EXPECT_FALSE(regs.inSymmetricWindow(nullptr, 1, &why));
  // A size that would wrap around the address space.
  EXPECT_FALSE(regs.inSymmetricWindow(buf + kMiB, SIZE_MAX, &why));
}

TEST_F(RegistrationsTest, OnlySymmetricWindowsOfTwoMiBQualify) {
  const char *a = allocate(0, 4 * kMiB);
  const char *b = allocate(4 * kMiB, kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], a, 4 * kMiB, false).ok());
  ASSERT_TRUE(regs.addWindow(&handles[1], b, kMiB, true).ok());
  std::string why;
  EXPECT_FALSE(regs.inSymmetricWindow(a, kMiB, &why));
  EXPECT_NE(why.find("not symmetric"), std::string::npos) << why;
  EXPECT_FALSE(regs.inSymmetricWindow(b, kMiB, &why));
  EXPECT_NE(why.find("CUDA IPC"), std::string::npos) << why;
}

TEST_F(RegistrationsTest, AFreedAndReallocatedWindowNoLongerCounts) {
  const char *buf = allocate(0, 4 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], buf, 4 * kMiB, true).ok());
  release(buf);
  const char *again = allocate(0, 4 * kMiB); // the same address comes back
  ASSERT_EQ(again, buf);
  std::string why;
  EXPECT_FALSE(regs.inSymmetricWindow(again, 4 * kMiB, &why));
  EXPECT_NE(why.find("was freed"), std::string::npos) << why;
  // Registered anew (deregistered first, as NCCL asks), it counts again.
  EXPECT_TRUE(regs.remove(&handles[0]));
  ASSERT_TRUE(regs.addWindow(&handles[1], again, 4 * kMiB, true).ok());
  EXPECT_TRUE(regs.inSymmetricWindow(again, 4 * kMiB, &why)) << why;
}

TEST_F(RegistrationsTest, AFreedWindowWithNothingAtItsAddressDoesNotCount) {
  const char *buf = allocate(0, 4 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], buf, 4 * kMiB, true).ok());
  release(buf);
  std::string why;
  EXPECT_FALSE(regs.inSymmetricWindow(buf, kMiB, &why));
  EXPECT_NE(why.find("was freed"), std::string::npos) << why;
}

TEST_F(RegistrationsTest, AWindowOverTwoAllocationsServesOnlyItsFirst) {
  // Adjacent allocations (a caching allocator's segments): the part of the
  // window in the second one is another allocation than registered.
  const char *first = allocate(0, 4 * kMiB);
  allocate(4 * kMiB, 4 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], first, 8 * kMiB, true).ok());
  std::string why;
  EXPECT_TRUE(regs.inSymmetricWindow(first, 4 * kMiB, &why)) << why;
  EXPECT_FALSE(regs.inSymmetricWindow(first + 4 * kMiB, kMiB, &why));
}

TEST_F(RegistrationsTest, HostMemoryIsRefusedAndHandlesAreForgotten) {
  char host[64];
  Outcome o = regs.addWindow(&handles[0], host, sizeof(host), true);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("not device memory"), std::string::npos);
  EXPECT_EQ(regs.size(), 0u);
  const char *buf = allocate(0, 4 * kMiB);
  ASSERT_TRUE(regs.addWindow(&handles[0], buf, 4 * kMiB, true).ok());
  EXPECT_TRUE(regs.remove(&handles[0]));
  EXPECT_FALSE(regs.remove(&handles[0]));
  std::string why;
  EXPECT_FALSE(regs.inSymmetricWindow(buf, kMiB, &why));
}
