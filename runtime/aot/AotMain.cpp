//===- AotMain.cpp - mscclc-aot: writes the ahead-of-time kernel store ----===//
//
// mscclc-aot --out DIR [--archs 80,90,100] [--ranks 2,4,8]
//            [--dtypes f32,f16,bf16] [--ops sum] [--roots 0|all]
//            [--node-shapes 2x8] [--jobs N] [--list]
//
// --roots all ships rooted collectives for every root, not only root 0;
// --node-shapes adds multi-node shapes (nodes x GPUs per node, "none" for
// none) to one node of each --ranks.
//
// --list prints what would be built (key, then what) and compiles nothing
// but the programs (the compiler's runs).
//
// Compiles the shipped selection table's picks (AotBuild.h) into DIR, the
// store libmscclc reads before its kernel cache and NVRTC. The stdlib is
// MSCCLC_STDLIB_DIR's (else the source tree's); the compiler MSCCLC_COMPILER
// (else next to this tool, else PATH). A user's MSCCLC_SELECTION_TABLE is
// ignored: the store is for the table that ships.
//
//===----------------------------------------------------------------------===//

#include "AotBuild.h"
#include "mscclc/floor/Tables.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/StdlibPrograms.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace mscclc::rt;

namespace {

constexpr const char *kUsage =
    "usage: mscclc-aot --out DIR [--archs 80,90,100] [--ranks 2,4,8] "
    "[--dtypes f32,f16,bf16] [--ops sum] [--roots 0|all] "
    "[--node-shapes 2x8|none] [--jobs N] [--list]\n";

int usage() {
  fputs(kUsage, stderr);
  return 2;
}

/// A bad option: one line naming it, its value and what it accepts.
int badOption(const std::string &option, const std::string &value,
              const std::string &accepted) {
  fprintf(stderr, "mscclc-aot: %s '%s': %s\n", option.c_str(), value.c_str(),
          accepted.c_str());
  return 2;
}

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  // CMake lists arrive as "a;b", command lines as "a,b".
  while (std::getline(ss, item, ',')) {
    std::stringstream inner(item);
    std::string part;
    while (std::getline(inner, part, ';'))
      if (!part.empty())
        items.push_back(part);
  }
  return items;
}

/// One decimal integer in [lo, hi], all of `text`.
bool parseInt(const std::string &text, long lo, long hi, int *out) {
  if (text.empty() || !isdigit(static_cast<unsigned char>(text[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  long v = strtol(text.c_str(), &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  *out = int(v);
  return true;
}

/// A non-empty list of integers in [lo, hi].
bool parseInts(const std::string &text, long lo, long hi,
               std::vector<int> *out) {
  out->clear();
  for (const std::string &s : splitList(text)) {
    int v = 0;
    if (!parseInt(s, lo, hi, &v))
      return false;
    out->push_back(v);
  }
  return !out->empty();
}

/// "2x8,4x8" (nodes x GPUs per node); "" or "none" for none.
bool parseShapes(const std::string &text,
                 std::vector<std::pair<int, int>> *out) {
  out->clear();
  for (const std::string &s : splitList(text)) {
    if (s == "none")
      continue;
    size_t x = s.find('x');
    int nodes = 0, perNode = 0;
    if (x == std::string::npos ||
        !parseInt(s.substr(0, x), 2, mscclc::limits::kMaxRanks, &nodes) ||
        !parseInt(s.substr(x + 1), 1, mscclc::limits::kMaxRanks, &perNode) ||
        long(nodes) * perNode > mscclc::limits::kMaxRanks)
      return false;
    out->emplace_back(nodes, perNode);
  }
  return true;
}

/// "" where every item of `list` names a row of a floor table (`rows`,
/// found by `lookup`), else what is accepted.
template <class Rows, class Lookup>
std::string unknownNames(const std::vector<std::string> &list,
                         const Rows &rows, Lookup lookup) {
  bool known = !list.empty();
  for (const std::string &item : list)
    known = known && lookup(item).has_value();
  if (known)
    return "";
  std::string names;
  for (const auto &row : rows)
    names += (names.empty() ? "" : ", ") + std::string(row.name);
  return "expected a list of " + names;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  AotConfig config;
  std::string outDir;
  int jobs = 2;
  bool list = false;
  const std::string maxRanks = std::to_string(mscclc::limits::kMaxRanks);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list") {
      list = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      return 0;
    }
    bool known = a == "--out" || a == "--archs" || a == "--ranks" ||
                 a == "--dtypes" || a == "--ops" || a == "--roots" ||
                 a == "--node-shapes" || a == "--jobs";
    if (!known) {
      fprintf(stderr, "mscclc-aot: unknown option '%s'\n", a.c_str());
      return usage();
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "mscclc-aot: %s needs a value\n", a.c_str());
      return usage();
    }
    std::string v = argv[++i];
    std::string accepted;
    if (a == "--out") {
      outDir = v;
      if (v.empty())
        accepted = "expected a folder";
    } else if (a == "--archs") {
      if (!parseInts(v, 10, 999, &config.archs))
        accepted = "expected a list of compute capabilities, e.g. 80,90,100";
    } else if (a == "--ranks") {
      if (!parseInts(v, 1, mscclc::limits::kMaxRanks, &config.ranks))
        accepted = "expected a list of rank counts from 1 to " + maxRanks +
                   ", e.g. 2,4,8";
    } else if (a == "--dtypes") {
      config.dtypes = splitList(v);
      accepted = unknownNames(config.dtypes, mscclc::kDataTypes,
                              mscclc::lookupDataType);
    } else if (a == "--ops") {
      config.ops = splitList(v);
      accepted = unknownNames(config.ops, mscclc::kRedOps,
                              mscclc::lookupRedOp);
    } else if (a == "--roots") {
      if (v != "all" && v != "0")
        accepted = "expected 0 (root 0 only) or all";
      config.everyRoot = v == "all";
    } else if (a == "--node-shapes") {
      if (!parseShapes(v, &config.nodeShapes))
        accepted = "expected none or a list of NODESxGPUS (2 or more nodes, "
                   "at most " + maxRanks + " ranks), e.g. 2x8,4x8";
    } else if (a == "--jobs") {
      if (!parseInt(v, 1, 1024, &jobs))
        accepted = "expected a number of compiler jobs from 1 to 1024";
    }
    if (!accepted.empty())
      return badOption(a, v, accepted);
  }
  if (outDir.empty() && !list) {
    fprintf(stderr, "mscclc-aot: --out DIR is required (or --list)\n");
    return usage();
  }
  unsetenv("MSCCLC_SELECTION_TABLE");
  // The compiler's bundles, not those of a store (perhaps the one being
  // rebuilt, found beside this tool) written by an older compiler.
  setenv("MSCCLC_AOT", "0", 1);

  auto start = std::chrono::steady_clock::now();
  const SelectionTable *table = nullptr;
  Status s = processSelectionTable(&table);
  std::vector<AotKernel> kernels;
  std::vector<AotBundle> bundles;
  if (s.isOk())
    s = aotKernels(*table, config, &kernels, &bundles);
  if (!s.isOk()) {
    fprintf(stderr, "mscclc-aot: %s\n", s.message().c_str());
    return 1;
  }
  double selectSeconds = secondsSince(start);
  if (list) {
    for (const AotKernel &k : kernels)
      printf("%s\t%s\n", k.key.c_str(), k.what.c_str());
    for (const AotBundle &b : bundles)
      printf("%s\tprogram %s\n", b.key.c_str(), b.what.c_str());
    size_t bundleBytes = 0;
    for (const AotBundle &b : bundles)
      bundleBytes += b.bundle.size();
    printf("mscclc-aot: %zu kernels of %zu programs (bundles %.1f KB); %.1f s "
           "selecting and generating\n",
           kernels.size(), bundles.size(), bundleBytes / 1e3, selectSeconds);
    return 0;
  }
  AotBuildStats stats;
  s = buildAotStore(kernels, bundles, AotStore(outDir), jobs, &stats);
  if (!s.isOk()) {
    fprintf(stderr, "mscclc-aot: %s\n", s.message().c_str());
    return 1;
  }
  printf("mscclc-aot: %zu kernels and %zu program bundles in %s (%.1f MB): "
         "%zu compiled, %zu kept, %zu removed; %.1f s selecting and "
         "generating, %.1f s in all (%d jobs)\n",
         kernels.size(), stats.bundles, outDir.c_str(), stats.bytes / 1e6,
         stats.compiled, stats.kept, stats.removed, selectSeconds,
         secondsSince(start), jobs);
  return 0;
}
