//===- MulticastBindTest.cpp - The binding protocol on a stand-in driver -===//
//
// No machine available to the project may use NVLink multicast, so the
// protocol of bindMulticast (agreement on sizes, one object created by the
// group's first rank, its file descriptor handed to the other processes
// over a Unix socket, binding, release, failures reaching every rank) runs
// here on a driver that only records what it is asked.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Multicast.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace mscclc::rt;

namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kBase = uint64_t(1) << 40; ///< every rank's allocation
constexpr uint64_t kLocalOffset = 3 * kMiB + 64;
constexpr uint64_t kMapping = uint64_t(2) << 40;

/// A driver whose multicast object is a pipe: the root's export hands out
/// its write end, and every import writes one byte through the descriptor
/// it got, which proves the descriptor reached it intact.
struct FakeDriver {
  int failAllocationOnRank = -1;
  int rank = -1;
  int pipeRead = -1, pipeWrite = -1;
  std::atomic<int> creates{0}, imports{0}, adds{0}, binds{0}, releases{0};
  MulticastDriver driver;

  FakeDriver() {
    driver.allocationOf = [this](const void *, uint64_t *base,
                                 uint64_t *size) -> Status {
      if (rank == failAllocationOnRank)
        return invalidArgument("not a cuMem allocation (on purpose)");
      *base = kBase;
      *size = 8 * kMiB;
      return Status::ok();
    };
    driver.granularity = [](unsigned, uint64_t, uint64_t *g) {
      *g = 2 * kMiB;
      return Status::ok();
    };
    driver.create = [this](unsigned devices, uint64_t bytes,
                           uint64_t *handle) -> Status {
      if (bytes != 6 * kMiB || devices == 0)
        return internalError("create: unexpected size");
      int fds[2];
      if (pipe(fds) != 0)
        return systemError("pipe");
      pipeRead = fds[0];
      pipeWrite = fds[1];
      ++creates;
      *handle = 1000;
      return Status::ok();
    };
    driver.exportFd = [this](uint64_t handle, int *fd) -> Status {
      if (handle != 1000)
        return internalError("export: unknown handle");
      *fd = dup(pipeWrite);
      return Status::ok();
    };
    driver.importFd = [this](int fd, uint64_t *handle) -> Status {
      char byte = 'i';
      if (write(fd, &byte, 1) != 1)
        return systemError("import: the descriptor does not reach the pipe");
      ++imports;
      *handle = 2000;
      return Status::ok();
    };
    driver.addDevice = [this](uint64_t handle, int) -> Status {
      if (handle != 1000 && handle != 2000)
        return internalError("add: unknown handle");
      ++adds;
      return Status::ok();
    };
    driver.bindAndMap = [this](uint64_t, int, uint64_t start, uint64_t bytes,
                               uint64_t granule, uint64_t *va,
                               int *stage) -> Status {
      if (start != kBase + 2 * kMiB || bytes != 6 * kMiB || granule != 2 * kMiB)
        return internalError("bind: unexpected range");
      ++binds;
      *va = kMapping;
      *stage = 3;
      return Status::ok();
    };
    driver.release = [this](uint64_t, int, uint64_t, uint64_t, int) {
      ++releases;
    };
  }
};

const void *localBuffer() {
  return reinterpret_cast<const void *>(kBase + kLocalOffset);
}

/// Rank `rank` of `n` binds with `driver`; returns a failure message or "".
std::string bindAsRank(const UniqueId &id, int rank, int n,
                       const std::vector<int> &group, FakeDriver &fake,
                       std::string *error) {
  std::unique_ptr<Bootstrap> b;
  Status s = Bootstrap::create(id, rank, n, &b);
  if (!s.isOk())
    return "bootstrap: " + s.message();
  fake.rank = rank;
  bool member = std::count(group.begin(), group.end(), rank) > 0;
  std::unique_ptr<MulticastRegion> region;
  s = bindMulticast(*b, rank, fake.driver, group,
                    member ? localBuffer() : nullptr, &region);
  if (!s.isOk()) {
    *error = s.message();
    return "";
  }
  if (member != bool(region))
    return "a region for a non-member, or none for a member";
  if (region &&
      region->mcPtr() !=
          reinterpret_cast<void *>(kMapping + kLocalOffset - 2 * kMiB))
    return "mcPtr does not point at the buffer inside the mapping";
  region.reset();
  if (member && fake.releases == 0)
    return "the region was not released";
  return "";
}

/// Ranks 0..n-1 bind on threads of this process, rank r with fakes[r];
/// what each found wrong, and the error it got, come back per rank.
void bindOnThreads(int n, const std::vector<int> &group,
                   std::vector<FakeDriver> &fakes,
                   std::vector<std::string> *wrong,
                   std::vector<std::string> *errors) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  wrong->assign(size_t(n), "");
  errors->assign(size_t(n), "");
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      (*wrong)[size_t(r)] =
          bindAsRank(id, r, n, group, fakes[size_t(r)], &(*errors)[size_t(r)]);
    });
  for (auto &t : threads)
    t.join();
}

class MulticastBindTest : public ::testing::Test {
protected:
  void SetUp() override { setenv("MSCCLC_BOOTSTRAP_ADDR", "127.0.0.1", 1); }
};

} // namespace

// One process per rank: the descriptor travels over the Unix socket.
TEST_F(MulticastBindTest, ProcessesReceiveTheObject) {
  UniqueId id;
  ASSERT_TRUE(createUniqueId(&id).isOk());
  const int n = 3;
  std::vector<pid_t> children;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      FakeDriver fake;
      std::string error;
      std::string wrong = bindAsRank(id, r, n, {0, 1, 2}, fake, &error);
      if (!wrong.empty() || !error.empty()) {
        fprintf(stderr, "rank %d: %s%s\n", r, wrong.c_str(), error.c_str());
        _exit(1);
      }
      if (r == 0) {
        // The two other ranks wrote through the descriptor they received.
        close(fake.pipeWrite);
        char bytes[4];
        ssize_t got = read(fake.pipeRead, bytes, sizeof bytes);
        _exit(got == 2 && fake.creates == 1 && fake.imports == 0 ? 0 : 2);
      }
      _exit(fake.imports == 1 && fake.adds == 1 && fake.binds == 1 ? 0 : 3);
    }
    children.push_back(pid);
  }
  for (int r = 0; r < n; ++r) {
    int status = 0;
    ASSERT_EQ(waitpid(children[size_t(r)], &status, 0), children[size_t(r)]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "rank " << r << " exited with " << WEXITSTATUS(status);
  }
}

// One process for all ranks: members import the root's descriptor directly.
TEST_F(MulticastBindTest, ThreadsShareTheObject) {
  const int n = 3;
  std::vector<FakeDriver> fakes(n);
  std::vector<std::string> wrong, errors;
  bindOnThreads(n, {0, 2}, fakes, &wrong, &errors);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(wrong[size_t(r)], "") << "rank " << r;
    EXPECT_EQ(errors[size_t(r)], "") << "rank " << r;
  }
  EXPECT_EQ(fakes[0].creates, 1);
  EXPECT_EQ(fakes[2].imports, 1); // through the root's descriptor
  EXPECT_EQ(fakes[1].adds + fakes[1].binds + fakes[1].imports, 0); // not a member
  EXPECT_EQ(fakes[0].binds + fakes[2].binds, 2);
  close(fakes[0].pipeWrite);
  char bytes[4];
  EXPECT_EQ(read(fakes[0].pipeRead, bytes, sizeof bytes), 1);
}

// One rank's buffer is unusable: every rank fails, naming it, and nothing
// is created.
TEST_F(MulticastBindTest, OneFailureFailsEveryRank) {
  const int n = 3;
  std::vector<FakeDriver> fakes(n);
  for (FakeDriver &fake : fakes)
    fake.failAllocationOnRank = 1;
  std::vector<std::string> wrong, errors;
  bindOnThreads(n, {0, 1, 2}, fakes, &wrong, &errors);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(wrong[size_t(r)], "") << "rank " << r;
    EXPECT_NE(errors[size_t(r)].find("failed on rank 1"), std::string::npos)
        << "rank " << r << ": " << errors[size_t(r)];
    EXPECT_NE(errors[size_t(r)].find("on purpose"), std::string::npos)
        << "rank " << r << ": " << errors[size_t(r)];
    EXPECT_EQ(fakes[size_t(r)].creates, 0);
  }
}
