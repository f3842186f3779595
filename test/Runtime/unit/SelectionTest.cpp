// The stdlib selection without a GPU: the shipped catalog and table parse;
// bad tables name file and line; a sweep over collectives, rank counts,
// node shapes, sizes, dtypes, ops, in-place and roots always gets a
// supported algorithm or a clean "unsupported"; where the compiler is
// present (MSCCLC_COMPILER), the catalog agrees with the files' `require`s.

#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/Selection.h"
#include "mscclc/runtime/StdlibPrograms.h"
#include "mscclc/runtime/TunedTable.h"
#include "mscclc/runtime/Files.h"

#include "JsonDamage.h"
#include "TestFiles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mscclc::rt;

namespace {

std::string stdlib() {
  std::string dir;
  Status s = stdlibDir(&dir);
  EXPECT_TRUE(s.isOk()) << s.message();
  return dir;
}

const SelectionTable &shipped() {
  static SelectionTable t;
  static bool loaded = false;
  if (!loaded) {
    std::string d = stdlib();
    Status s = SelectionTable::load(d + "/algorithms.json",
                                    d + "/selection.json", &t);
    EXPECT_TRUE(s.isOk()) << s.message();
    loaded = true;
  }
  return t;
}

const char *kCatalog = R"({"format": "mscclc-algorithms", "algorithms": [
  {"name": "ar", "collective": "allreduce", "ranks": [2, null], "nodes": 1,
   "params": ["K"]},
  {"name": "ar_f32", "collective": "allreduce", "nodes": [1, null], "dtypes": ["f32"],
   "ops": ["sum"], "inPlace": false},
  {"name": "bc", "collective": "broadcast", "rootParam": "root"}
]})";

Status parseTable(const std::string &table, SelectionTable *t) {
  return SelectionTable::parse(kCatalog, "cat.json", table, "t.json", t);
}

std::string tableError(const std::string &table) {
  SelectionTable t;
  Status s = parseTable(table, &t);
  EXPECT_FALSE(s.isOk()) << table;
  return s.message();
}

const std::vector<std::string> kDtypes = {"f32", "f16", "bf16", "f64", "i32",
                                          "u32", "i64", "u64", "i8",  "u8"};
const std::vector<std::string> kOps = {"sum", "prod", "min", "max", "avg"};

} // namespace

TEST(Selection, ShippedFilesParse) {
  const SelectionTable &t = shipped();
  EXPECT_FALSE(t.algorithms().empty());
  EXPECT_FALSE(t.entries().empty());
  EXPECT_EQ(t.digest().size(), 64u);
  // Every catalog algorithm is a file of the stdlib.
  for (const AlgorithmInfo &a : t.algorithms()) {
    std::string path = stdlib() + "/" + a.name + ".mscl";
    EXPECT_EQ(access(path.c_str(), R_OK), 0) << path;
  }
}

TEST(Selection, PicksFirstServingEntryBySize) {
  SelectionTable t;
  Status s = parseTable(R"({"format": "mscclc-selection", "entries": [
    {"collective": "allreduce", "bytes": [0, "1K"], "algorithm": "ar_f32",
     "source": "measured"},
    {"collective": "allreduce", "bytes": [0, "1K"], "algorithm": "ar",
     "instances": 2, "params": {"K": 3}, "source": "estimated"},
    {"collective": "allreduce", "arch": ["sm_80"], "algorithm": "ar",
     "instances": 4, "source": "estimated"},
    {"collective": "broadcast", "algorithm": "bc", "source": "estimated"}
  ]})", &t);
  ASSERT_TRUE(s.isOk()) << s.message();
  SelectionQuery q;
  q.nranks = 4;
  q.count = 256; // 1 KiB of f32: the first two entries end below it
  Selection sel;
  q.count = 255;
  ASSERT_TRUE(t.select(q, &sel).isOk());
  EXPECT_EQ(sel.describe(), "ar_f32 instances=1");
  EXPECT_EQ(sel.location, "t.json:2");
  q.dtype = "f16"; // ar_f32 refuses: the next entry serves
  ASSERT_TRUE(t.select(q, &sel).isOk());
  EXPECT_EQ(sel.describe(), "ar instances=2 K=3");
  EXPECT_EQ(sel.source, "estimated");
  q.count = 1u << 20; // no size entry; sm_90 does not match the arch entry
  s = t.select(q, &sel);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("no table entry matches"), std::string::npos)
      << s.message();
  q.arch = 80;
  ASSERT_TRUE(t.select(q, &sel).isOk());
  EXPECT_EQ(sel.instances, 4);
  // Rooted: the root becomes the algorithm's param.
  q.collective = Collective::Broadcast;
  q.root = 3;
  ASSERT_TRUE(t.select(q, &sel).isOk());
  EXPECT_EQ(sel.describe(), "bc instances=1 root=3");
  q.root = 4;
  EXPECT_EQ(t.select(q, &sel).code(), Code::InvalidArgument);
  // One rank: the builtin copy, whatever the table says.
  q.nranks = 1;
  q.root = 0;
  ASSERT_TRUE(t.select(q, &sel).isOk());
  EXPECT_TRUE(sel.builtinCopy());
  // ... but a one-rank PreMulSum scales its input: no copy serves it.
  q.collective = Collective::AllReduce;
  q.op = "premulsum";
  s = t.select(q, &sel);
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("premulsum on one rank"), std::string::npos)
      << s.message();
}

TEST(Selection, UnsupportedNamesEveryReason) {
  SelectionTable t;
  ASSERT_TRUE(parseTable(R"({"format": "mscclc-selection", "entries": [
    {"collective": "allreduce", "algorithm": "ar_f32", "source": "measured"},
    {"collective": "allreduce", "algorithm": "ar", "source": "measured"}
  ]})", &t).isOk());
  SelectionQuery q;
  q.nranks = 8;
  q.nnodes = 2;
  q.dtype = "f16";
  q.count = 10;
  Selection sel;
  Status s = t.select(q, &sel);
  ASSERT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("t.json:2: ar_f32 does not take f16"),
            std::string::npos) << s.message();
  EXPECT_NE(s.message().find("t.json:3: ar needs all ranks on one node"),
            std::string::npos) << s.message();
}

TEST(Selection, BadTablesNameFileAndLine) {
  EXPECT_EQ(tableError("{\n  \"format\": \"mscclc-selection\",\n  \"entries\": [\n    {,}\n  ]\n}")
                .rfind("t.json:4: bad JSON", 0), 0u);
  std::string head = "{\"format\": \"mscclc-selection\", \"entries\": [\n";
  auto entryError = [&](const std::string &entry) {
    return tableError(head + "  {\"collective\": \"allreduce\", \"algorithm\": \"ar\", \"source\": \"measured\"},\n  " + entry + "\n]}");
  };
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "nope", "source": "measured"})"),
            "t.json:3: algorithm 'nope' is not in cat.json");
  EXPECT_EQ(entryError(R"({"collective": "allgather", "algorithm": "ar", "source": "measured"})"),
            "t.json:3: algorithm ar computes allreduce, the entry is for allgather");
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "ar", "source": "guessed"})"),
            "t.json:3: 'source' must be \"measured\" or \"estimated\"");
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "ar", "params": {"Q": 1}, "source": "measured"})"),
            "t.json:3: ar has no tunable param 'Q'");
  EXPECT_NE(entryError(R"({"collective": "allreduce", "algorithm": "ar", "bytes": ["1M", "4K"], "source": "measured"})")
                .find("t.json:3: 'bytes' must be [min, max)"), std::string::npos);
  EXPECT_NE(entryError(R"({"collective": "allreduce", "algorithm": "ar", "bytes": [0, "4X"], "source": "measured"})")
                .find("t.json:3: 'bytes'"), std::string::npos);
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "ar", "arch": "90", "source": "measured"})"),
            "t.json:3: 'arch' must be \"sm_NN\" or a list of them");
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "ar", "instances": 0, "source": "measured"})"),
            "t.json:3: 'instances' must be an integer in [1, 64], not 0");
  EXPECT_EQ(entryError(R"({"collective": "allreduce", "algorithm": "ar", "rank": 2, "source": "measured"})"),
            "t.json:3: unknown key 'rank'");
  EXPECT_EQ(tableError(R"({"entries": []})").rfind("t.json:1: expected", 0), 0u);
  // The catalog's errors name its own file.
  SelectionTable t;
  Status s = SelectionTable::parse(
      "{\"format\": \"mscclc-algorithms\", \"algorithms\": [\n{\"name\": \"x\", \"collective\": \"allreduce\"},\n{\"name\": \"x\", \"collective\": \"allreduce\"}]}",
      "cat.json", R"({"format": "mscclc-selection", "entries": []})", "t.json", &t);
  EXPECT_EQ(s.message(), "cat.json:3: algorithm x is listed twice");
  s = SelectionTable::load("/nonexistent/algorithms.json", "/nonexistent/t.json", &t);
  EXPECT_NE(s.message().find(
                "cannot read algorithm catalog /nonexistent/algorithms.json"),
            std::string::npos)
      << s.message();
}

TEST(Selection, DigestFollowsTheText) {
  SelectionTable a, b;
  std::string t = R"({"format": "mscclc-selection", "entries": []})";
  ASSERT_TRUE(parseTable(t, &a).isOk());
  ASSERT_TRUE(parseTable(t + " ", &b).isOk());
  EXPECT_NE(a.digest(), b.digest());
}

// The sweep over every collective, rank count 1..64 on one node and over
// nodes, size, dtype, op and placement: each call gets a valid algorithm
// that supports it (the stdlib has a family for every collective on one
// node and over several).
TEST(Selection, SweepAlwaysServed) {
  const SelectionTable &t = shipped();
  std::vector<uint64_t> sizes = {0, 1, 3, 4, 1000, 4096, 65536 + 4};
  for (uint64_t b = 1 << 18; b <= (uint64_t(16) << 30); b <<= 2)
    sizes.push_back(b);
  size_t served = 0;
  for (int c = 0; c < mscclc::kNumStandardCollectives; ++c) {
    Collective coll = Collective(c);
    const std::vector<std::string> ops =
        collectiveReduces(coll) ? kOps : std::vector<std::string>{"sum"};
    for (int n = 1; n <= 64; ++n) {
      std::vector<int> shapes = {1};
      if (n > 8 && n % 8 == 0)
        shapes.push_back(n / 8);
      if (n >= 4 && n % 2 == 0)
        shapes.push_back(n / 2);
      for (int nodes : shapes)
        for (uint64_t bytes : sizes)
          for (const std::string &d : kDtypes)
            for (const std::string &op : ops)
              for (int inPlace = 0; inPlace < 2; ++inPlace) {
                SelectionQuery q;
                q.collective = coll;
                q.nranks = n;
                q.nnodes = nodes;
                q.arch = (n + int(bytes)) % 2 ? 80 : 90;
                q.count = bytes / dtypeSize(d);
                q.dtype = d;
                q.op = op;
                q.inPlace = inPlace;
                q.root = collectiveRooted(coll) ? (n - 1) / 2 : 0;
                Selection sel;
                Status s = t.select(q, &sel);
                std::string what = fmt::format(
                    "{} n={} nodes={} bytes={} {} {} inplace={}",
                    collectiveName(coll), n, nodes, bytes, d, op, inPlace);
                ASSERT_TRUE(s.isOk()) << what << ": " << s.message();
                ++served;
                if (sel.builtinCopy()) {
                  ASSERT_EQ(n, 1) << what;
                  continue;
                }
                const AlgorithmInfo *a = t.algorithm(sel.algorithm);
                ASSERT_TRUE(a) << what;
                ASSERT_EQ(a->whyNot(q), "") << what;
                ASSERT_TRUE(a->selectable) << what;
                ASSERT_GE(sel.instances, 1);
                ASSERT_LE(sel.instances, a->maxInstances);
                if (!a->rootParam.empty()) {
                  auto it = std::find_if(sel.params.begin(), sel.params.end(),
                                         [&](auto &p) { return p.first == a->rootParam; });
                  ASSERT_TRUE(it != sel.params.end() && it->second == q.root) << what;
                }
                // Deterministic: every rank asks the same and gets the same.
                Selection again;
                ASSERT_TRUE(t.select(q, &again).isOk());
                ASSERT_EQ(again.describe(), sel.describe());
              }
    }
  }
  EXPECT_GT(served, 100000u);
}

TEST(Selection, InPlaceSourceRewritesHeaderAndImports) {
  std::string out;
  ASSERT_TRUE(stdlibInPlaceSource(
                  "import \"common.mscl\";\n// algorithm in a comment\n"
                  "algorithm a : allgather(chunks = min(2, K)) {\n}\n",
                  "/lib", "a.mscl", &out)
                  .isOk());
  EXPECT_EQ(out, "import \"/lib/common.mscl\";\n// algorithm in a comment\n"
                 "algorithm a : allgather(chunks = min(2, K), inplace) {\n}\n");
  ASSERT_TRUE(stdlibInPlaceSource("algorithm b : allreduce {\n}\n", "/lib",
                                  "b.mscl", &out).isOk());
  EXPECT_EQ(out, "algorithm b : allreduce(inplace) {\n}\n");
  EXPECT_FALSE(stdlibInPlaceSource("fn f() {}\n", "/lib", "c.mscl", &out).isOk());
}

// The catalog mirrors the files' `require`s: compile each algorithm where
// the catalog says it serves and where it says it does not.
TEST(Selection, CatalogAgreesWithRequires) {
  const char *compiler = getenv("MSCCLC_COMPILER");
  if (!compiler || !*compiler)
    GTEST_SKIP() << "MSCCLC_COMPILER is not set";
  const SelectionTable &t = shipped();
  struct Shape { int ranks, gpn; };
  for (const AlgorithmInfo &a : t.algorithms())
    for (Shape sh : {Shape{2, 0}, Shape{3, 0}, Shape{8, 0}, Shape{8, 4}}) {
      int nodes = sh.gpn ? sh.ranks / sh.gpn : 1;
      SelectionQuery q;
      q.collective = a.collective;
      q.nranks = sh.ranks;
      q.nnodes = nodes;
      AlgorithmInfo any = a;
      any.selectable = true; // never chosen, but still compiled here
      bool serves = any.whyNot(q).empty();
      std::vector<std::string> args = {stdlib() + "/" + a.name + ".mscl",
                                       "--ranks", std::to_string(sh.ranks),
                                       "--emit=plan"};
      if (sh.gpn)
        args.insert(args.end(), {"--gpus-per-node", std::to_string(sh.gpn)});
      std::string out, err;
      int code = -1;
      Status run = runProcess(compiler, args, &out, &err, &code);
      ASSERT_TRUE(run.isOk()) << run.message();
      if (serves) {
        EXPECT_EQ(code, 0) << a.name << " " << sh.ranks << "/" << sh.gpn << ": " << err;
        Plan plan;
        if (code == 0) {
          ASSERT_TRUE(parsePlan(out, &plan).isOk());
          EXPECT_EQ(plan.collective, a.collective) << a.name;
          for (const std::string &d : a.dtypes)
            EXPECT_TRUE(plan.supportsDtype(d)) << a.name << " " << d;
        }
      } else {
        EXPECT_NE(code, 0) << a.name << " " << sh.ranks << "/" << sh.gpn
                           << " compiles where the catalog says it does not serve";
        EXPECT_NE(err.find("requirement failed"), std::string::npos) << err;
      }
    }
}

// The agreement every rank reaches from the exchanged table hashes and
// shapes (stdlibSetUp without the bootstrap).
TEST(Selection, RanksRefuseDifferentTables) {
  const SelectionTable &t = shipped();
  auto info = [&](const std::string &digest, int gpn, int arch) {
    StdlibPeerInfo i;
    memset(&i, 0, sizeof(i));
    memcpy(i.digest, digest.data(), std::min(digest.size(), sizeof(i.digest)));
    i.gpusPerNode = gpn;
    i.arch = arch;
    i.loaded = 1;
    return i;
  };
  std::string same = t.digest(), other(64, 'f');
  StdlibState st;
  stdlibAgree({info(same, 4, 90), info(same, 4, 80), info(same, 4, 90),
               info(same, 4, 90)}, 1, Status::ok(), &t, &st);
  EXPECT_TRUE(st.agreed.isOk()) << st.agreed.message();
  EXPECT_EQ(st.arch, 90); // rank 0's, on every rank
  EXPECT_EQ(st.gpusPerNode, 4);
  EXPECT_EQ(st.nnodes, 1);
  EXPECT_EQ(st.table, &t);
  // Rank 2's table differs: rank 0 and rank 2 both refuse, naming hashes.
  std::vector<StdlibPeerInfo> all = {info(same, 2, 90), info(same, 2, 90),
                                     info(other, 2, 90), info(same, 2, 90)};
  stdlibAgree(all, 0, Status::ok(), &t, &st);
  ASSERT_FALSE(st.agreed.isOk());
  EXPECT_NE(st.agreed.message().find("rank 2's stdlib selection table (hash ffffffffffffffff) differs from rank 0's (hash " + same.substr(0, 16) + ")"),
            std::string::npos) << st.agreed.message();
  EXPECT_EQ(st.nnodes, 2);
  stdlibAgree(all, 2, Status::ok(), &t, &st);
  ASSERT_FALSE(st.agreed.isOk());
  EXPECT_NE(st.agreed.message().find("rank 0's stdlib selection table"),
            std::string::npos) << st.agreed.message();
  // Irregular shapes: every rank a node of its own.
  stdlibAgree({info(same, 2, 90), info(same, -1, 90), info(same, 2, 90)}, 0,
              Status::ok(), &t, &st);
  EXPECT_EQ(st.gpusPerNode, 1);
  EXPECT_EQ(st.nnodes, 3);
  // A rank that could not load the table makes everyone refuse; the rank
  // itself reports its own error.
  all[2].loaded = 0;
  stdlibAgree(all, 0, Status::ok(), &t, &st);
  EXPECT_NE(st.agreed.message().find("rank 2 could not load"), std::string::npos);
  stdlibAgree(all, 2, invalidArgument("selection.json:3: bad JSON"), nullptr, &st);
  EXPECT_EQ(st.agreed.message(), "selection.json:3: bad JSON");
  EXPECT_EQ(st.agreed.code(), Code::Unsupported); // callers fall back alike
  EXPECT_EQ(st.table, nullptr);
}

namespace {
/// Runs `f` in a child process (the table is loaded once per process) and
/// returns what it wrote.
std::string inChild(const std::function<std::string()> &f) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string s = f();
    ssize_t w = write(fds[1], s.data(), s.size());
    _exit(w == ssize_t(s.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}
} // namespace

// MSCCLC_SELECTION_TABLE replaces the shipped table; its errors name the
// user's file and line. MSCCLC_STDLIB_DIR must be a directory.
TEST(Selection, EnvironmentOverrides) {
  std::string path = testing::TempDir() + "/mscclc-user-table.json";
  {
    std::ofstream f(path);
    f << "{\"format\": \"mscclc-selection\", \"entries\": [\n"
         "  {\"collective\": \"allreduce\", \"algorithm\": \"allreduce_2pa_hb\",\n"
         "   \"instances\": 2, \"source\": \"measured\"},\n"
         "  {\"collective\": \"allreduce\", \"algorithm\": \"allreduce_9pa\", \"source\": \"measured\"}\n"
         "]}\n";
  }
  std::string msg = inChild([&] {
    setenv("MSCCLC_SELECTION_TABLE", path.c_str(), 1);
    const SelectionTable *t = nullptr;
    Status s = processSelectionTable(&t);
    return s.message();
  });
  EXPECT_EQ(msg.rfind(path + ":4: algorithm 'allreduce_9pa' is not in ", 0), 0u) << msg;
  {
    std::ofstream f(path);
    f << "{\"format\": \"mscclc-selection\", \"entries\": [\n"
         "  {\"collective\": \"allreduce\", \"algorithm\": \"allreduce_2pa_hb\",\n"
         "   \"instances\": 2, \"source\": \"measured\"}\n"
         "]}\n";
  }
  msg = inChild([&] {
    setenv("MSCCLC_SELECTION_TABLE", path.c_str(), 1);
    const SelectionTable *t = nullptr;
    Status s = processSelectionTable(&t);
    if (!s.isOk())
      return s.message();
    SelectionQuery q;
    q.nranks = 4;
    q.count = 1 << 20;
    Selection sel;
    s = t->select(q, &sel);
    return s.isOk() ? sel.describe() : s.message();
  });
  EXPECT_EQ(msg, "allreduce_2pa_hb instances=2");
  msg = inChild([&] {
    setenv("MSCCLC_STDLIB_DIR", "/nonexistent/stdlib", 1);
    std::string dir;
    return stdlibDir(&dir).message();
  });
  EXPECT_EQ(msg, "MSCCLC_STDLIB_DIR='/nonexistent/stdlib' is not a directory");
  unlink(path.c_str());
}

// A block limit (mscclcCommSetMaxBlocks, the NCCL library's maxCTAs) takes
// instances away from the table's choice until its kernels fit.
TEST(Selection, BlockLimitTakesInstancesAway) {
  const char *compiler = getenv("MSCCLC_COMPILER");
  if (!compiler || !*compiler)
    GTEST_SKIP() << "MSCCLC_COMPILER is not set";
  StdlibState state;
  state.agreed = Status::ok();
  state.table = &shipped();
  state.arch = 90;
  SelectionQuery q;
  q.collective = Collective::AllReduce;
  q.nranks = 2;
  q.arch = 90;
  q.count = size_t(1) << 20; // 4 MiB of f32: an HB all-pairs of many instances
  q.dtype = "f32";
  auto blocksOf = [](const Program &p) {
    int b = 0;
    for (const RankPlan &rp : p.plan().rankPlans)
      b = std::max(b, int(rp.blocks));
    return b;
  };
  const StdlibChoice *free = nullptr;
  Status s = stdlibResolve(state, q, &free);
  ASSERT_TRUE(s.isOk()) << s.message();
  int unlimited = blocksOf(*free->program);
  int instances = free->selection.instances;
  ASSERT_GT(instances, 2) << free->selection.describe() << ": pick a larger count";

  int limit = unlimited / 2;
  state.maxBlocks = limit;
  const StdlibChoice *fitted = nullptr;
  s = stdlibResolve(state, q, &fitted);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(fitted->selection.algorithm, free->selection.algorithm);
  EXPECT_LT(fitted->selection.instances, instances);
  EXPECT_LE(blocksOf(*fitted->program), limit) << fitted->selection.describe();

  // Every stdlib algorithm runs one block per instance, so no limit of at
  // least 1 leaves a call unsupported.
  state.maxBlocks = 1;
  const StdlibChoice *single = nullptr;
  s = stdlibResolve(state, q, &single);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(single->selection.instances, 1);
  EXPECT_EQ(blocksOf(*single->program), 1);
  // The limit is part of the memo's key: lifting it gives the first choice.
  state.maxBlocks = 0;
  const StdlibChoice *again = nullptr;
  ASSERT_TRUE(stdlibResolve(state, q, &again).isOk());
  EXPECT_EQ(again->selection.instances, instances);
}

// The tuner's table: the fastest candidate per measured size, merged into
// ranges, for the measured shape only, then the shipped entries.
TEST(Selection, TunedTableServesTheMeasuredWinners) {
  std::string d = stdlib();
  std::string catalog, base;
  ASSERT_TRUE(readFile(d + "/algorithms.json", &catalog).isOk());
  ASSERT_TRUE(readFile(d + "/selection.json", &base).isOk());
  auto sample = [](const char *algo, int inst, uint64_t bytes, double us) {
    TuneSample s;
    s.algorithm = algo;
    s.instances = inst;
    s.bytes = bytes;
    s.microseconds = us;
    return s;
  };
  std::vector<TuneSample> samples = {
      sample("allreduce_1pa", 1, 1024, 5), sample("allreduce_2pa_hb", 8, 1024, 9),
      sample("allreduce_1pa", 1, 4096, 6), sample("allreduce_2pa_hb", 8, 4096, 9),
      sample("allreduce_1pa", 1, 65536, 20), sample("allreduce_2pa_hb", 8, 65536, 12),
      sample("allreduce_2pa_hb", 8, 1 << 20, 40), sample("allreduce_2pa_hb", 32, 1 << 20, 30),
      sample("allreduce_2pa_hb", 32, 16 << 20, 200)};
  TuneShape shape;
  shape.ranks = 4;
  shape.arch = 80;
  shape.note = "test";
  std::string text;
  Status s = tunedSelectionTable(base, shape, samples, &text);
  ASSERT_TRUE(s.isOk()) << s.message();
  SelectionTable t;
  s = SelectionTable::parse(catalog, "algorithms.json", text, "tuned.json", &t);
  ASSERT_TRUE(s.isOk()) << s.message() << "\n" << text;
  auto pick = [&](uint64_t bytes, int ranks, int arch) {
    SelectionQuery q;
    q.nranks = ranks;
    q.arch = arch;
    q.count = bytes / 4;
    Selection sel;
    Status r = t.select(q, &sel);
    EXPECT_TRUE(r.isOk()) << r.message();
    return fmt::format("{} {}", sel.algorithm, sel.instances);
  };
  EXPECT_EQ(pick(512, 4, 80), "allreduce_1pa 1");
  EXPECT_EQ(pick(32768, 4, 80), "allreduce_1pa 1");
  EXPECT_EQ(pick(65536, 4, 80), "allreduce_2pa_hb 8");
  EXPECT_EQ(pick(1 << 20, 4, 80), "allreduce_2pa_hb 32");
  EXPECT_EQ(pick(uint64_t(1) << 30, 4, 80), "allreduce_2pa_hb 32");
  // Other shapes keep the shipped table's choice.
  Selection shippedChoice;
  SelectionQuery other;
  other.nranks = 4;
  other.arch = 90;
  other.count = 512 / 4;
  ASSERT_TRUE(shipped().select(other, &shippedChoice).isOk());
  EXPECT_EQ(pick(512, 4, 90),
            fmt::format("{} {}", shippedChoice.algorithm, shippedChoice.instances));
  EXPECT_EQ(t.entries().size(), shipped().entries().size() + 3);

  // Nothing measured, or a time that is no time: no table.
  EXPECT_EQ(tunedSelectionTable(base, shape, {}, &text).code(), Code::InvalidArgument);
  samples[0].microseconds = 0;
  EXPECT_EQ(tunedSelectionTable(base, shape, samples, &text).code(), Code::InvalidArgument);
}

//===----------------------------------------------------------------------===//
// Damaged tables: the shipped catalog and table, damaged one field at a
// time, are each refused with the file, the line and the field. A
// "format" or "source" of another type aborted on an uncaught exception;
// rank counts past 2^31 wrapped into small ones and were accepted.
//===----------------------------------------------------------------------===//

namespace {

using Json = nlohmann::ordered_json;

using TableDamage = mscclc::test::JsonDamage<Json>;

TableDamage without(std::string pointer, std::string needle) {
  return mscclc::test::removedField<Json>(std::move(pointer), std::move(needle));
}

/// Damages the catalog (`inCatalog`) or the table; each must be refused
/// with the needle, naming the damaged file.
void expectTablesRefused(bool inCatalog, const std::vector<TableDamage> &all) {
  std::string d = stdlib();
  std::string catalog, table;
  ASSERT_TRUE(readFile(d + "/algorithms.json", &catalog).isOk());
  ASSERT_TRUE(readFile(d + "/selection.json", &table).isOk());
  Json good = Json::parse(inCatalog ? catalog : table);
  for (const TableDamage &dmg : all) {
    std::string text = mscclc::test::damaged(good, dmg).dump(1);
    SelectionTable t;
    Status s = inCatalog
                   ? SelectionTable::parse(text, "algorithms.json", table,
                                           "selection.json", &t)
                   : SelectionTable::parse(catalog, "algorithms.json", text,
                                           "selection.json", &t);
    std::string what = dmg.describe();
    EXPECT_FALSE(s.isOk()) << what << ": accepted";
    EXPECT_NE(s.message().find(dmg.needle), std::string::npos)
        << what << ": want '" << dmg.needle << "' in: " << s.message();
    EXPECT_EQ(s.message().rfind(inCatalog ? "algorithms.json:" : "selection.json:", 0), 0u)
        << what << ": names the file and line: " << s.message();
  }
}

const Json kBig = uint64_t(1) << 32;

} // namespace

TEST(SelectionDamage, TableEntries) {
  expectTablesRefused(
      false,
      {
          {"/format", 5, "expected {\"format\": \"mscclc-selection\""},
          {"/format", "mscclc-algorithms", "expected {\"format\": \"mscclc-selection\""},
          {"/entries", Json::object(), "\"entries\": [...]"},
          {"/entries/0", 5, "an entry must be an object"},
          {"/entries/0/source", 5, "'source' must be \"measured\" or \"estimated\""},
          {"/entries/0/source", "guessed", "'source' must be"},
          {"/entries/0/collective", "foo", "'collective' must name a collective"},
          {"/entries/0/collective", 0, "'collective' must name a collective"},
          {"/entries/0/ranks", uint64_t(1) << 32 | 2, "'ranks' must be n or [min, max]"},
          {"/entries/0/ranks", Json::array({1, uint64_t(1) << 32 | 8}), "'ranks' must be"},
          {"/entries/0/ranks", Json::array({3, 2}), "'ranks' must be"},
          {"/entries/0/ranks", 0, "'ranks' must be"},
          {"/entries/0/ranks", -1, "'ranks' must be"},
          {"/entries/0/ranks", 65537, "'ranks' must be"},
          {"/entries/0/ranks", 2.5, "'ranks' must be"},
          {"/entries/0/nodes", Json::array({0, nullptr}), "'nodes' must be"},
          {"/entries/0/arch", "sm_x", "'arch' must be \"sm_NN\""},
          {"/entries/0/arch", "sm_-5", "'arch' must be"},
          {"/entries/0/arch", Json::array({"sm_90", 5}), "'arch' must be"},
          {"/entries/0/bytes", Json::array({5, 5}), "'bytes' must be [min, max)"},
          {"/entries/0/bytes", Json::array({0}), "'bytes' must be"},
          {"/entries/0/bytes", Json::array({"-1", "2M"}), "'bytes' must be"},
          {"/entries/0/bytes", Json::array({0, "32Q"}), "'bytes' must be"},
          {"/entries/0/bytes", Json::array({0, "99999999999T"}), "'bytes' must be"},
          {"/entries/0/bytes", Json::array({nullptr, 5}), "'bytes' must be"},
          {"/entries/0/algorithm", "nope", "algorithm 'nope' is not in algorithms.json"},
          {"/entries/0/algorithm", 5, "'algorithm' is required"},
          {"/entries/0/algorithm", "allgather_ring",
           "algorithm allgather_ring computes allgather, the entry is for allreduce"},
          {"/entries/0/instances", 0, "'instances' must be an integer in [1, 64], not 0"},
          {"/entries/0/instances", kBig, "'instances' must be an integer in [1, 64], not 4294967296"},
          {"/entries/0/instances", uint64_t(1) << 63,
           "'instances' must be an integer in [1, 64], not 9223372036854775808"},
          {"/entries/0/params", Json::object({{"K", 1}}), "allreduce_1pa has no tunable param 'K'"},
          {"/entries/8/params", Json::object({{"UNIT", uint64_t(1) << 63}}),
           "param 'UNIT' must be an integer in [-9223372036854775808, "
           "9223372036854775807], not 9223372036854775808"},
          {"/entries/8/params", Json::object({{"UNIT", "1"}}), "param 'UNIT' must be an integer"},
          {"/entries/8/params", 5, "'params' must be an object of integers"},
          {"/entries/0/typo", 1, "unknown key 'typo'"},
          without("/entries/0/algorithm", "'algorithm' is required"),
          without("/entries/0/collective", "'collective' must name a collective"),
          without("/entries/0/source", "'source' must be"),
      });
}

TEST(SelectionDamage, CatalogAlgorithms) {
  expectTablesRefused(
      true,
      {
          {"/format", 5, "expected {\"format\": \"mscclc-algorithms\""},
          {"/algorithms", 5, "expected {\"format\": \"mscclc-algorithms\""},
          {"/algorithms/0", "x", "an algorithm must be an object"},
          {"/algorithms/0/name", "", "'name' (a string) is required"},
          {"/algorithms/0/name", 5, "'name' (a string) is required"},
          {"/algorithms/1/name", "allreduce_1pa", "algorithm allreduce_1pa is listed twice"},
          {"/algorithms/0/collective", "foo", "'collective' must name a collective"},
          {"/algorithms/0/ranks", uint64_t(1) << 32 | 2, "'ranks' must be n or [min, max]"},
          {"/algorithms/0/ranks", Json::array({2, uint64_t(1) << 32 | 2}), "'ranks' must be"},
          {"/algorithms/0/nodes", Json::array({0, 1}), "'nodes' must be"},
          {"/algorithms/0/dtypes", Json::array({"f8zz"}), "'dtypes' names unknown 'f8zz'"},
          {"/algorithms/0/dtypes", "f32", "'dtypes' must be an array of strings"},
          {"/algorithms/0/ops", Json::array({"xor"}), "'ops' names unknown 'xor'"},
          {"/algorithms/0/maxInstances", 0, "'maxInstances' must be an integer in [1, 1024], not 0"},
          {"/algorithms/0/maxInstances", kBig, "'maxInstances' must be an integer in [1, 1024]"},
          {"/algorithms/0/countMultiple", 0, "'countMultiple' must be an integer in [1, 1073741824]"},
          {"/algorithms/0/inPlace", "yes", "'inPlace' must be true or false"},
          {"/algorithms/0/rootParam", 5, "'rootParam' must be a string"},
          {"/algorithms/0/params", Json::array({5}), "'params' must be an array of strings"},
          {"/algorithms/0/typo", 1, "unknown key 'typo'"},
          without("/algorithms/0/name", "'name' (a string) is required"),
          without("/algorithms/0/collective", "'collective' must name a collective"),
      });
}

// Nesting is bounded before parsing: the tuner prints the table again.
TEST(SelectionDamage, DeepNestingIsRefused) {
  std::string deep = "{\"format\": \"mscclc-selection\", \"entries\": [], \"note\": " +
                     std::string(100000, '[') + std::string(100000, ']') + "}";
  SelectionTable t;
  Status s = SelectionTable::parse(kCatalog, "cat.json", deep, "t.json", &t);
  EXPECT_NE(s.message().find("t.json: JSON nested 100001 deep, more than the limit of 64"),
            std::string::npos)
      << s.message();
  std::string text;
  TuneShape shape;
  shape.ranks = 2;
  shape.arch = 90;
  TuneSample sample;
  sample.algorithm = "ar";
  sample.bytes = 1;
  sample.microseconds = 1;
  s = tunedSelectionTable(deep, shape, {sample}, &text);
  EXPECT_NE(s.message().find("nests JSON 100001 deep"), std::string::npos)
      << s.message();
}

// A base table whose note is no string threw out of the tuner.
TEST(SelectionDamage, TunedTableTakesAnyBaseNote) {
  TuneShape shape;
  shape.ranks = 2;
  shape.arch = 90;
  TuneSample sample;
  sample.algorithm = "ar";
  sample.bytes = 1;
  sample.microseconds = 1;
  std::string text;
  for (const char *note : {"5", "[1]", "null", "{\"a\": 1}"}) {
    std::string base = std::string("{\"format\": \"mscclc-selection\", \"note\": ") +
                       note + ", \"entries\": []}";
    Status s = tunedSelectionTable(base, shape, {sample}, &text);
    EXPECT_TRUE(s.isOk()) << note << ": " << s.message();
  }
  EXPECT_EQ(tunedSelectionTable("[]", shape, {sample}, &text).code(),
            Code::InvalidArgument);
}

// The files themselves: a directory, a FIFO or /dev/zero is refused at
// once, and a table over its limit is refused naming the limit.
TEST(SelectionDamage, TableFilesAreRegularAndBounded) {
  std::string d = stdlib();
  mscclc::test::TempDir tmp("mscclc-selection-test");
  SelectionTable t;
  Status s = SelectionTable::load(d + "/algorithms.json", "/dev/zero", &t);
  EXPECT_NE(s.message().find("selection table /dev/zero is a character device, "
                             "not a regular file"),
            std::string::npos)
      << s.message();
  s = SelectionTable::load(tmp.path(), d + "/selection.json", &t);
  EXPECT_NE(s.message().find("algorithm catalog " + tmp.path() + " is a directory"),
            std::string::npos)
      << s.message();
  ASSERT_EQ(mkfifo((tmp / "fifo").c_str(), 0600), 0);
  s = SelectionTable::load(d + "/algorithms.json", tmp / "fifo", &t);
  EXPECT_NE(s.message().find("is a FIFO"), std::string::npos) << s.message();
  { std::ofstream big(tmp / "big.json"); }
  ASSERT_EQ(truncate((tmp / "big.json").c_str(), (16 << 20) + 1), 0);
  s = SelectionTable::load(d + "/algorithms.json", tmp / "big.json", &t);
  EXPECT_NE(s.message().find("more than the limit of 16 MiB for a selection table"),
            std::string::npos)
      << s.message();
}
