//===- CacheTest.cpp - Kernel cache, NVRTC, the files the runtime trusts ---===//

#include "TestFiles.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Program.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
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
  EXPECT_NE(s.message().find("writable by group and others (mode 0777)"),
            std::string::npos)
      << s.message();
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
  auto fromEnvironment = [] {
    KernelCache c;
    EXPECT_TRUE(KernelCache::fromEnvironment(&c).isOk());
    return c;
  };
  setenv("MSCCLC_CACHE_DIR", "/tmp/somewhere-else", 1);
  unsetenv("MSCCLC_CACHE");
  KernelCache c = fromEnvironment();
  EXPECT_EQ(c.dir(), "/tmp/somewhere-else");
  EXPECT_TRUE(c.enabled());
  // The settings module's booleans: "no" turns it off too (it once left
  // the cache on, as did any word but 0, off and false).
  for (const char *off : {"0", "off", "FALSE", "no"}) {
    setenv("MSCCLC_CACHE", off, 1);
    EXPECT_FALSE(fromEnvironment().enabled()) << off;
  }
  // Garbage is an error naming the variable (it once left the cache on).
  setenv("MSCCLC_CACHE", "sometimes", 1);
  EXPECT_EQ(KernelCache::fromEnvironment(&c).message(),
            "MSCCLC_CACHE='sometimes': expected 1, 0, true, false, yes, no, "
            "on or off");
  unsetenv("MSCCLC_CACHE_DIR");
  unsetenv("MSCCLC_CACHE");
  setenv("HOME", "/home/someone", 1);
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(fromEnvironment().dir(), "/home/someone/.cache/mscclc");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(fromEnvironment().dir(), "/xdg/mscclc");
  unsetenv("XDG_CACHE_HOME");
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

namespace {

/// A cache (in a fresh private directory) and the key its tests use.
struct CacheFixture {
  TempDir tmp{"mscclc-cache-test"};
  KernelCache cache{tmp.path(), true};
  std::string key = std::string(64, 'f');
  std::string path() const { return cache.pathFor(key); }
  /// A valid entry of `key` holding "binary" (stored, read back, removed).
  std::string entry() const {
    EXPECT_TRUE(cache.store(key, "binary").isOk());
    std::string bytes = mscclc::test::readAll(path());
    unlink(path().c_str());
    return bytes;
  }
  /// Looks the key up, within a few seconds (a FIFO once blocked forever).
  Status lookup(bool *hit) {
    std::string got;
    auto f = std::async(std::launch::async,
                        [&] { return cache.lookup(key, &got, hit); });
    if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << "the lookup hangs";
      std::abort();
    }
    return f.get();
  }
};

bool runningAsRoot() { return geteuid() == 0; }

} // namespace

// Hostile entries: a directory aborted on an uncaught exception, a FIFO
// blocked forever, a symlink to /dev/zero aborted on bad_alloc. Each is now
// one warning: removed where it can be, and the kernel compiled again.
TEST(KernelCacheTest, AnEntryThatIsNoRegularFileIsRefused) {
  struct Case {
    const char *why;
    std::function<int(const std::string &)> make;
    const char *needle;
    Code code;
  };
  const Case cases[] = {
      {"directory", [](const std::string &p) { return mkdir(p.c_str(), 0700); },
       "is a directory, not a regular file", Code::Unsupported},
      {"FIFO", [](const std::string &p) { return mkfifo(p.c_str(), 0600); },
       "is a FIFO, not a regular file", Code::SystemError},
      {"symlink to /dev/zero",
       [](const std::string &p) { return symlink("/dev/zero", p.c_str()); },
       "is a symbolic link", Code::SystemError},
  };
  for (const Case &c : cases) {
    CacheFixture f;
    ASSERT_EQ(c.make(f.path()), 0) << c.why;
    bool hit = true;
    Status s = f.lookup(&hit);
    EXPECT_FALSE(hit) << c.why;
    EXPECT_EQ(s.code(), c.code) << c.why << ": " << s.message();
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(f.path()), std::string::npos) << s.message();
    if (c.code == Code::SystemError) {
      EXPECT_NE(s.message().find("removed, recompiling"), std::string::npos);
      struct stat st;
      EXPECT_NE(lstat(f.path().c_str(), &st), 0) << c.why << ": removed";
    }
  }
}

// A symlink to a valid entry is refused too: an entry's contents run as
// code, and a link may lead into a directory another user writes.
TEST(KernelCacheTest, ASymlinkedEntryIsRefused) {
  CacheFixture f;
  std::string target = f.tmp / "elsewhere";
  ASSERT_TRUE(mscclc::test::writeAll(target, f.entry()));
  ASSERT_EQ(symlink(target.c_str(), f.path().c_str()), 0);
  bool hit = true;
  Status s = f.lookup(&hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.message();
  // The next store replaces it with an entry of its own.
  ASSERT_TRUE(f.cache.store(f.key, "binary").isOk());
  ASSERT_TRUE(f.lookup(&hit).isOk());
  EXPECT_TRUE(hit);
}

// An entry others may write, or another user's, is ignored with one
// warning, removed and compiled again: not fatal, and never run.
TEST(KernelCacheTest, AnEntryOthersCouldHaveWrittenIsNotRun) {
  CacheFixture f;
  ASSERT_TRUE(mscclc::test::writeAll(f.path(), f.entry()));
  ASSERT_EQ(chmod(f.path().c_str(), 0644), 0);
  bool hit = false;
  ASSERT_TRUE(f.lookup(&hit).isOk());
  EXPECT_TRUE(hit) << "a private entry of this user's is served";
  ASSERT_EQ(chmod(f.path().c_str(), 0666), 0);
  Status s = f.lookup(&hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(s.code(), Code::SystemError);
  EXPECT_NE(s.message().find("writable by group and others (mode 0666)"),
            std::string::npos)
      << s.message();
  if (!runningAsRoot())
    GTEST_SKIP() << "another user's entry needs root to make";
  ASSERT_TRUE(mscclc::test::writeAll(f.path(), f.entry()));
  ASSERT_EQ(chmod(f.path().c_str(), 0644), 0);
  ASSERT_EQ(chown(f.path().c_str(), 4242, 4242), 0);
  s = f.lookup(&hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("owned by user 4242"), std::string::npos)
      << s.message();
}

// Entries are written 0644 whatever the umask: a group-writable one would
// be refused by the next reader.
TEST(KernelCacheTest, EntriesAreWrittenPrivateWhateverTheUmask) {
  CacheFixture f;
  mode_t old = umask(0);
  Status s = f.cache.store(f.key, "binary");
  umask(old);
  ASSERT_TRUE(s.isOk()) << s.message();
  struct stat st;
  ASSERT_EQ(stat(f.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(KernelCacheTest, ACacheDirectoryOfAnotherUserIsNotUsed) {
  if (!runningAsRoot())
    GTEST_SKIP() << "another user's directory needs root to make";
  CacheFixture f;
  ASSERT_EQ(chown(f.tmp.path().c_str(), 4242, 4242), 0);
  bool hit = true;
  Status s = f.lookup(&hit);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("owned by user 4242"), std::string::npos)
      << s.message();
}

// Without HOME the cache was a /tmp/mscclc-cache shared by every user.
TEST(KernelCacheTest, WithoutHomeTheCacheIsThisUsersOwnInTmp) {
  std::string home = getenv("HOME") ? getenv("HOME") : "";
  unsetenv("MSCCLC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  KernelCache c;
  ASSERT_TRUE(KernelCache::fromEnvironment(&c).isOk());
  if (!home.empty())
    setenv("HOME", home.c_str(), 1);
  EXPECT_EQ(c.dir(), "/tmp/mscclc-cache-" + std::to_string(geteuid()));
  // A symlink of that name (another user's, who made it first) is refused,
  // even where it leads to a directory of ours.
  TempDir tmp("mscclc-cache-test");
  std::string link = tmp / "mscclc-cache-link";
  ASSERT_EQ(symlink(tmp.path().c_str(), link.c_str()), 0);
  KernelCache shared(link, true, /*sharedParent=*/true);
  std::string got;
  bool hit = true;
  Status s = shared.lookup(std::string(64, 'a'), &got, &hit);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.message();
  EXPECT_EQ(shared.store(std::string(64, 'a'), "x").code(), Code::Unsupported);
  // Made fresh, it is private.
  KernelCache fresh(tmp / "mscclc-cache-new", true, /*sharedParent=*/true);
  ASSERT_TRUE(fresh.store(std::string(64, 'a'), "x").isOk());
  struct stat st;
  ASSERT_EQ(lstat(fresh.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// The one helper every reader of a file goes through (Files.h).
TEST(ReadRegularFileTest, RefusesWhatIsNoFileAndWhatIsTooLarge) {
  TempDir tmp("mscclc-files-test");
  std::string out;
  FileRules rules;
  rules.what = "selection table";
  rules.maxBytes = 1 << 20;
  // Present and regular, through a symlink (data files may be links).
  ASSERT_TRUE(mscclc::test::writeAll(tmp / "ok", "text"));
  ASSERT_EQ(symlink((tmp / "ok").c_str(), (tmp / "link").c_str()), 0);
  ASSERT_TRUE(readRegularFile(tmp / "link", rules, &out).isOk());
  EXPECT_EQ(out, "text");
  // Missing: an error, or not found where the caller asks.
  Status s = readRegularFile(tmp / "none", rules, &out);
  EXPECT_NE(s.message().find("cannot read selection table"), std::string::npos)
      << s.message();
  bool found = true;
  ASSERT_TRUE(readRegularFile(tmp / "none", rules, &out, &found).isOk());
  EXPECT_FALSE(found);
  // /dev/zero, a directory, a FIFO: refused at once.
  s = readRegularFile("/dev/zero", rules, &out);
  EXPECT_NE(s.message().find("is a character device, not a regular file"),
            std::string::npos)
      << s.message();
  s = readRegularFile(tmp.path(), rules, &out);
  EXPECT_NE(s.message().find("is a directory"), std::string::npos);
  ASSERT_EQ(mkfifo((tmp / "fifo").c_str(), 0600), 0);
  s = readRegularFile(tmp / "fifo", rules, &out);
  EXPECT_NE(s.message().find("is a FIFO"), std::string::npos) << s.message();
  // One byte over the limit (a sparse file: no disk used).
  {
    std::ofstream big(tmp / "big");
  }
  ASSERT_EQ(truncate((tmp / "big").c_str(), (1 << 20) + 1), 0);
  s = readRegularFile(tmp / "big", rules, &out);
  EXPECT_NE(s.message().find("more than the limit of 1 MiB for a selection "
                             "table"),
            std::string::npos)
      << s.message();
  ASSERT_EQ(truncate((tmp / "big").c_str(), 1 << 20), 0);
  EXPECT_TRUE(readRegularFile(tmp / "big", rules, &out).isOk());
  EXPECT_EQ(out.size(), size_t(1) << 20);
}

TEST(ReadRegularFileTest, TrustNamesOwnerAndMode) {
  EXPECT_EQ(untrustedBecause(geteuid(), 0100644), "");
  EXPECT_EQ(untrustedBecause(0, 0100755), "");
  EXPECT_EQ(untrustedBecause(geteuid(), 0100664),
            "writable by its group (mode 0664)");
  EXPECT_EQ(untrustedBecause(geteuid(), 040777),
            "writable by group and others (mode 0777)");
  if (geteuid() != 4242)
    EXPECT_NE(untrustedBecause(4242, 0100644).find("owned by user 4242"),
              std::string::npos);
  TempDir tmp("mscclc-files-test");
  std::string program = tmp / "tool";
  ASSERT_TRUE(mscclc::test::writeAll(program, "#!/bin/sh\n"));
  ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  EXPECT_TRUE(checkTrustedFile(program, "compiler").isOk());
  ASSERT_EQ(chmod(program.c_str(), 0775), 0);
  Status s = checkTrustedFile(program, "compiler");
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("writable by its group"), std::string::npos)
      << s.message();
  ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  ASSERT_EQ(chmod(tmp.path().c_str(), 0777), 0);
  s = checkTrustedFile(program, "compiler");
  EXPECT_NE(s.message().find("the directory of compiler"), std::string::npos)
      << s.message();
}

// The compiler the runtime runs (Program.h's findCompiler): one found by
// searching PATH is run only where no other user can change it or its
// directory; a relative PATH entry (the working directory) is never
// searched; one the user names is run, with a warning when others could
// change it.
TEST(CompilerTrustTest, SearchSkipsCompilersOthersCouldChange) {
  TempDir tmp("mscclc-compiler-test");
  std::string open = tmp / "open", safe = tmp / "safe";
  for (const std::string &dir : {open, safe}) {
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    ASSERT_TRUE(mscclc::test::writeAll(dir + "/mscclc", "#!/bin/sh\n"));
    ASSERT_EQ(chmod((dir + "/mscclc").c_str(), 0755), 0);
  }
  ASSERT_EQ(chmod((open + "/mscclc").c_str(), 0777), 0);
  // PATH's search (findCompiler tries it after the library's own
  // directory, where a build may hold a compiler).
  std::string found;
  EXPECT_TRUE(findCompilerOnPath(open + ":" + safe, &found));
  EXPECT_EQ(found, safe + "/mscclc") << "the writable one is skipped";
  // Only the untrusted one, and relative entries: nothing is found.
  ASSERT_EQ(chdir(safe.c_str()), 0);
  found.clear();
  EXPECT_FALSE(findCompilerOnPath(open + ":.::safe", &found)) << found;
  ASSERT_EQ(chdir("/"), 0);
  // Named by the user: run, the log says why.
  std::string oldCompiler =
      getenv("MSCCLC_COMPILER") ? getenv("MSCCLC_COMPILER") : "";
  setenv("MSCCLC_COMPILER", (open + "/mscclc").c_str(), 1);
  Status s = findCompiler("", &found);
  EXPECT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(found, open + "/mscclc");
  if (oldCompiler.empty())
    unsetenv("MSCCLC_COMPILER");
  else
    setenv("MSCCLC_COMPILER", oldCompiler.c_str(), 1);
}
