//===- RouteTest.cpp - Fallback policy, routes, argument checks, config ---===//
//
// The library's decisions without a GPU: MSCCLC_NCCL_FALLBACK parsing, the
// route of a call and its refusal messages, every argument check, config
// reading through the size/magic/version header, and handle liveness.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "RealNccl.h"
#include "SelfCalls.h"
#include "Route.h"
#include "Validate.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <algorithm>

#include <cstdint>

using namespace mscclc::nccl;

namespace {

TEST(FallbackPolicy, ParsesModesAndLists) {
  FallbackPolicy p;
  ASSERT_TRUE(parseFallbackPolicy(nullptr, &p).ok());
  EXPECT_EQ(p.mode, FallbackPolicy::Mode::Auto);
  ASSERT_TRUE(parseFallbackPolicy("ALL", &p).ok());
  EXPECT_EQ(p.mode, FallbackPolicy::Mode::All);
  ASSERT_TRUE(parseFallbackPolicy("none", &p).ok());
  EXPECT_EQ(p.mode, FallbackPolicy::Mode::None);
  ASSERT_TRUE(parseFallbackPolicy(" allreduce, ncclBcast ,send", &p).ok());
  EXPECT_EQ(p.mode, FallbackPolicy::Mode::Listed);
  EXPECT_EQ(p.listed, (std::set<Collective>{Collective::AllReduce,
                                            Collective::Broadcast,
                                            Collective::Send}));
}

TEST(FallbackPolicy, RejectsUnknownNames) {
  FallbackPolicy p;
  Outcome o = parseFallbackPolicy("allreduce,allreduse", &p);
  EXPECT_EQ(o.result, ncclInvalidUsage);
  EXPECT_NE(o.message.find("'allreduse'"), std::string::npos) << o.message;
  EXPECT_EQ(p.mode, FallbackPolicy::Mode::Auto);
}

RouteInputs inputs(bool native, bool fallback) {
  RouteInputs in;
  in.collective = Collective::AllReduce;
  in.call = "ncclAllReduce of 8 float32 (sum)";
  in.nativeSupported = native;
  in.nativeMissing = native ? "" : "no algorithm for 3 ranks";
  in.hasFallback = fallback;
  in.noFallback = fallback ? "" : "no real NCCL library was found";
  return in;
}

TEST(Route, AutoPrefersNativeThenFallback) {
  FallbackPolicy p;
  EXPECT_EQ(decideRoute(p, inputs(true, true)).route, Route::Native);
  EXPECT_EQ(decideRoute(p, inputs(true, false)).route, Route::Native);
  EXPECT_EQ(decideRoute(p, inputs(false, true)).route, Route::Fallback);
}

TEST(Route, UncoveredWithoutFallbackSaysWhatIsMissing) {
  FallbackPolicy p;
  RouteDecision d = decideRoute(p, inputs(false, false));
  EXPECT_EQ(d.route, Route::Refuse);
  EXPECT_NE(d.message.find("ncclAllReduce of 8 float32"), std::string::npos);
  EXPECT_NE(d.message.find("no algorithm for 3 ranks"), std::string::npos);
  EXPECT_NE(d.message.find("no real NCCL library was found"), std::string::npos)
      << d.message;
}

TEST(Route, NoneNeverFallsBack) {
  FallbackPolicy p;
  ASSERT_TRUE(parseFallbackPolicy("none", &p).ok());
  EXPECT_EQ(decideRoute(p, inputs(true, true)).route, Route::Native);
  RouteDecision d = decideRoute(p, inputs(false, true));
  EXPECT_EQ(d.route, Route::Refuse);
  EXPECT_NE(d.message.find("MSCCLC_NCCL_FALLBACK=none"), std::string::npos)
      << d.message;
}

TEST(Route, AllAndListsForceTheFallback) {
  FallbackPolicy all, listed, other;
  ASSERT_TRUE(parseFallbackPolicy("all", &all).ok());
  ASSERT_TRUE(parseFallbackPolicy("allreduce", &listed).ok());
  ASSERT_TRUE(parseFallbackPolicy("allgather", &other).ok());
  EXPECT_EQ(decideRoute(all, inputs(true, true)).route, Route::Fallback);
  EXPECT_EQ(decideRoute(listed, inputs(true, true)).route, Route::Fallback);
  EXPECT_EQ(decideRoute(other, inputs(true, true)).route, Route::Native);
  // Forced but impossible: refused, naming the reason.
  RouteDecision d = decideRoute(listed, inputs(true, false));
  EXPECT_EQ(d.route, Route::Refuse);
  EXPECT_NE(d.message.find("MSCCLC_NCCL_FALLBACK sends AllReduce"),
            std::string::npos)
      << d.message;
}

CollectiveArgs args(Collective c, size_t count = 16) {
  static char buf[1024];
  CollectiveArgs a;
  a.collective = c;
  a.send = buf;
  a.recv = buf + 512;
  a.count = count;
  a.dtype = ncclFloat32;
  a.op = ncclSum;
  a.root = 0;
  return a;
}

TEST(Arguments, AcceptsWellFormedCalls) {
  for (Collective c : {Collective::AllReduce, Collective::AllGather,
                       Collective::ReduceScatter, Collective::Broadcast,
                       Collective::Reduce, Collective::AllToAll,
                       Collective::Gather, Collective::Scatter,
                       Collective::Send, Collective::Recv}) {
    CollectiveArgs a = args(c);
    a.root = 1;
    EXPECT_TRUE(checkArguments(a, 0, 4, false).ok()) << collectiveName(c);
  }
}

TEST(Arguments, RejectsBadDataTypes) {
  for (int t : {-1, 12, 1000}) {
    CollectiveArgs a = args(Collective::AllGather);
    a.dtype = t;
    Outcome o = checkArguments(a, 0, 2, false);
    EXPECT_EQ(o.result, ncclInvalidArgument);
    EXPECT_NE(o.message.find("invalid data type"), std::string::npos) << o.message;
  }
}

TEST(Arguments, RejectsBadOperatorsOfReductionsOnly) {
  CollectiveArgs a = args(Collective::AllReduce);
  a.op = 42; // never created
  Outcome o = checkArguments(a, 0, 2, false);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("invalid reduction operator 42"), std::string::npos);
  EXPECT_TRUE(checkArguments(a, 0, 2, true).ok()); // a live PreMulSum
  a.op = -3;
  EXPECT_EQ(checkArguments(a, 0, 2, true).result, ncclInvalidArgument);
  CollectiveArgs g = args(Collective::AllGather);
  g.op = 42; // ignored: no reduction
  EXPECT_TRUE(checkArguments(g, 0, 2, false).ok());
}

TEST(Arguments, RejectsNullBuffersThisRankUses) {
  CollectiveArgs a = args(Collective::AllReduce);
  a.send = nullptr;
  Outcome o = checkArguments(a, 0, 2, false);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("send buffer is NULL"), std::string::npos);
  a.count = 0; // nothing touched
  EXPECT_TRUE(checkArguments(a, 0, 2, false).ok());
  // A broadcast's non-root send buffer and a reduce's non-root receive
  // buffer are not used.
  CollectiveArgs b = args(Collective::Broadcast);
  b.send = nullptr;
  EXPECT_TRUE(checkArguments(b, 1, 2, false).ok());
  EXPECT_EQ(checkArguments(b, 0, 2, false).result, ncclInvalidArgument);
  CollectiveArgs r = args(Collective::Reduce);
  r.recv = nullptr;
  EXPECT_TRUE(checkArguments(r, 1, 2, false).ok());
  EXPECT_EQ(checkArguments(r, 0, 2, false).result, ncclInvalidArgument);
  CollectiveArgs recv = args(Collective::Recv);
  recv.recv = nullptr;
  recv.root = 1;
  EXPECT_EQ(checkArguments(recv, 0, 2, false).result, ncclInvalidArgument);
}

TEST(Arguments, RejectsRootsAndPeersOutsideTheCommunicator) {
  for (Collective c : {Collective::Broadcast, Collective::Reduce,
                       Collective::Gather, Collective::Scatter,
                       Collective::Send, Collective::Recv})
    for (int root : {-1, 4, 100}) {
      CollectiveArgs a = args(c);
      a.root = root;
      Outcome o = checkArguments(a, 0, 4, false);
      EXPECT_EQ(o.result, ncclInvalidArgument) << collectiveName(c) << root;
      EXPECT_NE(o.message.find("is not a rank"), std::string::npos) << o.message;
    }
  CollectiveArgs a = args(Collective::AllReduce);
  a.root = 99; // not rooted: ignored
  EXPECT_TRUE(checkArguments(a, 0, 4, false).ok());
}

TEST(Arguments, RejectsCountsThatOverflow) {
  CollectiveArgs a = args(Collective::AllReduce, SIZE_MAX / 2);
  Outcome o = checkArguments(a, 0, 2, false);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("overflows"), std::string::npos);
  // The gathered side of an all-gather holds nranks * count elements.
  CollectiveArgs g = args(Collective::AllGather, SIZE_MAX / 4 / 8 + 1);
  EXPECT_TRUE(checkArguments(g, 0, 1, false).ok());
  EXPECT_EQ(checkArguments(g, 0, 8, false).result, ncclInvalidArgument);
}

TEST(Arguments, DescribesCalls) {
  CollectiveArgs a = args(Collective::Reduce, 1024);
  a.dtype = ncclBfloat16;
  a.op = ncclMax;
  a.root = 3;
  EXPECT_EQ(describeCall(a), "ncclReduce of 1024 bfloat16 (max) at root 3");
  a.op = ncclNumOps + 2;
  EXPECT_EQ(redOpName(a.op), "premulsum#7");
}

TEST(Config, NullAndInitializerGiveDefaults) {
  CommSettings s;
  ASSERT_TRUE(readConfig(nullptr, &s).ok());
  EXPECT_TRUE(s.blocking);
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  ASSERT_TRUE(readConfig(&c, &s).ok());
  EXPECT_TRUE(s.blocking);
  EXPECT_EQ(s.maxCTAs, NCCL_CONFIG_UNDEF_INT);
}

TEST(Config, ReadsFieldsAndChecksThem) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = 0;
  c.minCTAs = 2;
  c.maxCTAs = 8;
  CommSettings s;
  ASSERT_TRUE(readConfig(&c, &s).ok());
  EXPECT_FALSE(s.blocking);
  EXPECT_EQ(s.minCTAs, 2);
  EXPECT_EQ(s.maxCTAs, 8);
  c.minCTAs = 16;
  EXPECT_EQ(readConfig(&c, &s).result, ncclInvalidArgument);
  c.minCTAs = 2;
  c.blocking = 7;
  EXPECT_EQ(readConfig(&c, &s).result, ncclInvalidArgument);
}

TEST(Config, RejectsUninitialisedStructs) {
  ncclConfig_t c;
  memset(&c, 0, sizeof(c));
  Outcome o;
  CommSettings s;
  o = readConfig(&c, &s);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("NCCL_CONFIG_INITIALIZER"), std::string::npos);
}

TEST(Config, ReadsOnlyWhatAnOlderCallerPassed) {
  // A 2.17-era struct ends after commName: the bytes past it are not the
  // caller's and must not be read.
  struct Older {
    size_t size;
    unsigned magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare;
  };
  alignas(ncclConfig_t) unsigned char buf[sizeof(ncclConfig_t)];
  memset(buf, 0x5a, sizeof(buf)); // garbage beyond the old struct
  Older old = {sizeof(Older), NCCL_CONFIG_MAGIC, NCCL_VERSION(2, 17, 1), 0,
               NCCL_CONFIG_UNDEF_INT, 4, 4, nullptr, NCCL_CONFIG_UNDEF_INT};
  memcpy(buf, &old, sizeof(old));
  CommSettings s;
  ASSERT_TRUE(readConfig(reinterpret_cast<ncclConfig_t *>(buf), &s).ok());
  EXPECT_FALSE(s.blocking);
  EXPECT_EQ(s.maxCTAs, 4);
  EXPECT_EQ(s.raw.nvlsCTAs, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(s.raw.size, sizeof(ncclConfig_t));
}

TEST(Config, TheFallbackReadsUndefinedPastThe2_28Fields) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = 0;
  c.size = 40; // an old caller's
  FallbackConfig f(c);
  EXPECT_EQ(f.config.size, sizeof(ncclConfig_t));
  EXPECT_EQ(f.config.blocking, 0);
  // Where a later NCCL's graphUsageMode, numRmaCtx, ... would be.
  const int *past = reinterpret_cast<const int *>(
      reinterpret_cast<const char *>(&f) + sizeof(ncclConfig_t));
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(past[i], NCCL_CONFIG_UNDEF_INT) << i;
}

TEST(Handles, NullAndDestroyedCommunicatorsAreErrors) {
  ncclComm *c = nullptr;
  Outcome o = lookupCommNoWait(nullptr, "ncclAllReduce", &c);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("NULL"), std::string::npos);
  ncclComm *made = newComm(0, 1, 0, CommSettings());
  ASSERT_TRUE(lookupCommNoWait(made, "ncclAllReduce", &c).ok());
  EXPECT_EQ(c, made);
  deleteComm(made);
  o = lookupCommNoWait(made, "ncclAllReduce", &c);
  EXPECT_EQ(o.result, ncclInvalidArgument);
  EXPECT_NE(o.message.find("destroyed"), std::string::npos) << o.message;
}

TEST(Handles, AFailedInitialisationIsReportedToUsers) {
  ncclComm *made = newComm(0, 1, 0, CommSettings());
  {
    std::lock_guard<std::mutex> lock(made->mutex);
    made->initOutcome = {ncclUnhandledCudaError, "no CUDA device"};
    made->initDone = true;
  }
  ncclComm *c = nullptr;
  Outcome o = lookupComm(made, "ncclAllReduce", &c);
  EXPECT_EQ(o.result, ncclUnhandledCudaError);
  EXPECT_NE(o.message.find("initialisation failed: no CUDA device"),
            std::string::npos)
      << o.message;
  deleteComm(made);
}

// The wheel's library first, then the system's by path (once mscclc is
// libnccl.so.2, the bare name finds mscclc), the bare name last.
TEST(RealNccl, SearchesTheWheelThenTheSystemByPath) {
  std::string saved = getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "";
  setenv("LD_LIBRARY_PATH", "/opt/first:/opt/second", 1);
  std::vector<std::string> paths = candidateNcclPaths();
  setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), "libnccl.so.2");
  auto at = [&](const std::string &p) {
    return std::find(paths.begin(), paths.end(), p) - paths.begin();
  };
  long first = at("/opt/first/libnccl.so.2");
  long second = at("/opt/second/libnccl.so.2");
  long multiarch = at("/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  ASSERT_LT(first, long(paths.size()) - 1);
  EXPECT_LT(first, second);
  EXPECT_LT(second, multiarch);
  EXPECT_LT(multiarch, long(paths.size()) - 1);
  for (long i = 0; i < first; ++i)
    EXPECT_NE(paths[size_t(i)].find("/nvidia/nccl/lib/libnccl.so.2"), std::string::npos)
        << paths[size_t(i)];
}

// Run by ctest with MSCCLC_NCCL_LIBRARY naming a library and
// EXPECT_REAL_NCCL saying what loading it must give: "none" (not an NCCL),
// "lacks:<function>", or the version it reports.
TEST(RealNccl, TheForcedLibraryIsLoadedOrRefusedWithTheReason) {
  const char *forced = getenv("MSCCLC_NCCL_LIBRARY");
  const char *expect = getenv("EXPECT_REAL_NCCL");
  if (!forced || !expect)
    GTEST_SKIP() << "MSCCLC_NCCL_LIBRARY or EXPECT_REAL_NCCL is not set";
  std::string why;
  const RealNccl *real = realNccl(&why);
  std::string e = expect;
  if (e == "none" || e.rfind("lacks:", 0) == 0) {
    EXPECT_EQ(real, nullptr);
    EXPECT_NE(why.find(std::string("MSCCLC_NCCL_LIBRARY=") + forced),
              std::string::npos)
        << why;
    if (e != "none")
      EXPECT_NE(why.find("lacks nccl" + e.substr(6)), std::string::npos) << why;
    EXPECT_EQ(loadedRealNccl(), nullptr);
    return;
  }
  ASSERT_NE(real, nullptr) << why;
  EXPECT_EQ(real->path, forced);
  EXPECT_EQ(std::to_string(real->version), e);
  EXPECT_TRUE(real->AllReduce);
  EXPECT_TRUE(real->CommSuspend);  // optional, and this one has it
  EXPECT_FALSE(real->CommShrink);  // optional, and this one lacks it
  EXPECT_EQ(loadedRealNccl(), real);

  // Calls of our exports that the real NCCL makes are told apart
  // (SelfCalls.h): from its code, or while a call into it runs.
  void *itsCode = dlsym(real->handle, "ncclAllReduce");
  ASSERT_NE(itsCode, nullptr);
  EXPECT_TRUE(calledByRealNccl(itsCode));
  EXPECT_FALSE(calledByRealNccl(reinterpret_cast<void *>(&realNccl)));
  EXPECT_FALSE(insideRealNccl());
  {
    RealCallScope inside;
    EXPECT_TRUE(insideRealNccl());
    EXPECT_TRUE(calledByRealNccl(reinterpret_cast<void *>(&realNccl)));
  }
  EXPECT_FALSE(insideRealNccl());
}


// Run by ctest with MSCCLC_FAKE_NCCL naming a stand-in NCCL (FakeNccl.c)
// and EXPECT_SEARCH naming a layout: the stand-in is copied where the
// search looks first (a PYTHONPATH folder's nvidia/nccl/lib), writable by
// others ("file-writable"), in a folder writable by others
// ("folder-writable"), or neither ("safe"). The search must skip a library
// another user could change, and load one only this user can.
TEST(RealNccl, TheSearchSkipsLibrariesOthersCouldChange) {
  const char *fake = getenv("MSCCLC_FAKE_NCCL");
  const char *expect = getenv("EXPECT_SEARCH");
  if (!fake || !expect)
    GTEST_SKIP() << "MSCCLC_FAKE_NCCL or EXPECT_SEARCH is not set";
  std::string layout = expect;
  ASSERT_EQ(getenv("MSCCLC_NCCL_LIBRARY"), nullptr)
      << "a forced library is loaded without a search";
  char tmpl[] = "/tmp/mscclc-nccl-search-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  namespace fs = std::filesystem;
  const fs::path root = tmpl, lib = root / "site/nvidia/nccl/lib";
  const std::string ours = (lib / "libnccl.so.2").string();
  fs::create_directories(lib);
  fs::copy_file(fake, ours);
  ASSERT_EQ(chmod(ours.c_str(), layout == "file-writable" ? 0666 : 0755), 0);
  ASSERT_EQ(chmod(lib.c_str(), layout == "folder-writable" ? 0777 : 0755), 0);
  setenv("PYTHONPATH", (root / "site").c_str(), 1);

  std::string why;
  const RealNccl *real = realNccl(&why);
  if (layout == "safe") {
    ASSERT_NE(real, nullptr) << why;
    EXPECT_EQ(real->path, ours);
  } else {
    // Another NCCL further on in the search (a system's) may load; this
    // one never does, and where none loads, the reason names it.
    EXPECT_TRUE(real == nullptr || real->path != ours) << "loaded " << ours;
    if (!real) {
      std::string want = layout == "file-writable"
                             ? ours + " is writable by others (mode 0666)"
                             : lib.string() +
                                   " is writable by group and others (mode 0777)";
      EXPECT_NE(why.find(want), std::string::npos) << why;
      EXPECT_NE(why.find("skipped (set MSCCLC_NCCL_LIBRARY"), std::string::npos)
          << why;
    }
  }
  std::error_code ignored;
  fs::remove_all(root, ignored);
}

} // namespace
