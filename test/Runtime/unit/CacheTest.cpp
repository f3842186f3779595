//===- CacheTest.cpp - Kernel cache keys, storage and NVRTC ---------------===//

#include "TestFiles.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;
using mscclc::test::TempDir;

namespace {

const char *kKernel = R"(
#include "mscclc/device/KernelArgs.h"
extern "C" __global__ void add_one(float *x, unsigned long long n) {
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
)";

} // namespace

TEST(HashTest, Sha256KnownVectors) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CacheKeyTest, EverythingThatChangesTheBinaryChangesTheKey) {
  CompileRequest base;
  base.source = kKernel;
  base.arch = 90;
  base.options = {"-DMSCCLC_DTYPE=f32"};
  std::string k = cacheKey(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, cacheKey(base)) << "stable";

  CompileRequest other = base;
  other.source += " ";
  EXPECT_NE(cacheKey(other), k) << "source";
  other = base;
  other.arch = 80;
  EXPECT_NE(cacheKey(other), k) << "arch";
  other = base;
  other.options = {"-DMSCCLC_DTYPE=f16"};
  EXPECT_NE(cacheKey(other), k) << "options";
  other = base;
  other.options = {"-DMSCCLC_DTYPE=f3", "2"};
  EXPECT_NE(cacheKey(other), k) << "option boundaries";
  other = base;
  other.name = "another_name.cu";
  EXPECT_EQ(cacheKey(other), k) << "the diagnostic name is not part of the key";
}

TEST(CacheKeyTest, DeviceHeadersAreEmbedded) {
  bool found = false;
  for (const mscclc::jit::DeviceHeader &h : mscclc::jit::deviceHeaders())
    found |= std::string(h.name) == "mscclc/device/KernelArgs.h";
  EXPECT_TRUE(found);
}

TEST(KernelCacheTest, StoreLookupAndCorruption) {
  TempDir tmp("mscclc-cache-test");
  KernelCache cache(tmp / "nested/dir", true);
  std::string key(64, 'a'), got;
  bool hit = true;
  ASSERT_TRUE(cache.lookup(key, &got, &hit).isOk());
  EXPECT_FALSE(hit);
  std::string binary("\x7f" "ELF\0\1\2binary", 13);
  ASSERT_TRUE(cache.store(key, binary).isOk());
  struct stat st;
  ASSERT_EQ(stat(cache.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the cache directory is private";
  ASSERT_TRUE(cache.lookup(key, &got, &hit).isOk());
  EXPECT_TRUE(hit);
  EXPECT_EQ(got, binary);

  std::string entry;
  {
    std::ifstream in(cache.pathFor(key), std::ios::binary);
    entry.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto expectDiscarded = [&](const std::string &contents, const char *why) {
    {
      std::ofstream f(cache.pathFor(key), std::ios::trunc | std::ios::binary);
      f << contents;
    }
    Status s = cache.lookup(key, &got, &hit);
    EXPECT_FALSE(hit) << why;
    EXPECT_EQ(s.code(), Code::SystemError) << why;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
    EXPECT_NE(access(cache.pathFor(key).c_str(), F_OK), 0) << why << ": removed";
  };
  // Truncated, and one flipped bit of the binary (same size).
  expectDiscarded(entry.substr(0, entry.size() - 3), "truncated");
  std::string flipped = entry;
  flipped[flipped.size() - 2] ^= 0x10;
  expectDiscarded(flipped, "checksum mismatch");
  // An entry stored under another key.
  ASSERT_TRUE(cache.store(std::string(64, 'b'), binary).isOk());
  rename(cache.pathFor(std::string(64, 'b')).c_str(), cache.pathFor(key).c_str());
  Status s = cache.lookup(key, &got, &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("not the entry of its key"), std::string::npos) << s.message();
  // An entry of an older format is a plain miss, replaced by the next store.
  {
    std::ofstream f(cache.pathFor(key), std::ios::trunc | std::ios::binary);
    f << "MSCCLC-CUBIN-1\n" << key << "\n13\n" << binary;
  }
  ASSERT_TRUE(cache.lookup(key, &got, &hit).isOk());
  EXPECT_FALSE(hit);
  ASSERT_TRUE(cache.store(key, binary).isOk());
  ASSERT_TRUE(cache.lookup(key, &got, &hit).isOk());
  EXPECT_TRUE(hit);
}

// GPU code from a directory others can write would run their code here.
TEST(KernelCacheTest, RefusesADirectoryOthersCanWrite) {
  TempDir tmp("mscclc-cache-test");
  const std::string &dir = tmp.path();
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  KernelCache cache(dir, true);
  std::string got;
  bool hit = true;
  Status s = cache.lookup(std::string(64, 'd'), &got, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("writable by other users"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("MSCCLC_CACHE_DIR"), std::string::npos) << s.message();
  Status st = cache.store(std::string(64, 'd'), "x");
  EXPECT_EQ(st.code(), Code::Unsupported);
  EXPECT_NE(access(cache.pathFor(std::string(64, 'd')).c_str(), F_OK), 0)
      << "nothing is written there";
  // Not a directory at all.
  std::string file = dir + "/plain-file";
  { std::ofstream(file) << "x"; }
  EXPECT_EQ(KernelCache(file, true).lookup(std::string(64, 'd'), &got, &hit).code(),
            Code::Unsupported);
}

// Two processes storing the same entry at once: each writes its own
// temporary file and renames it, so a reader sees one whole entry.
TEST(KernelCacheTest, ConcurrentStoresLeaveOneWholeEntry) {
  TempDir tmp("mscclc-cache-test");
  KernelCache cache(tmp.path(), true);
  std::string key(64, 'e');
  std::string binary(1 << 20, 'z');
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int j = 0; j < 20; ++j)
        if (!cache.store(key, binary).isOk())
          _exit(1);
      _exit(0);
    }
    children.push_back(pid);
  }
  int misses = 0;
  for (int j = 0; j < 50; ++j) {
    std::string got;
    bool hit = false;
    Status s = cache.lookup(key, &got, &hit);
    ASSERT_TRUE(s.isOk()) << "a reader saw a partial entry: " << s.message();
    if (hit)
      EXPECT_EQ(got, binary);
    else
      ++misses;
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string got;
  bool hit = false;
  ASSERT_TRUE(cache.lookup(key, &got, &hit).isOk());
  EXPECT_TRUE(hit);
  EXPECT_LE(misses, 50);
}

TEST(KernelCacheTest, Environment) {
  setenv("MSCCLC_CACHE_DIR", "/tmp/somewhere-else", 1);
  unsetenv("MSCCLC_CACHE");
  KernelCache c = KernelCache::fromEnvironment();
  EXPECT_EQ(c.dir(), "/tmp/somewhere-else");
  EXPECT_TRUE(c.enabled());
  setenv("MSCCLC_CACHE", "0", 1);
  EXPECT_FALSE(KernelCache::fromEnvironment().enabled());
  unsetenv("MSCCLC_CACHE_DIR");
  unsetenv("MSCCLC_CACHE");
  setenv("HOME", "/home/someone", 1);
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::fromEnvironment().dir(), "/home/someone/.cache/mscclc");
  // Disabled: store writes nothing, lookup misses.
  TempDir tmp("mscclc-cache-test");
  KernelCache off(tmp.path(), false);
  ASSERT_TRUE(off.store(std::string(64, 'c'), "x").isOk());
  std::string got;
  bool hit = true;
  ASSERT_TRUE(off.lookup(std::string(64, 'c'), &got, &hit).isOk());
  EXPECT_FALSE(hit);
  EXPECT_NE(access(off.pathFor(std::string(64, 'c')).c_str(), F_OK), 0);
}

// NVRTC needs no GPU: compile for sm_90 here, then hit the cache.
TEST(NvrtcTest, CompileThenCacheHit) {
  CompileRequest req;
  req.source = kKernel;
  req.name = "add_one.cu";
  req.arch = 90;
  TempDir tmp("mscclc-cache-test");
  KernelCache cache(tmp.path(), true);
  std::string cubin;
  CompileStats stats;
  Status s = compileCached(req, cache, &cubin, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_FALSE(stats.cacheHit);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(1, 3), "ELF");
  std::string again;
  ASSERT_TRUE(compileCached(req, cache, &again, &stats).isOk());
  EXPECT_TRUE(stats.cacheHit);
  EXPECT_EQ(again, cubin);
}

TEST(NvrtcTest, CompileErrorsCarryTheLog) {
  CompileRequest req;
  req.source = "extern \"C\" __global__ void k() { undeclared_thing(); }";
  req.name = "broken.cu";
  req.arch = 90;
  std::string cubin;
  Status s = compileToCubin(req, &cubin);
  ASSERT_EQ(s.code(), Code::CompileError);
  EXPECT_NE(s.message().find("broken.cu"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("undeclared_thing"), std::string::npos)
      << s.message();
}
