//===- CollectiveTest.cpp - Example algorithms against CPU references -----===//
//
// Compiles every .mscl example for the machine's GPU count through the JIT
// API (the mscclc binary + NVRTC), runs it in both process models (one
// process per GPU; one process driving every GPU through a group) on random
// data, and compares with a CPU reference of the collective: fp32, fp16,
// bf16 and int32, counts from one element up to --max-bytes per buffer,
// out of place and in place (an `inplace` variant of the source); an
// all-reduce's ranks must agree bit for bit where one process drives them
// all (the group model). Also runs
// 1000 back-to-back launches per example and checks the result after them.
// Programs and kernels are compiled on every core ahead of the cases that
// need them (AheadCompiler.h).
//
//   runtime-gpu-collectives --examples DIR [--only a,b] [--models group,procs]
//       [--types f32,f16,bf16,i32] [--max-bytes N] [--quick] [--instances K]
//       (any of GpuTestUtil.h's names, f64, i8, u8, u32, i64, u64, f8e4m3
//       and f8e5m2 too, or "all"; fp8 data on a grid where sums are exact)
//       [--op sum|prod|min|max|avg]  (the reduction's operator, sum by
//                       default; with another, only reducing examples run,
//                       on inputs made for it: caseInput in GpuTestUtil.h)
//       [--memalloc]   (user buffers from mscclcMemAlloc instead of cudaMalloc;
//                       one-process model only)
//       [--ranks N]    (N ranks over the GPUs present, several per GPU where
//                       there are fewer; the procs model is then skipped)
//       [--nodes M]    (M virtual nodes of N/M ranks: MSCCLC_NODE_OF_RANK
//                       set, programs compiled with --gpus-per-node N/M, so
//                       port channels between nodes go over TCP; examples
//                       with memory channels between nodes are skipped)
// Prints PASS/FAIL/SKIP lines and "N passed, N failed, N skipped".
// The collective, its root and whether it runs in place come from the
// compiled program (mscclcProgramCollective, mscclcProgramRoot,
// mscclcProgramInPlace).
// Exit: 0 pass, 1 fail, 77 skipped (no GPU, one GPU and no --ranks, or no
// compiler).
//
//===----------------------------------------------------------------------===//

#include "AheadCompiler.h"
#include "GpuTestUtil.h"
#include "ProofExprs.h"
#include "TestFiles.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gputest;
using mscclc::test::TempDir;

namespace {

struct Options {
  std::string examples = "examples";
  std::vector<std::string> only;
  std::vector<std::string> models = {"procs", "group"}; // procs first: no CUDA before fork
  std::vector<DType> types = {DType::F32, DType::F16, DType::BF16, DType::I32};
  size_t maxBytes = size_t(1) << 30;
  bool quick = false;
  int repeat = 1000;
  int instances = 0; ///< 0: each example's own
  bool cuMem = false; ///< user buffers from mscclcMemAlloc
  int ranks = 0;      ///< 0: one per GPU
  int nodes = 0;      ///< virtual nodes (0: none set)
  RankLayout layout;  ///< the GPU of each rank
  /// Check every result bit for bit against the static proof's
  /// expressions (mscclc --emit=exprs), not against the collective.
  bool exprs = false;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// One compiled example (out-of-place and, when the source allows, in-place).
struct Example {
  std::string name;
  std::string path;
  mscclcProgram_t program = nullptr;
  std::string collective;
  int root = 0;
  std::string skipReason; ///< compile refused (e.g. needs several nodes)
  bool switchChannels = false;
  /// With --exprs: what the proof says every output element holds.
  gputest::ProofExprs exprs;
};

/// Where a sweep's time goes, summed over its cases (printed at its end).
struct PhaseTimes {
  double compileWait = 0; ///< waiting for a program's compile
  double buffers = 0;     ///< allocating, filling and freeing buffers
  double runs = 0;        ///< launches and checks (and kernels compiled then)
  double copyBack = 0;    ///< copying results to the host
  double references = 0;  ///< computing the expected results
  double compares = 0;    ///< comparing
};

/// Adds the time from its construction to its destruction to *sum.
class Stopwatch {
public:
  explicit Stopwatch(double *sum) : sum_(sum), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    *sum_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

private:
  double *sum_;
  std::chrono::steady_clock::time_point start_;
};

/// A fast reproducible value stream: element i of rank r's buffer.
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The reduction operator of this run (--op): every kernel is compiled and
/// run with it, and fill() makes inputs for it.
mscclcRedOp_t gOp = mscclcSum;

bool parseOp(const std::string &s, mscclcRedOp_t *op) {
  for (mscclcRedOp_t o : {mscclcSum, mscclcProd, mscclcMin, mscclcMax, mscclcAvg})
    if (s == opName(o)) {
      *op = o;
      return true;
    }
  return false;
}

/// Elements [begin, begin + n) of the value stream `seed`, into buf[0, n):
/// element i depends only on i, so a reference regenerates just the slice
/// it needs.
void fill(DType t, void *buf, size_t begin, size_t n, uint64_t seed) {
  parallelFor(n, [&](size_t from, size_t to) {
    for (size_t j = from; j < to; ++j) {
      uint64_t h = mix(seed * 0x100000001b3ull + begin + j);
      store(t, buf, j, caseInput(t, gOp, testValue(t, h), h >> 32));
    }
  });
}

uint64_t seedOf(int rank, size_t count, DType t, int round) {
  return mix(uint64_t(rank) * 7919 + count * 31 + uint64_t(t) * 131 + uint64_t(round) * 1000003);
}

/// Elements of rank r's send buffer for the collective.
size_t sendElems(const std::string &coll, int n, size_t count) {
  return coll == "reducescatter" || coll == "scatter" || coll == "alltoall"
             ? count * size_t(n)
             : count;
}
size_t recvElems(const std::string &coll, int n, size_t count) {
  return coll == "allgather" || coll == "gather" || coll == "alltoall"
             ? count * size_t(n)
             : count;
}

/// reduce and gather define only the root's receive buffer; the program
/// must leave the other ranks' untouched (NCCL lets them pass none).
bool resultAtRootOnly(const std::string &coll) {
  return coll == "reduce" || coll == "gather";
}

/// Where rank `rank`'s input lives inside the single buffer of an in-place
/// call, and where its output lives (element offsets).
size_t inPlaceInputOffset(const std::string &coll, int rank, size_t count) {
  return coll == "allgather" || coll == "gather" ? size_t(rank) * count : 0;
}
size_t inPlaceOutputOffset(const std::string &coll, int rank, size_t count) {
  return coll == "reducescatter" || coll == "scatter" ? size_t(rank) * count : 0;
}

/// Pinned host memory reused from case to case. At 8 ranks and 64 MiB,
/// fresh vectors at every case cost more in page faults than the GPU work,
/// and copies from pinned memory run at full DMA speed (and synchronously:
/// the memory may be refilled once cudaMemcpy returns).
class PinnedScratch {
public:
  PinnedScratch() = default;
  PinnedScratch(const PinnedScratch &) = delete;
  PinnedScratch &operator=(const PinnedScratch &) = delete;
  ~PinnedScratch() {
    if (ptr_)
      (void)cudaFreeHost(ptr_); // at exit, the CUDA runtime may be gone
  }
  char *get(size_t bytes) {
    if (bytes > size_) {
      if (ptr_)
        MSCCLC_CUDA_OR_EXIT(cudaFreeHost(ptr_));
      ptr_ = nullptr;
      MSCCLC_CUDA_OR_EXIT(cudaMallocHost(&ptr_, bytes));
      size_ = bytes;
    }
    return static_cast<char *>(ptr_);
  }

private:
  void *ptr_ = nullptr;
  size_t size_ = 0;
};

/// A rank's input on its way to the GPU (also regenerated to check it).
PinnedScratch &inputScratch() {
  static PinnedScratch s;
  return s;
}
/// A rank's result on its way back.
PinnedScratch &resultScratch() {
  static PinnedScratch s;
  return s;
}

/// The expected output of `rank` into *ref, from the slice of each rank's
/// input that reaches it; *terms is the number of inputs reduced into each
/// element (with gOp).
void reference(const Example &ex, int n, int rank, size_t count, DType t,
               int round, std::vector<double> *ref, int *terms) {
  const std::string &c = ex.collective;
  const bool sums = c == "allreduce" || c == "reduce" || c == "reducescatter";
  const bool rootSends = c == "broadcast" || c == "scatter";
  // Rank r sends `rank` the slice at rank*count of its buffer (else at 0) ...
  const bool fromSlice = c == "reducescatter" || c == "scatter" || c == "alltoall";
  // ... which lands at r*count of the output (else at 0).
  const bool toSlice = c == "allgather" || c == "gather" || c == "alltoall";
  ref->assign(recvElems(c, n, count), 0.0); // keeps the capacity
  char *slice = inputScratch().get(count * sizeOf(t));
  *terms = sums ? n : 1;
  for (int r = 0; r < n; ++r) {
    if (rootSends && r != ex.root)
      continue;
    fill(t, slice, fromSlice ? size_t(rank) * count : 0, count,
         seedOf(r, count, t, round));
    double *out = ref->data() + (toSlice ? size_t(r) * count : 0);
    parallelFor(count, [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) {
        double x = load(t, slice, i);
        out[i] = sums && r > 0 ? applyOp(gOp, out[i], x) : x;
      }
    });
  }
  if (sums)
    parallelFor(count, [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i)
        (*ref)[i] = finishReduction(t, gOp, (*ref)[i], n);
    });
}

struct Buffers {
  void *send = nullptr, *recv = nullptr;
  void *outPtr = nullptr; ///< where the result is
  size_t recvElemsN = 0;
  /// The receive buffer as allocated: poison, and in place the rank's input
  /// at inputOffset. A non-root rank of reduce and gather must still hold
  /// that afterwards.
  size_t recvBytes = 0, inputOffset = 0, inputBytes = 0;
  uint64_t seed = 0; ///< of the rank's input
  bool inPlace = false;
  bool cuMem = false; ///< from mscclcMemAlloc, not cudaMalloc
};

void deviceAlloc(void **ptr, size_t bytes, bool cuMem) {
  if (cuMem) {
    if (mscclcMemAlloc(ptr, bytes) != mscclcSuccess) {
      fprintf(stderr, "mscclcMemAlloc: %s\n", mscclcGetLastError());
      exit(1);
    }
    return;
  }
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(ptr, bytes));
}

void deviceFree(void *ptr, bool cuMem) {
  if (cuMem) {
    if (mscclcMemFree(ptr) != mscclcSuccess) {
      fprintf(stderr, "mscclcMemFree: %s\n", mscclcGetLastError());
      exit(1);
    }
    return;
  }
  MSCCLC_CUDA_OR_EXIT(cudaFree(ptr));
}

Buffers allocate(const Example &ex, int n, int rank, size_t count, DType t,
                 int round, bool inPlace, bool cuMem) {
  Buffers b;
  b.inPlace = inPlace;
  b.cuMem = cuMem;
  size_t es = sizeOf(t);
  size_t sN = sendElems(ex.collective, n, count), rN = recvElems(ex.collective, n, count);
  b.recvElemsN = rN;
  b.seed = seedOf(rank, count, t, round);
  b.inputBytes = sN * es;
  char *host = inputScratch().get(b.inputBytes);
  fill(t, host, 0, sN, b.seed);
  if (inPlace) {
    b.inputOffset = inPlaceInputOffset(ex.collective, rank, count) * es;
    b.recvBytes = std::max(b.inputOffset + b.inputBytes, rN * es);
    // Buffers that peers map get allocations of their own (docs/jit-api.md).
    deviceAlloc(&b.recv, std::max<size_t>(b.recvBytes, 2u << 20), cuMem);
    MSCCLC_CUDA_OR_EXIT(cudaMemset(b.recv, 0xff, b.recvBytes));
    MSCCLC_CUDA_OR_EXIT(cudaMemcpy(static_cast<char *>(b.recv) + b.inputOffset,
                                   host, b.inputBytes, cudaMemcpyHostToDevice));
    b.send = b.recv;
    b.outPtr = static_cast<char *>(b.recv) +
               inPlaceOutputOffset(ex.collective, rank, count) * es;
  } else {
    b.recvBytes = rN * es;
    deviceAlloc(&b.send, std::max<size_t>(b.inputBytes, 2u << 20), cuMem);
    deviceAlloc(&b.recv, std::max<size_t>(b.recvBytes, 2u << 20), cuMem);
    // Poison: elements the kernel does not write show up.
    MSCCLC_CUDA_OR_EXIT(cudaMemset(b.recv, 0xff, b.recvBytes));
    MSCCLC_CUDA_OR_EXIT(
        cudaMemcpy(b.send, host, b.inputBytes, cudaMemcpyHostToDevice));
    b.outPtr = b.recv;
  }
  // The memset may still be under way on the legacy stream when it
  // returns; the ranks' non-blocking streams do not wait for it.
  MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
  return b;
}

void release(Buffers &b) {
  if (!b.inPlace)
    deviceFree(b.send, b.cuMem);
  deviceFree(b.recv, b.cuMem);
}

/// The first byte of a non-root's receive buffer that is no longer as
/// allocated, or SIZE_MAX.
size_t firstChangedByte(const Buffers &b, DType t) {
  char *now = resultScratch().get(b.recvBytes);
  MSCCLC_CUDA_OR_EXIT(cudaMemcpy(now, b.recv, b.recvBytes, cudaMemcpyDeviceToHost));
  const char *input = nullptr;
  if (b.inPlace) {
    char *regenerated = inputScratch().get(b.inputBytes);
    fill(t, regenerated, 0, b.inputBytes / sizeOf(t), b.seed);
    input = regenerated;
  }
  for (size_t i = 0; i < b.recvBytes; ++i) {
    bool inInput = input && i >= b.inputOffset && i < b.inputOffset + b.inputBytes;
    if (now[i] != (inInput ? input[i - b.inputOffset] : char(0xff)))
      return i;
  }
  return SIZE_MAX;
}

size_t verify(const Example &ex, const Buffers &b, int n, int rank, size_t count,
              DType t, int round, const std::string &what, PhaseTimes &time) {
  if (resultAtRootOnly(ex.collective) && rank != ex.root) {
    Stopwatch watch(&time.compares);
    size_t at = firstChangedByte(b, t);
    if (at == SIZE_MAX)
      return 0;
    fprintf(stderr, "  %s: rank %d (not the root) had its receive buffer "
            "written (byte %zu)\n", what.c_str(), rank, at);
    return 1;
  }
  char *host = resultScratch().get(b.recvElemsN * sizeOf(t));
  {
    Stopwatch watch(&time.copyBack);
    MSCCLC_CUDA_OR_EXIT(cudaMemcpy(host, b.outPtr, b.recvElemsN * sizeOf(t),
                                   cudaMemcpyDeviceToHost));
  }
  if (!ex.exprs.nodes.empty()) {
    // Bit for bit what the proof says, each element from the inputs.
    Stopwatch watch(&time.compares);
    unsigned char one[8];
    auto input = [&](int q, size_t i) {
      fill(t, one, i, 1, seedOf(q, count, t, round));
      return load(t, one, 0);
    };
    return gputest::checkProofExprs(ex.exprs, rank, count, t, gOp, host, input,
                                    what);
  }
  // Every rank of allreduce, allgather and broadcast expects the same
  // result: computed once per case, not once per rank.
  struct Expected {
    std::string key;
    std::vector<double> ref;
    int terms = 1;
    /// allreduce: the first rank's result, which every other rank's must
    /// equal bit for bit (in one process only: the group model).
    std::vector<char> firstBits;
    int firstRank = -1;
  };
  static Expected last;
  const std::string &c = ex.collective;
  const bool sameForAll = c == "allreduce" || c == "allgather" || c == "broadcast";
  std::string key = ex.name + "/" + c + "/" + std::to_string(ex.root) + "/" +
                    std::to_string(n) + "/" + std::to_string(count) + "/" +
                    std::to_string(int(t)) + "/" + std::to_string(round);
  if (!sameForAll)
    key += "/rank" + std::to_string(rank);
  if (last.key != key) {
    Stopwatch watch(&time.references);
    last.key = key;
    reference(ex, n, rank, count, t, round, &last.ref, &last.terms);
    last.firstBits.clear();
    last.firstRank = -1;
  }
  if (c == "allreduce") {
    if (last.firstRank < 0) {
      last.firstBits.assign(host, host + b.recvElemsN * sizeOf(t));
      last.firstRank = rank;
    } else if (!sameBits(t, last.firstBits.data(), host, b.recvElemsN,
                         last.firstRank, rank, what)) {
      return 1;
    }
  }
  // Every input lies in [-1, 1), products' near 1 (integers: exact, no
  // tolerance but the rounding of avg's division).
  double tol = last.terms > 1 ? tolerance(t, last.terms, gOp == mscclcProd ? 4.0 : 1.0) : 0.0;
  if (last.terms > 1 && isInteger(t) && gOp == mscclcAvg)
    tol = 1;
  Stopwatch watch(&time.compares);
  return compare(t, host, last.ref, tol, what);
}

/// Copies every example into the folder `dir` (imports stay relative),
/// with an `inplace` variant of each algorithm beside it.
void stageExamples(const Options &o, const std::string &dir,
                   std::vector<std::string> *names) {
  DIR *d = opendir(o.examples.c_str());
  if (!d) {
    fprintf(stderr, "cannot open %s\n", o.examples.c_str());
    exit(1);
  }
  while (dirent *e = readdir(d)) {
    std::string f = e->d_name;
    if (f.size() < 6 || f.substr(f.size() - 5) != ".mscl")
      continue;
    std::ifstream in(o.examples + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::ofstream(dir + "/" + f) << text;
    size_t alg = text.find("\nalgorithm ");
    if (alg == std::string::npos)
      continue; // a library of functions (common.mscl)
    std::string base = f.substr(0, f.size() - 5);
    if (!o.only.empty() &&
        std::find(o.only.begin(), o.only.end(), base) == o.only.end())
      continue;
    names->push_back(base);
    size_t open = text.find('(', alg);
    size_t close = text.find(')', open);
    if (open != std::string::npos && close != std::string::npos &&
        text.substr(open, close - open).find("inplace") == std::string::npos) {
      std::string v = text;
      v.insert(close, ", inplace");
      std::ofstream(dir + "/" + base + "__inplace.mscl") << v;
    }
  }
  closedir(d);
}

Example compileExample(const std::string &dir, const std::string &name, int n,
                       int instances, int gpusPerNode, bool exprs) {
  Example ex;
  ex.name = name;
  ex.path = dir + "/" + name + ".mscl";
  if (access(ex.path.c_str(), R_OK) != 0) {
    ex.skipReason = "no in-place variant";
    return ex;
  }
  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  opts.ranks = n;
  opts.instances = instances;
  opts.gpusPerNode = gpusPerNode;
  mscclcResult_t r = mscclcProgramCompileFile(&ex.program, ex.path.c_str(), &opts);
  if (r != mscclcSuccess) {
    ex.skipReason = std::string(mscclcGetErrorString(r)) + ": " + mscclcGetLastError();
    std::replace(ex.skipReason.begin(), ex.skipReason.end(), '\n', ' ');
    ex.program = nullptr;
    return ex;
  }
  const char *collective = nullptr;
  if (mscclcProgramCollective(ex.program, &collective) != mscclcSuccess ||
      mscclcProgramRoot(ex.program, &ex.root) != mscclcSuccess) {
    fprintf(stderr, "%s: %s\n", name.c_str(), mscclcGetLastError());
    exit(1);
  }
  ex.collective = collective;
  if (exprs) {
    std::string args = "--ranks " + std::to_string(n);
    if (instances > 0)
      args += " --instances " + std::to_string(instances);
    if (gpusPerNode > 0)
      args += " --gpus-per-node " + std::to_string(gpusPerNode);
    std::string error;
    if (!gputest::loadProofExprs(getenv("MSCCLC_COMPILER"), ex.path, args,
                                 &ex.exprs, &error)) {
      fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
      exit(1);
    }
  }
  int switchChannels = 0;
  MSCCLC_OR_EXIT(mscclcProgramUsesSwitchChannels(ex.program, &switchChannels));
  ex.switchChannels = switchChannels == 1;
  return ex;
}

struct Tally {
  int pass = 0, fail = 0, skip = 0;
};

/// Whether the example runs under gOp: every one with sum, only the
/// reducing ones with another operator (the rest ignore it).
bool servesOp(const Example &ex) {
  return gOp == mscclcSum || ex.collective == "allreduce" ||
         ex.collective == "reduce" || ex.collective == "reducescatter";
}


void report(Tally &t, const char *verdict, const std::string &what,
            const std::string &extra = "") {
  printf("%s %s%s%s\n", verdict, what.c_str(), extra.empty() ? "" : ": ",
         extra.c_str());
  fflush(stdout);
  if (!strcmp(verdict, "FAIL")) // every rank's failures reach the log
    fprintf(stderr, "FAIL %s: %s\n", what.c_str(), extra.c_str());
  if (!strcmp(verdict, "PASS")) t.pass++;
  else if (!strcmp(verdict, "FAIL")) t.fail++;
  else t.skip++;
}

std::vector<size_t> countsFor(const Options &o, DType t, const std::string &coll, int n) {
  std::vector<size_t> counts = {1, 3, 17, 1023, 4097, 65537, (1u << 20) + 3};
  if (!o.quick)
    counts.push_back((16u << 20) + 1);
  size_t es = sizeOf(t);
  // The largest buffer of a call: 1 GiB by default, for fp32 only (the
  // other types are covered up to 64 MiB).
  size_t maxBytes = t == DType::F32 ? o.maxBytes : std::min<size_t>(o.maxBytes, 64u << 20);
  size_t widest = std::max(sendElems(coll, n, 1), recvElems(coll, n, 1));
  size_t top = maxBytes / es / widest;
  counts.erase(std::remove_if(counts.begin(), counts.end(),
                              [&](size_t c) { return c > top; }),
               counts.end());
  // fp32, bf16 and fp8 also just below the maximum, odd-sized.
  bool toTheTop = t == DType::F32 || t == DType::BF16 || isFp8(t);
  if (toTheTop && top > 1 && (counts.empty() || top > counts.back()))
    counts.push_back(top - 1);
  return counts;
}

/// Runs one example on every rank of this process (`comms` holds the
/// communicators this process drives, ranks[i] their ranks).
void runExample(const Options &o, const Example &ex, int n,
                const std::vector<mscclcComm_t> &comms, const std::vector<int> &ranks,
                const char *model, Tally &tally, PhaseTimes &time, bool inPlace) {
  std::string label = std::string("[") + model + "] " + ex.name;
  if (gOp != mscclcSum)
    label += std::string(" ") + opName(gOp);
  if (ex.skipReason.size()) {
    if (ranks[0] == 0 || comms.size() > 1)
      report(tally, "SKIP", label, ex.skipReason);
    return;
  }
  if (!servesOp(ex)) {
    if (ranks[0] == 0 || comms.size() > 1)
      report(tally, "SKIP", label, "not a reduction");
    return;
  }
  std::vector<cudaStream_t> streams(comms.size());
  for (size_t i = 0; i < comms.size(); ++i) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
    MSCCLC_CUDA_OR_EXIT(
        cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  }
  // Frees every rank's buffers, each on its rank's GPU.
  auto releaseAll = [&](std::vector<Buffers> &bufs) {
    for (size_t i = 0; i < comms.size(); ++i) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
      release(bufs[i]);
    }
  };
  auto runAll = [&](std::vector<Buffers> &bufs, size_t count, DType t) {
    MSCCLC_OR_EXIT(mscclcGroupStart());
    mscclcResult_t first = mscclcSuccess;
    std::string msg;
    for (size_t i = 0; i < comms.size(); ++i) {
      mscclcResult_t r = mscclcProgramRun(ex.program, comms[i], bufs[i].send,
                                          bufs[i].recv, count, apiType(t), gOp,
                                          streams[i]);
      if (r != mscclcSuccess && first == mscclcSuccess) {
        first = r;
        msg = mscclcGetLastError();
      }
    }
    mscclcResult_t r = mscclcGroupEnd();
    if (r != mscclcSuccess && first == mscclcSuccess) {
      first = r;
      msg = mscclcGetLastError();
    }
    // Every rank, even after one failed: a check also waits for the
    // rank's proxy, which must be done before the buffers are freed.
    for (size_t i = 0; i < comms.size(); ++i) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
      r = mscclcProgramCheck(ex.program, comms[i], apiType(t), gOp, streams[i]);
      if (r != mscclcSuccess && first == mscclcSuccess) {
        first = r;
        msg = mscclcGetLastError();
      }
    }
    return std::make_pair(first, msg);
  };

  // After a device error (a time-out), every rank resets the program's
  // semaphores, epochs and scratch, so the next case starts afresh and
  // shows whether the failure repeats. Reset is collective: a thread per
  // communicator. False if a reset failed (the example then stops).
  auto resetAll = [&](DType t) {
    std::vector<mscclcResult_t> results(comms.size(), mscclcSuccess);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < comms.size(); ++i)
      threads.emplace_back([&, i] {
        if (cudaSetDevice(o.layout.deviceOf(ranks[i])) != cudaSuccess)
          results[i] = mscclcDeviceError;
        else
          results[i] = mscclcProgramReset(ex.program, comms[i], apiType(t),
                                          gOp);
      });
    for (std::thread &th : threads)
      th.join();
    for (mscclcResult_t r : results)
      if (r != mscclcSuccess) {
        report(tally, "FAIL", label + " reset after a device error",
               mscclcGetErrorString(r));
        return false;
      }
    return true;
  };

  int round = 0;
  for (DType t : o.types) {
    for (size_t count : countsFor(o, t, ex.collective, n)) {
      ++round;
      std::string what = label + " " + name(t) + " count=" + std::to_string(count) +
                         (inPlace ? " in-place" : "");
      std::vector<Buffers> bufs;
      {
        Stopwatch watch(&time.buffers);
        for (size_t i = 0; i < comms.size(); ++i) {
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
          bufs.push_back(allocate(ex, n, ranks[i], count, t, round, inPlace, o.cuMem));
        }
      }
      std::pair<mscclcResult_t, std::string> res;
      {
        Stopwatch watch(&time.runs);
        res = runAll(bufs, count, t);
      }
      // A type or operator the program does not serve is refused first,
      // SwitchChannel programs included (their multicast set-up comes after
      // the check).
      if (res.first == mscclcInvalidArgument &&
          (res.second.find("does not support data type") != std::string::npos ||
           res.second.find("does not support operator") != std::string::npos)) {
        report(tally, "SKIP", what, res.second);
      } else if (ex.switchChannels) {
        // Must be refused where multicast is off, before any multicast call.
        bool refused = res.first == mscclcUnsupported &&
                       res.second.find("refused") != std::string::npos;
        report(tally, refused ? "PASS" : "FAIL", label + " SwitchChannel refusal",
               res.second);
        releaseAll(bufs);
        goto done;
      } else if (res.first == mscclcUnsupported && o.layout.shared() &&
                 (res.second.find("hardware work queues") != std::string::npos ||
                  res.second.find("resident at once") != std::string::npos)) {
        // The shape does not fit the shared GPU: refused before any launch,
        // which is what must happen. Nothing else of the example can run.
        report(tally, "SKIP", label, "refused on the shared GPU: " + res.second);
        releaseAll(bufs);
        goto done;
      } else if (res.first == mscclcUnsupported && o.nodes > 1 &&
                 res.second.find("on another node") != std::string::npos) {
        // Memory channels cannot cross nodes: refused before any launch.
        report(tally, "SKIP", label, "needs one node: " + res.second);
        releaseAll(bufs);
        goto done;
      } else if (res.first != mscclcSuccess) {
        report(tally, "FAIL", what,
               std::string(mscclcGetErrorString(res.first)) + ": " + res.second);
        if (res.first == mscclcDeviceError && !resetAll(t)) {
          releaseAll(bufs);
          goto done;
        }
      } else {
        size_t bad = 0;
        for (size_t i = 0; i < comms.size(); ++i) {
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
          bad += verify(ex, bufs[i], n, ranks[i], count, t, round, what, time);
        }
        report(tally, bad ? "FAIL" : "PASS", what,
               bad ? std::to_string(bad) + " wrong elements" : "");
      }
      Stopwatch watch(&time.buffers);
      releaseAll(bufs);
    }
  }
  // Back-to-back launches on the same buffers (out of place: idempotent);
  // not for SwitchChannel programs, refused where multicast is off (above,
  // unless no type of the run served them).
  if (!inPlace && o.repeat > 0 && !ex.switchChannels) {
    ++round;
    size_t count = 65536 + 1;
    std::vector<Buffers> bufs;
    for (size_t i = 0; i < comms.size(); ++i) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
      bufs.push_back(allocate(ex, n, ranks[i], count, DType::F32, round, false,
                              o.cuMem));
    }
    mscclcResult_t first = mscclcSuccess;
    std::string msg;
    for (int k = 0; k < o.repeat && first == mscclcSuccess; ++k) {
      MSCCLC_OR_EXIT(mscclcGroupStart());
      for (size_t i = 0; i < comms.size(); ++i) {
        mscclcResult_t r = mscclcProgramRun(ex.program, comms[i], bufs[i].send, bufs[i].recv,
                                            count, mscclcFloat32, gOp, streams[i]);
        if (r != mscclcSuccess && first == mscclcSuccess) {
          first = r;
          msg = mscclcGetLastError();
        }
      }
      mscclcResult_t r = mscclcGroupEnd();
      if (r != mscclcSuccess && first == mscclcSuccess) {
        first = r;
        msg = mscclcGetLastError();
      }
    }
    std::string what = label + " f32 count=65537 x" + std::to_string(o.repeat) +
                       " back-to-back";
    for (size_t i = 0; i < comms.size(); ++i) { // every rank (see runAll)
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
      mscclcResult_t r =
          mscclcProgramCheck(ex.program, comms[i], mscclcFloat32, gOp, streams[i]);
      if (r != mscclcSuccess && first == mscclcSuccess) {
        first = r;
        msg = mscclcGetLastError();
      }
    }
    if (first != mscclcSuccess) {
      report(tally, "FAIL", what, msg);
      if (first == mscclcDeviceError)
        resetAll(DType::F32);
    } else {
      size_t bad = 0;
      for (size_t i = 0; i < comms.size(); ++i) {
        MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
        bad += verify(ex, bufs[i], n, ranks[i], count, DType::F32, round, what, time);
      }
      report(tally, bad ? "FAIL" : "PASS", what);
    }
    releaseAll(bufs);
  }
done:
  for (size_t i = 0; i < comms.size(); ++i) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(ranks[i])));
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[i]));
    MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(streams[i]));
  }
}

Tally runModel(const Options &o, const std::string &dir,
               const std::vector<std::string> &names, int n,
               const std::vector<mscclcComm_t> &comms, const std::vector<int> &ranks,
               const char *model) {
  // The run's order: each example out of place, then in place.
  std::vector<std::string> variants;
  for (const std::string &name : names) {
    variants.push_back(name);
    variants.push_back(name + "__inplace");
  }
  std::vector<Example> examples(variants.size());
  // This process's share of the cores (one process per rank in "procs").
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  int threads = int(std::max<size_t>(1, cores * comms.size() / size_t(n)));
  AheadCompiler ahead(
      variants.size(), o.types.size() * ranks.size(), threads,
      [&](size_t i) {
        examples[i] = compileExample(dir, variants[i], n, o.instances,
                                     o.nodes > 1 ? n / o.nodes : 0, o.exprs);
      },
      [&](size_t i, size_t k) {
        const Example &ex = examples[i];
        // Switch programs may be refused at run time: compiled on demand.
        if (!ex.program || ex.switchChannels || !servesOp(ex))
          return;
        DType t = o.types[k / ranks.size()];
        int rank = ranks[k % ranks.size()];
        // An unsupported type fails here at once; the run reports it.
        mscclcProgramCompileKernel(ex.program, rank, apiType(t), gOp,
                                   o.layout.deviceOf(rank));
      });
  Tally tally;
  PhaseTimes time;
  for (size_t i = 0; i < variants.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    {
      Stopwatch watch(&time.compileWait);
      ahead.take(i);
    }
    Example &ex = examples[i];
    // The program says whether it runs in place (a header may say so).
    int programInPlace = int(i % 2);
    if (ex.program)
      MSCCLC_OR_EXIT(mscclcProgramInPlace(ex.program, &programInPlace));
    runExample(o, ex, n, comms, ranks, model, tally, time, programInPlace == 1);
    ahead.release(i);
    if (ex.program)
      mscclcProgramDestroy(ex.program);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ranks[0] == 0)
      printf("  (%s in %.1f s)\n", variants[i].c_str(), s);
  }
  if (ranks[0] == 0)
    printf("[%s] time: %.1f s waiting for programs, %.1f s on buffers, %.1f s "
           "running, %.1f s copying results back, %.1f s on references, "
           "%.1f s comparing\n",
           model, time.compileWait, time.buffers, time.runs, time.copyBack,
           time.references, time.compares);
  return tally;
}

} // namespace

int main(int argc, char **argv) {
  setSafeEnvironment();
  // A rank whose setup failed must not keep its peers waiting for minutes.
  setenv("MSCCLC_BOOTSTRAP_TIMEOUT", "30", 0);
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--examples") o.examples = next();
    else if (a == "--only") o.only = split(next());
    else if (a == "--models") o.models = split(next());
    else if (a == "--max-bytes") o.maxBytes = size_t(strtoull(next().c_str(), nullptr, 0));
    else if (a == "--repeat") o.repeat = atoi(next().c_str());
    else if (a == "--quick") o.quick = true;
    else if (a == "--exprs") o.exprs = true;
    else if (a == "--instances") o.instances = atoi(next().c_str());
    else if (a == "--memalloc") o.cuMem = true;
    else if (a == "--ranks") o.ranks = atoi(next().c_str());
    else if (a == "--nodes") o.nodes = atoi(next().c_str());
    else if (a == "--op") {
      if (!parseOp(next(), &gOp)) {
        fprintf(stderr, "--op takes sum, prod, min, max or avg\n");
        return 1;
      }
    } else if (a == "--types") {
      std::string list = next();
      if (!parseTypes(list, &o.types)) {
        fprintf(stderr, "unknown type in %s\n", list.c_str());
        return 1;
      }
    } else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 1;
    }
  }
  if (o.exprs) {
    for (DType t : o.types)
      if (!gputest::exactInDouble(t)) {
        fprintf(stderr, "--exprs checks f32, f64 and integer types bit for "
                        "bit; not %s\n", gputest::name(t));
        return 1;
      }
    if (gOp == mscclcAvg) {
      fprintf(stderr, "--exprs takes --op sum, prod, min or max\n");
      return 1;
    }
  }
  if (o.cuMem && std::count(o.models.begin(), o.models.end(), "procs")) {
    // CUDA IPC cannot map cuMem memory into other processes.
    fprintf(stderr, "--memalloc needs --models group\n");
    return 1;
  }
  if (!chooseLayout(o.ranks, &o.layout))
    return kSkip;
  const char *compiler = getenv("MSCCLC_COMPILER");
  if (!compiler || access(compiler, X_OK) != 0) {
    printf("SKIPPED: set MSCCLC_COMPILER to the mscclc binary\n");
    return kSkip;
  }
  int n = o.layout.ranks;
  if (o.nodes > 1) {
    if (n % o.nodes != 0) {
      fprintf(stderr, "--nodes %d does not divide %d ranks\n", o.nodes, n);
      return 1;
    }
    // Rank r on node r / (n / nodes): what --gpus-per-node compiles for.
    std::string spec;
    for (int r = 0; r < n; ++r)
      spec += (r ? "," : "") + std::to_string(r / (n / o.nodes));
    setenv("MSCCLC_NODE_OF_RANK", spec.c_str(), 1);
    printf("%d virtual nodes of %d ranks: MSCCLC_NODE_OF_RANK=%s\n", o.nodes,
           n / o.nodes, spec.c_str());
  }
  std::vector<std::string> names;
  TempDir staged("mscclc-examples"); // removed when the test ends
  const std::string &dir = staged.path();
  stageExamples(o, dir, &names);
  std::sort(names.begin(), names.end());
  Tally total;
  for (const std::string &model : o.models) {
    Tally t;
    if (model == "procs" && o.layout.shared()) {
      printf("[procs] skipped: ranks that share a GPU live in one process\n");
    } else if (model == "procs") {
      // One process per GPU; each reports its own lines, rank 0's tally
      // counts (every rank checks its own output, failures fail the exit).
      mscclcUniqueId id;
      MSCCLC_OR_EXIT(mscclcGetUniqueId(&id));
      std::vector<pid_t> kids;
      int tallyPipe[2];
      if (pipe(tallyPipe) != 0)
        return 1;
      for (int r = 0; r < n; ++r) {
        pid_t pid = fork();
        if (pid == 0) {
          close(tallyPipe[0]);
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(o.layout.deviceOf(r)));
          mscclcComm_t comm;
          MSCCLC_OR_EXIT(mscclcCommInitRank(&comm, n, id, r));
          if (r != 0) // only rank 0 prints PASS lines; failures print anywhere
            if (!freopen("/dev/null", "w", stdout))
              _exit(3);
          Tally mine = runModel(o, dir, names, n, {comm}, {r}, "procs");
          if (r != 0)
            mine.pass = mine.skip = 0; // rank 0 counts the cases
          if (write(tallyPipe[1], &mine, sizeof(mine)) != sizeof(mine))
            _exit(4);
          mscclcCommDestroy(comm);
          fflush(stdout);
          _exit(mine.fail ? 1 : 0);
        }
        kids.push_back(pid);
      }
      close(tallyPipe[1]);
      Tally got;
      while (read(tallyPipe[0], &got, sizeof(got)) == sizeof(got)) {
        t.pass += got.pass;
        t.fail += got.fail;
        t.skip += got.skip;
      }
      close(tallyPipe[0]);
      for (pid_t pid : kids) {
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && t.fail == 0))
          t.fail++; // a rank died without reporting
      }
      printf("[procs] %s\n", t.fail ? "some rank FAILED" : "every rank passed");
    } else if (model == "group") {
      std::vector<mscclcComm_t> comms(static_cast<size_t>(n));
      std::vector<int> devices = o.layout.devices();
      MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), n, devices.data()));
      std::vector<int> ranks;
      for (int r = 0; r < n; ++r)
        ranks.push_back(r);
      t = runModel(o, dir, names, n, comms, ranks, "group");
      for (mscclcComm_t c : comms)
        mscclcCommDestroy(c);
    }
    total.pass += t.pass;
    total.fail += t.fail;
    total.skip += t.skip;
  }
  printf("%d passed, %d failed, %d skipped\n", total.pass, total.fail, total.skip);
  return total.fail ? 1 : 0;
}
