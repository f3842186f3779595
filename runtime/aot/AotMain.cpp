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
#include "mscclc/runtime/StdlibPrograms.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace mscclc::rt;

namespace {

int usage() {
  fprintf(stderr,
          "usage: mscclc-aot --out DIR [--archs 80,90,100] [--ranks 2,4,8] "
          "[--dtypes f32,f16,bf16] [--ops sum] [--roots 0|all] "
          "[--node-shapes 2x8|none] [--jobs N] [--list]\n");
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

bool parseInts(const std::string &text, std::vector<int> *out) {
  out->clear();
  for (const std::string &s : splitList(text)) {
    char *end = nullptr;
    long v = strtol(s.c_str(), &end, 10);
    if (*end || v <= 0)
      return false;
    out->push_back(int(v));
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
    int nodes = 0, perNode = 0;
    char tail = 0;
    if (sscanf(s.c_str(), "%dx%d%c", &nodes, &perNode, &tail) != 2 ||
        nodes < 2 || perNode < 1)
      return false;
    out->emplace_back(nodes, perNode);
  }
  return true;
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list") {
      list = true;
      continue;
    }
    if (i + 1 >= argc)
      return usage();
    std::string v = argv[++i];
    bool ok = true;
    if (a == "--out")
      outDir = v;
    else if (a == "--archs")
      ok = parseInts(v, &config.archs);
    else if (a == "--ranks")
      ok = parseInts(v, &config.ranks);
    else if (a == "--dtypes")
      config.dtypes = splitList(v);
    else if (a == "--ops")
      config.ops = splitList(v);
    else if (a == "--roots") {
      ok = v == "all" || v == "0";
      config.everyRoot = v == "all";
    } else if (a == "--node-shapes")
      ok = parseShapes(v, &config.nodeShapes);
    else if (a == "--jobs")
      jobs = atoi(v.c_str());
    else
      ok = false;
    if (!ok)
      return usage();
  }
  if ((outDir.empty() && !list) || config.dtypes.empty() || config.ops.empty())
    return usage();
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
