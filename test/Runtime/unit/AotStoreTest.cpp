//===- AotStoreTest.cpp - The ahead-of-time kernel store ------------------===//
//
// Keys (stable, NVRTC- and install-path-independent), the store read back,
// damaged and foreign entries refused, the loader taking a stored kernel
// before the cache and NVRTC, and, with the compiler, the build's store
// holding the selection table's picks under the keys the run-time path
// computes. The second ctest run (runtime-AotStoreTest-without-nvrtc)
// repeats the pick lookups with MSCCLC_NVRTC naming a missing library.
//
//===----------------------------------------------------------------------===//

#include "AotBuild.h"
#include "TestFiles.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/KernelEntry.h"
#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/StdlibPrograms.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace mscclc::rt;
using mscclc::test::readAll;
using mscclc::test::TempDir;
using mscclc::test::writeAll;

namespace {

CompileRequest addOne() {
  CompileRequest req;
  req.source = R"(
extern "C" __global__ void add_one(float *x, unsigned long long n) {
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
)";
  req.name = "add_one.cu";
  req.arch = 90;
  req.options = {"-DMSCCLC_DTYPE=f32"};
  return req;
}

bool withoutNvrtc() {
  const char *p = getenv("MSCCLC_NVRTC");
  return p && std::string(p).find("nonexistent") != std::string::npos;
}

/// A scoped environment variable.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char *n, const char *value) : name(n) {
    const char *o = getenv(n);
    had = o != nullptr;
    if (had)
      old = o;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

} // namespace

TEST(KernelKeyTest, NamesTheKernelNotTheMachine) {
  CompileRequest base = addOne();
  std::string k = kernelKey(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, kernelKey(base)) << "stable";
  CompileRequest other = base;
  other.arch = 80;
  EXPECT_NE(kernelKey(other), k) << "arch";
  other = base;
  other.options = {"-DMSCCLC_DTYPE=f16"};
  EXPECT_NE(kernelKey(other), k) << "options";
  other = base;
  other.source += " ";
  EXPECT_NE(kernelKey(other), k) << "source";
  other = base;
  other.name = "elsewhere.cu";
  EXPECT_EQ(kernelKey(other), k) << "the diagnostic name";
  {
    // Another toolkit location (e.g. CUDA_HOME on the machine running):
    // the same kernel, the same AOT entry.
    TempDir dir("mscclc-aot-test");
    ScopedEnv include("MSCCLC_CUDA_INCLUDE", dir.path().c_str());
    ASSERT_EQ(mscclc::jit::cudaIncludeDir(), dir.path());
    EXPECT_EQ(kernelKey(base), k) << "the CUDA include path";
  }
  if (!withoutNvrtc())
    EXPECT_NE(cacheKey(base), k) << "the cache key adds the NVRTC version";
}

TEST(AotStoreTest, WrittenAndReadBack) {
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp / "kernels");
  std::string key(64, 'a'), binary;
  bool hit = true;
  ASSERT_TRUE(store.lookup(key, &binary, &hit).isOk());
  EXPECT_FALSE(hit) << "a missing directory is an empty store";
  ASSERT_TRUE(store.write(key, "\x7f" "ELF not really").isOk());
  ASSERT_TRUE(store.lookup(key, &binary, &hit).isOk());
  EXPECT_TRUE(hit);
  EXPECT_EQ(binary, "\x7f" "ELF not really");
  ASSERT_TRUE(store.lookup(std::string(64, 'b'), &binary, &hit).isOk());
  EXPECT_FALSE(hit);
  struct stat st;
  ASSERT_EQ(stat(store.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0022, 0u) << "not writable by others";
}

TEST(AotStoreTest, DamagedAndForeignEntriesAreRefused) {
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  std::string key(64, 'c'), other(64, 'd');
  ASSERT_TRUE(store.write(key, "cubin bytes").isOk());
  std::string good = readAll(store.pathFor(key));
  auto refused = [&](const std::string &contents, const char *why) {
    writeAll(store.pathFor(key), contents);
    std::string binary;
    bool hit = true;
    Status s = store.lookup(key, &binary, &hit);
    EXPECT_EQ(s.code(), Code::Unsupported) << why;
    EXPECT_FALSE(hit) << why;
    EXPECT_NE(s.message().find(store.pathFor(key)), std::string::npos) << why;
    EXPECT_EQ(readAll(store.pathFor(key)), contents)
        << why << ": the store is never modified";
  };
  std::string flipped = good;
  flipped.back() ^= 1;
  refused(flipped, "corrupt");
  refused(good.substr(0, good.size() - 3), "truncated");
  refused(formatKernelEntry("MSCCLC-CUBIN-2", key, "cubin bytes"),
          "a user-cache entry (another NVRTC) copied in");
  refused(formatKernelEntry("MSCCLC-AOT-CUBIN-1", other, "cubin bytes"),
          "another key's entry");
  refused("garbage", "not an entry");
}

TEST(AotStoreTest, BundlesAreEntriesOfTheirOwn) {
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  std::string key(64, 'b'), binary;
  ASSERT_TRUE(store.write(key, "{bundle}", AotEntry::Bundle).isOk());
  EXPECT_NE(store.pathFor(key, AotEntry::Bundle), store.pathFor(key));
  bool hit = false;
  ASSERT_TRUE(store.lookup(key, &binary, &hit, AotEntry::Bundle).isOk());
  EXPECT_TRUE(hit);
  EXPECT_EQ(binary, "{bundle}");
  ASSERT_TRUE(store.lookup(key, &binary, &hit).isOk());
  EXPECT_FALSE(hit) << "a bundle is no kernel";
  // A kernel entry renamed to a bundle's name is refused, unchanged.
  ASSERT_TRUE(store.write(key, "cubin").isOk());
  std::string cubinEntry = readAll(store.pathFor(key));
  writeAll(store.pathFor(key, AotEntry::Bundle), cubinEntry);
  Status s = store.lookup(key, &binary, &hit, AotEntry::Bundle);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("program bundle"), std::string::npos)
      << s.message();
  EXPECT_EQ(readAll(store.pathFor(key, AotEntry::Bundle)), cubinEntry);
}

TEST(AotStoreTest, AStoreOthersCanWriteIsNotUsed) {
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  std::string key(64, 'e'), binary;
  ASSERT_TRUE(store.write(key, "bytes").isOk());
  ASSERT_EQ(chmod(store.dir().c_str(), 0777), 0);
  bool hit = true;
  Status s = store.lookup(key, &binary, &hit);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("writable by group and others (mode 0777)"),
            std::string::npos)
      << s.message();
}

// Found hostile: a mode 0666 entry in a 0755 store, rewritten by another
// user, was served; so were symlinked entries. A directory entry aborted,
// a FIFO hung and a symlink to /dev/zero ran out of memory.
TEST(AotStoreTest, EntriesOthersCouldChangeOrNoFilesAreRefused) {
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp / "kernels");
  std::string key(64, 'f');
  ASSERT_TRUE(store.write(key, "bytes").isOk());
  std::string entry = readAll(store.pathFor(key));
  auto refused = [&](const char *why, const char *needle) {
    std::string binary;
    bool hit = true;
    Status s = store.lookup(key, &binary, &hit);
    EXPECT_EQ(s.code(), Code::Unsupported) << why << ": " << s.message();
    EXPECT_FALSE(hit) << why;
    EXPECT_NE(s.message().find(needle), std::string::npos)
        << why << ": " << s.message();
    EXPECT_NE(s.message().find(store.pathFor(key)), std::string::npos)
        << s.message();
  };
  std::string path = store.pathFor(key);
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  refused("mode 0666", "writable by group and others (mode 0666)");
  ASSERT_EQ(unlink(path.c_str()), 0);
  std::string elsewhere = tmp / "elsewhere";
  ASSERT_TRUE(writeAll(elsewhere, entry));
  ASSERT_EQ(symlink(elsewhere.c_str(), path.c_str()), 0);
  refused("a symlink to a valid entry", "is a symbolic link");
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0);
  refused("a symlink to /dev/zero", "is a symbolic link");
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  refused("a directory", "is a directory, not a regular file");
  ASSERT_EQ(rmdir(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  refused("a FIFO", "is a FIFO, not a regular file");
  ASSERT_EQ(unlink(path.c_str()), 0);
  if (geteuid() != 0)
    GTEST_SKIP() << "another user's entry needs root to make";
  ASSERT_TRUE(writeAll(path, entry));
  ASSERT_EQ(chown(path.c_str(), 4242, 4242), 0);
  refused("another user's entry", "owned by user 4242");
}

TEST(AotStoreTest, AStoreOfAnotherUserIsNotUsed) {
  if (geteuid() != 0)
    GTEST_SKIP() << "another user's store needs root to make";
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp / "kernels");
  std::string key(64, 'f'), binary;
  ASSERT_TRUE(store.write(key, "bytes").isOk());
  ASSERT_EQ(chown(store.dir().c_str(), 4242, 4242), 0);
  bool hit = true;
  Status s = store.lookup(key, &binary, &hit);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_FALSE(hit);
  EXPECT_NE(s.message().find("owned by user 4242"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("not using it"), std::string::npos)
      << s.message();
}

TEST(AotStoreTest, FromEnvironment) {
  {
    ScopedEnv dir("MSCCLC_AOT_DIR", "/some/where");
    ScopedEnv on("MSCCLC_AOT", nullptr);
    AotStore store;
    ASSERT_TRUE(AotStore::fromEnvironment(&store).isOk());
    EXPECT_EQ(store.dir(), "/some/where");
  }
  // The settings module's booleans: "no" turns it off too (it once left
  // the store on, as did any word but 0, off and false).
  for (const char *value : {"0", "off", "no"}) {
    ScopedEnv dir("MSCCLC_AOT_DIR", "/some/where");
    ScopedEnv off("MSCCLC_AOT", value);
    AotStore store("/before");
    ASSERT_TRUE(AotStore::fromEnvironment(&store).isOk());
    EXPECT_FALSE(store.enabled()) << value;
  }
  {
    ScopedEnv bad("MSCCLC_AOT", "sometimes");
    AotStore store;
    EXPECT_EQ(AotStore::fromEnvironment(&store).message(),
              "MSCCLC_AOT='sometimes': expected 1, 0, true, false, yes, no, "
              "on or off");
  }
}

// The seam: a stored "cubin" that NVRTC would never produce comes back, so
// nothing was compiled; the user cache is not consulted (it is off).
TEST(AotLoaderTest, TheStoreComesBeforeCacheAndNvrtc) {
  CompileRequest req = addOne();
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  ASSERT_TRUE(store.write(kernelKey(req), "shipped").isOk());
  std::string cubin;
  CompileStats stats;
  ASSERT_TRUE(
      compileCached(req, store, KernelCache("", false), &cubin, &stats).isOk());
  EXPECT_EQ(cubin, "shipped");
  EXPECT_EQ(stats.origin, KernelOrigin::AheadOfTime);
  EXPECT_EQ(stats.key, kernelKey(req));
}

TEST(AotLoaderTest, ADamagedEntryFallsBackToNvrtc) {
  if (withoutNvrtc())
    GTEST_SKIP() << "needs NVRTC";
  CompileRequest req = addOne();
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  writeAll(store.pathFor(kernelKey(req)), "damaged");
  std::string cubin;
  CompileStats stats;
  Status s = compileCached(req, store, KernelCache("", false), &cubin, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(stats.origin, KernelOrigin::Compiled);
  EXPECT_EQ(cubin.substr(1, 3), "ELF");
}

TEST(AotLoaderTest, WithoutNvrtcAMissIsACompileErrorNamingIt) {
  if (!withoutNvrtc())
    GTEST_SKIP() << "runs as runtime-AotStoreTest-without-nvrtc";
  std::string version;
  EXPECT_FALSE(mscclc::jit::nvrtcAvailable(&version));
  EXPECT_NE(version.find("MSCCLC_NVRTC="), std::string::npos) << version;
  std::string cubin;
  TempDir tmp("mscclc-aot-test");
  Status s = compileCached(addOne(), AotStore(tmp.path()),
                           KernelCache("", false), &cubin, nullptr);
  EXPECT_EQ(s.code(), Code::CompileError);
}

/// The stdlib program of allreduce_1pa at 2 ranks with `instances` (a count
/// no table entry picks, so no other test of this process holds it),
/// through stdlibProgram with the store in `storeDir`.
static Status onePa(int instances, const std::string &storeDir,
                    Program **program, std::string *key) {
  std::string dir;
  MSCCLC_TRY(stdlibDir(&dir));
  StdlibState state;
  state.agreed = Status::ok();
  state.gpusPerNode = 2;
  SelectionQuery q;
  q.nranks = 2;
  q.count = 1024;
  Selection sel;
  sel.algorithm = "allreduce_1pa";
  sel.instances = instances;
  CompilerOptions opts;
  opts.ranks = 2;
  opts.instances = instances;
  MSCCLC_TRY(stdlibProgramKey(dir, opts, sel.algorithm, false, key));
  ScopedEnv aot("MSCCLC_AOT_DIR", storeDir.c_str());
  return stdlibProgram(state, q, sel, program);
}

// A bundle in the store stands in for the compiler: with MSCCLC_COMPILER
// naming a program that always fails, the stored program is the one used.
TEST(AotBundleTest, AStoredBundleNeedsNoCompiler) {
  if (withoutNvrtc())
    GTEST_SKIP() << "needs the compiler to make a bundle";
  std::string compiler;
  if (!findCompiler("", &compiler).isOk())
    GTEST_SKIP() << "no mscclc compiler";
  std::string dir;
  ASSERT_TRUE(stdlibDir(&dir).isOk());
  CompilerOptions opts;
  opts.ranks = 2;
  opts.instances = 5;
  std::unique_ptr<Program> compiled;
  Status s = Program::compileFile(dir + "/allreduce_1pa.mscl", opts, &compiled);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::string key;
  ASSERT_TRUE(stdlibProgramKey(dir, opts, "allreduce_1pa", false, &key).isOk());
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  ASSERT_TRUE(store.write(key, compiled->bundleJson(), AotEntry::Bundle).isOk());

  ScopedEnv failing("MSCCLC_COMPILER", "/bin/false");
  Program *program = nullptr;
  std::string sameKey;
  s = onePa(5, tmp.path(), &program, &sameKey);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(sameKey, key);
  EXPECT_EQ(program->cudaSource(), compiled->cudaSource());
  EXPECT_EQ(program->planJson(), compiled->planJson());
  EXPECT_EQ(kernelKey(program->compileRequest(90, "f32", "sum", 1)),
            kernelKey(compiled->compileRequest(90, "f32", "sum", 1)))
      << "the stored program's kernels are the compiled one's";
}

// A damaged bundle is refused (and left as it is): the compiler runs.
TEST(AotBundleTest, ADamagedBundleFallsBackToTheCompiler) {
  if (withoutNvrtc())
    GTEST_SKIP() << "needs the compiler";
  std::string compiler;
  if (!findCompiler("", &compiler).isOk())
    GTEST_SKIP() << "no mscclc compiler";
  std::string dir, key;
  ASSERT_TRUE(stdlibDir(&dir).isOk());
  CompilerOptions opts;
  opts.ranks = 2;
  opts.instances = 6;
  ASSERT_TRUE(stdlibProgramKey(dir, opts, "allreduce_1pa", false, &key).isOk());
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  std::string damaged = formatKernelEntry("MSCCLC-AOT-BUNDLE-1", key, "{}");
  damaged.back() = 'x';
  writeAll(store.pathFor(key, AotEntry::Bundle), damaged);
  Program *program = nullptr;
  std::string sameKey;
  Status s = onePa(6, tmp.path(), &program, &sameKey);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(program->plan().ranks, 2);
  EXPECT_EQ(readAll(store.pathFor(key, AotEntry::Bundle)), damaged);
}

TEST(AotBundleTest, TheProgramKeyNamesWhatShapesTheProgram) {
  std::string dir;
  ASSERT_TRUE(stdlibDir(&dir).isOk());
  CompilerOptions base;
  base.ranks = 4;
  base.instances = 2;
  base.defines = {{"root", 1}};
  std::string k;
  ASSERT_TRUE(stdlibProgramKey(dir, base, "broadcast_allpairs", false, &k).isOk());
  auto keyOf = [&](const CompilerOptions &o, const std::string &alg,
                   bool inPlace) {
    std::string key;
    EXPECT_TRUE(stdlibProgramKey(dir, o, alg, inPlace, &key).isOk());
    return key;
  };
  EXPECT_EQ(keyOf(base, "broadcast_allpairs", false), k) << "stable";
  EXPECT_NE(keyOf(base, "broadcast_allpairs", true), k) << "in place";
  EXPECT_NE(keyOf(base, "broadcast_chain", false), k) << "algorithm";
  CompilerOptions o = base;
  o.ranks = 8;
  EXPECT_NE(keyOf(o, "broadcast_allpairs", false), k) << "ranks";
  o = base;
  o.gpusPerNode = 2;
  EXPECT_NE(keyOf(o, "broadcast_allpairs", false), k) << "node shape";
  o = base;
  o.instances = 3;
  EXPECT_NE(keyOf(o, "broadcast_allpairs", false), k) << "instances";
  o = base;
  o.defines = {{"root", 2}};
  EXPECT_NE(keyOf(o, "broadcast_allpairs", false), k) << "params";
}

#ifndef MSCCLC_AOT_TEST_ARCH
#define MSCCLC_AOT_TEST_ARCH 0
#define MSCCLC_AOT_TEST_RANKS 0
#define MSCCLC_AOT_TEST_DTYPE ""
#endif

/// The selection table's pick for an all-reduce of `count`, through the
/// run-time path (stdlibResolve), at the first configured AOT arch, rank
/// count and dtype.
static Status resolvePick(uint64_t count, bool inPlace,
                          const StdlibChoice **choice) {
  static StdlibState state;
  const SelectionTable *table = nullptr;
  MSCCLC_TRY(processSelectionTable(&table));
  state.agreed = Status::ok();
  state.table = table;
  state.gpusPerNode = MSCCLC_AOT_TEST_RANKS;
  state.nnodes = 1;
  state.arch = MSCCLC_AOT_TEST_ARCH;
  SelectionQuery q;
  q.nranks = MSCCLC_AOT_TEST_RANKS;
  q.arch = MSCCLC_AOT_TEST_ARCH;
  q.count = count;
  q.dtype = MSCCLC_AOT_TEST_DTYPE;
  q.inPlace = inPlace;
  return stdlibResolve(state, q, choice);
}

// The store the build wrote (share/mscclc/kernels beside bin/, as beside
// lib/libmscclc.so) holds the table's all-reduce picks, small and large,
// under the keys the run-time path computes, and the loader takes them
// without compiling; in the second run (MSCCLC_COMPILER=/bin/false) their
// programs come from the store's bundles too.
TEST(AotPickTest, TheBuildsStoreServesTheTablesPicks) {
  if (MSCCLC_AOT_TEST_ARCH == 0)
    GTEST_SKIP() << "the build wrote no ahead-of-time store (MSCCLC_AOT)";
  std::string compiler;
  if (!findCompiler("", &compiler).isOk())
    GTEST_SKIP() << "no mscclc compiler";
  AotStore store;
  ASSERT_TRUE(AotStore::fromEnvironment(&store).isOk());
  ASSERT_TRUE(store.enabled()) << "the build's store was not found";
  for (uint64_t count : {uint64_t(1024), uint64_t(1) << 24})
    for (bool inPlace : {false, true}) {
      const StdlibChoice *choice = nullptr;
      Status s = resolvePick(count, inPlace, &choice);
      // In the second run MSCCLC_COMPILER is /bin/false: the program came
      // from the store's bundle.
      ASSERT_TRUE(s.isOk()) << s.message();
      ASSERT_NE(choice->program, nullptr);
      for (int rank = 0; rank < MSCCLC_AOT_TEST_RANKS; ++rank) {
        CompileRequest req = choice->program->compileRequest(
            MSCCLC_AOT_TEST_ARCH, MSCCLC_AOT_TEST_DTYPE, "sum", rank);
        std::string cubin;
        CompileStats stats;
        s = compileCached(req, store, KernelCache("", false), &cubin, &stats);
        ASSERT_TRUE(s.isOk()) << s.message();
        EXPECT_EQ(stats.origin, KernelOrigin::AheadOfTime)
            << choice->selection.describe() << " rank " << rank << " count "
            << count << (inPlace ? " in place" : "");
        EXPECT_EQ(cubin.substr(1, 3), "ELF");
      }
    }
}

// mscclc-aot's own steps into a fresh directory: every kernel and program
// bundle is written and reads back, strays are removed; a second build
// keeps every kernel.
TEST(AotPickTest, BuildWritesEveryPickAndKeepsValidEntries) {
  if (MSCCLC_AOT_TEST_ARCH == 0)
    GTEST_SKIP() << "the build wrote no ahead-of-time store (MSCCLC_AOT)";
  if (withoutNvrtc())
    GTEST_SKIP() << "building needs NVRTC";
  std::string compiler;
  if (!findCompiler("", &compiler).isOk())
    GTEST_SKIP() << "no mscclc compiler";
  const SelectionTable *table = nullptr;
  ASSERT_TRUE(processSelectionTable(&table).isOk());
  AotConfig config;
  config.archs = {MSCCLC_AOT_TEST_ARCH};
  config.ranks = {MSCCLC_AOT_TEST_RANKS};
  config.dtypes = {MSCCLC_AOT_TEST_DTYPE};
  // One rank per node as well (MSCCLC_AOT_TEST_RANKS nodes): the
  // multi-node picks too, each a program of MSCCLC_AOT_TEST_RANKS kernels
  // like the one-node ones.
  config.nodeShapes = {{MSCCLC_AOT_TEST_RANKS, 1}};
  std::vector<AotKernel> kernels;
  std::vector<AotBundle> bundles;
  Status s = aotKernels(*table, config, &kernels, &bundles);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_FALSE(kernels.empty());
  // Every rank of every launched program, and at least those programs.
  EXPECT_EQ(kernels.size() % size_t(MSCCLC_AOT_TEST_RANKS), 0u);
  EXPECT_GE(bundles.size(), kernels.size() / size_t(MSCCLC_AOT_TEST_RANKS));
  TempDir tmp("mscclc-aot-test");
  AotStore store(tmp.path());
  writeAll(store.pathFor(std::string(64, 'f')), "stray");
  writeAll(store.pathFor(std::string(64, 'f'), AotEntry::Bundle), "stray");
  AotBuildStats stats;
  s = buildAotStore(kernels, bundles, store, 2, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(stats.compiled, kernels.size());
  EXPECT_EQ(stats.bundles, bundles.size());
  EXPECT_EQ(stats.removed, 2u);
  for (const AotBundle &b : bundles) {
    std::string text;
    bool hit = false;
    ASSERT_TRUE(store.lookup(b.key, &text, &hit, AotEntry::Bundle).isOk());
    ASSERT_TRUE(hit) << b.what;
    std::unique_ptr<Program> p;
    ASSERT_TRUE(Program::fromBundle(text, &p).isOk()) << b.what;
  }
  for (const AotKernel &k : kernels) {
    std::string binary;
    bool hit = false;
    ASSERT_TRUE(store.lookup(k.key, &binary, &hit).isOk());
    EXPECT_TRUE(hit) << k.what;
    EXPECT_EQ(k.key, kernelKey(k.request));
  }
  std::string manifest = readAll(store.dir() + "/manifest.tsv");
  EXPECT_NE(manifest.find(kernels.front().key + "\t"), std::string::npos);
  s = buildAotStore(kernels, bundles, store, 2, &stats);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(stats.compiled, 0u);
  EXPECT_EQ(stats.kept, kernels.size());
}
