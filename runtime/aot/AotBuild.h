//===- AotBuild.h - Compiling the selection table's picks ahead of time -===//
//
// What the build compiles into the ahead-of-time store (AotStore.h): for
// every configured architecture, rank count, dtype and op, every algorithm
// the shipped selection table picks for some size, in place and out of
// place, for every root of rooted collectives (or root 0 only), on one
// node and on the configured multi-node shapes: each rank's cubin, and
// the program's bundle (CUDA source and plan), so that a first call runs
// neither the compiler nor NVRTC. Picks are found by
// resolving queries exactly as mscclcRunCollective does (stdlibResolve:
// selection, the compiler run, the staged variant), and each rank's kernel
// is described by Program::compileRequest, so the keys written here are
// the keys the loader looks up.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_AOT_AOTBUILD_H
#define MSCCLC_AOT_AOTBUILD_H

#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Selection.h"

#include <string>
#include <utility>
#include <vector>

namespace mscclc::rt {

struct AotConfig {
  std::vector<int> archs = {80, 90, 100};
  std::vector<int> ranks = {2, 4, 8};
  std::vector<std::string> dtypes = {"f32", "f16", "bf16"};
  std::vector<std::string> ops = {"sum"};
  /// Every root of the rooted collectives (broadcast, reduce, gather,
  /// scatter); false: root 0 only. The root is a param of their programs,
  /// so each root is a program (and a kernel per rank) of its own: at 2, 4
  /// and 8 ranks every root makes about 3.2 times the kernels.
  bool everyRoot = false;
  /// Multi-node shapes, (nodes, GPUs per node), beside one node of each
  /// of `ranks`: two nodes of 8 GPUs by default.
  std::vector<std::pair<int, int>> nodeShapes = {{2, 8}};
};

/// One kernel to build: a rank's cubin of one pick.
struct AotKernel {
  std::string key; ///< kernelKey(request)
  CompileRequest request;
  std::string what; ///< "allreduce_1pa instances=1, 2 ranks, rank 0, f32 sum, sm_90"
};

/// One program to ship: a pick's compiled bundle.
struct AotBundle {
  std::string key;    ///< stdlibProgramKey
  std::string bundle; ///< Program::bundleJson
  std::string what;   ///< "allreduce_1pa instances=1 in place, 2 ranks"
};

/// The distinct kernels (sorted by key) of the table's picks under
/// `config`, and the bundles of every program their resolution needed (the
/// picks, and in-place variants that run staged out of place). Runs the compiler once per distinct program, unless the
/// process's ahead-of-time store has its bundle: mscclc-aot sets
/// MSCCLC_AOT=0, so that a stale bundle of the store being rebuilt never
/// stands in for the compiler's output.
Status aotKernels(const SelectionTable &table, const AotConfig &config,
                  std::vector<AotKernel> *out,
                  std::vector<AotBundle> *bundles);

/// The counts in a size sweep of `q`'s collective that reach every range
/// of the table: each entry's bounds, powers of two, and their neighbours
/// (which alignment requirements send elsewhere).
std::vector<uint64_t> aotSweepCounts(const SelectionTable &table,
                                     const SelectionQuery &q);

struct AotBuildStats {
  size_t compiled = 0; ///< NVRTC runs
  size_t kept = 0;     ///< valid kernel entries already in the store
  size_t removed = 0;  ///< entries of kernels or programs no longer picked
  size_t bundles = 0;  ///< program bundles written
  size_t bytes = 0;    ///< the store's entries, in bytes
};

/// Compiles the kernels missing from `store` with NVRTC on `jobs` threads,
/// writes them and the bundles, removes entries that are in neither, and
/// writes manifest.tsv (key, then what) for people.
Status buildAotStore(const std::vector<AotKernel> &kernels,
                     const std::vector<AotBundle> &bundles,
                     const AotStore &store, int jobs, AotBuildStats *stats);

} // namespace mscclc::rt

#endif // MSCCLC_AOT_AOTBUILD_H
