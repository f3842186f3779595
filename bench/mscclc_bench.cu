//===- mscclc_bench.cu - Generated kernels vs reference kernels vs NCCL ---===//
//
// One process drives every GPU of the machine. For each program (generated
// from stdlib/*.mscl through the JIT API, or a hand-written reference
// kernel with its plan) and for NCCL, at sizes 1 KB .. 1 GB: warm up, then
// capture `iters` back-to-back collectives per rank in a CUDA graph and
// replay it; the time of one collective is the median over replays of
// (replay time / iters), measured with events on rank 0's stream. Sizes
// follow nccl-tests: the larger of the send and receive buffer per rank;
// busbw = algbw * factor (AllReduce 2(n-1)/n, AllGather and ReduceScatter
// (n-1)/n). Data is random (a hash of the index), never zeros.
// Also times the JIT: the mscclc binary, NVRTC cold compile, cache hit.
//
//   mscclc-bench --examples DIR [--algos a,b@K] [--reference DIR]
//                [--max-bytes N] [--out results.md] [--no-nccl] [--ranks N]
// `NAME@K` compiles example NAME with K instances (K thread blocks per one).
// `--ranks N` runs N ranks over the GPUs present, several per GPU where there
// are fewer (then without NCCL, which refuses that): a check that every
// program runs, whose timings are no link figures (the results say so).
// `--tune TABLE.json` times every catalog algorithm that serves the machine
// (all-reduce, all-gather, reduce-scatter; 1 to 32 instances) and writes a
// selection table of the winners (mscclc/runtime/TunedTable.h) for
// MSCCLC_SELECTION_TABLE; it refuses to tune ranks that share a GPU.
//
//===----------------------------------------------------------------------===//

#include "mscclc/CudaCheck.h"
#include "mscclc/mscclc.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/StdlibPrograms.h"
#include "mscclc/runtime/TunedTable.h"

#ifdef MSCCLC_BENCH_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

__global__ void fillKernel(float *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9e3779b97f4a7c15ull + seed;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    p[i] = float(int(x & 0xffff) - 32768) / 32768.0f;
  }
}

struct Options {
  std::string examples = "stdlib";
  std::vector<std::string> algos = {
      "allreduce_1pa", "allreduce_2pa_ll", "allreduce_2pa_hb",
      "allreduce_2pa_port", "allreduce_2pr", "allgather_allpairs",
      "reducescatter_ring_overlap"};
  std::string reference;
  size_t maxBytes = size_t(1) << 30;
  size_t llMaxBytes = size_t(64) << 20; // LL moves 2x the bytes: stop early
  std::string out = "bench.md";
  std::string tune; ///< where --tune writes its table ("" : no tuning)
  bool nccl = true;
  int ranks = 0; ///< 0: one per GPU (at most 8)
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
    if (!x.empty())
      v.push_back(x);
  return v;
}

std::string readFile(const std::string &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// What one timed collective needs on every rank.
struct Runner {
  std::string name;       ///< column header
  std::string collective; ///< allreduce, allgather, reducescatter, ...
  bool ll = false;
  std::string algorithm;  ///< stdlib stem ("" for NCCL and references)
  int instances = 1;
  // Launches one collective of `count` on every rank (inside a group).
  std::function<bool(size_t count, std::string *err)> launch;
};

int n = 0;    ///< ranks
int gpus = 0; ///< GPUs they run on: rank d on GPU d % gpus
int deviceOf(int rank) { return rank % gpus; }
std::vector<cudaStream_t> streams;
std::vector<float *> sendBufs, recvBufs;

double busFactor(const std::string &c) {
  if (c == "allreduce")
    return 2.0 * (n - 1) / n;
  if (c == "allgather" || c == "reducescatter" || c == "alltoall")
    return double(n - 1) / n;
  return 1.0;
}

/// Elements per rank for a size in nccl-tests' convention.
size_t countFor(const std::string &c, size_t bytes) {
  size_t elems = bytes / sizeof(float);
  if (c == "allgather" || c == "reducescatter" || c == "alltoall")
    return elems / size_t(n);
  return elems;
}

/// Median time of one collective in microseconds; <0 on failure.
double timeCollective(Runner &r, size_t count, std::string *err) {
  // Warm-up (also the collective setup of a new count).
  for (int i = 0; i < 3; ++i)
    if (!r.launch(count, err))
      return -1;
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[d]));
  }
  // Estimate, to size the graph.
  cudaEvent_t e0, e1;
  MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
  MSCCLC_CUDA_OR_EXIT(cudaEventCreate(&e0));
  MSCCLC_CUDA_OR_EXIT(cudaEventCreate(&e1));
  MSCCLC_CUDA_OR_EXIT(cudaEventRecord(e0, streams[0]));
  for (int i = 0; i < 5; ++i)
    if (!r.launch(count, err))
      return -1;
  MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
  MSCCLC_CUDA_OR_EXIT(cudaEventRecord(e1, streams[0]));
  MSCCLC_CUDA_OR_EXIT(cudaEventSynchronize(e1));
  float ms = 0;
  MSCCLC_CUDA_OR_EXIT(cudaEventElapsedTime(&ms, e0, e1));
  double est = ms / 5;
  int iters = int(std::min(200.0, std::max(5.0, 2.0 / std::max(est, 1e-4))));
  int reps = est > 2.0 ? 7 : 15;
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[d]));
  }
  // Capture `iters` collectives per rank, one graph per stream.
  std::vector<cudaGraph_t> graphs(n);
  std::vector<cudaGraphExec_t> execs(n);
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(
        cudaStreamBeginCapture(streams[d], cudaStreamCaptureModeThreadLocal));
  }
  bool ok = true;
  for (int i = 0; i < iters && ok; ++i)
    ok = r.launch(count, err);
  // End every capture before instantiating: no other CUDA call is allowed
  // on this thread while one of its captures is open.
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamEndCapture(streams[d], &graphs[d]));
  }
  for (int d = 0; d < n && ok; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(cudaGraphInstantiate(&execs[d], graphs[d], 0));
  }
  if (!ok)
    return -1;
  // One untimed replay, then the timed ones.
  std::vector<double> times;
  for (int rep = -1; rep < reps; ++rep) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
    MSCCLC_CUDA_OR_EXIT(cudaEventRecord(e0, streams[0]));
    for (int d = 0; d < n; ++d) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
      MSCCLC_CUDA_OR_EXIT(cudaGraphLaunch(execs[d], streams[d]));
    }
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
    MSCCLC_CUDA_OR_EXIT(cudaEventRecord(e1, streams[0]));
    for (int d = 0; d < n; ++d) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
      MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[d]));
    }
    MSCCLC_CUDA_OR_EXIT(cudaEventElapsedTime(&ms, e0, e1));
    if (rep >= 0)
      times.push_back(ms * 1000.0 / iters);
  }
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(cudaGraphExecDestroy(execs[d]));
    MSCCLC_CUDA_OR_EXIT(cudaGraphDestroy(graphs[d]));
  }
  MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
  MSCCLC_CUDA_OR_EXIT(cudaEventDestroy(e0));
  MSCCLC_CUDA_OR_EXIT(cudaEventDestroy(e1));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string fmtSize(size_t b) {
  char buf[32];
  if (b >= (1u << 30)) snprintf(buf, sizeof buf, "%zu GB", b >> 30);
  else if (b >= (1u << 20)) snprintf(buf, sizeof buf, "%zu MB", b >> 20);
  else snprintf(buf, sizeof buf, "%zu KB", b >> 10);
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  setenv("MSCCLC_DISABLE_MULTICAST", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--examples") o.examples = next();
    else if (a == "--algos") o.algos = split(next());
    else if (a == "--reference") o.reference = next();
    else if (a == "--max-bytes") o.maxBytes = strtoull(next().c_str(), nullptr, 0);
    else if (a == "--out") o.out = next();
    else if (a == "--no-nccl") o.nccl = false;
    else if (a == "--ranks") o.ranks = atoi(next().c_str());
    else if (a == "--tune") o.tune = next();
    else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 1;
    }
  }
  MSCCLC_CUDA_OR_EXIT(cudaGetDeviceCount(&gpus));
  n = o.ranks > 0 ? o.ranks : std::min(gpus, 8);
  if (n < 2) {
    printf("SKIPPED: needs two GPUs, or --ranks N for N ranks on fewer\n");
    return 77;
  }
  gpus = std::min(gpus, n);
  const bool shared = n > gpus;
  if (shared && !o.tune.empty()) {
    fprintf(stderr, "refusing to tune: %d ranks share %d GPU(s), and timings "
                    "there say nothing about the links a table is for\n",
            n, gpus);
    return 2;
  }
  if (shared && o.nccl) {
    printf("%d ranks on %d GPU(s): NCCL refuses ranks that share a GPU, so "
           "it is left out\n", n, gpus);
    o.nccl = false;
  }
  cudaDeviceProp prop;
  MSCCLC_CUDA_OR_EXIT(cudaGetDeviceProperties(&prop, 0));
  std::ostringstream md;
  {
    time_t now = time(nullptr);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    int ncclVersion = 0;
#ifdef MSCCLC_BENCH_NCCL
    ncclGetVersion(&ncclVersion);
#endif
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    md << "# mscclc benchmark, " << date << "\n\n"
       << "Hardware: " << gpus << "x " << prop.name << " (sm_" << prop.major << prop.minor
       << ", " << prop.multiProcessorCount << " SMs), CUDA runtime " << rt
       << ", driver " << drv << ", NCCL " << ncclVersion
       << " (NCCL_NVLS_ENABLE=0). One process, " << n << " ranks on " << gpus
       << " GPUs, fp32 sum, CUDA graph replays, median of 7-15 replays of 5-200 "
          "collectives each. Times in microseconds; busbw in GB/s.\n\n";
    if (shared)
      md << "**Several ranks share each GPU: these timings are no link "
            "figures; they only show that every program runs.**\n\n";
  }

  // Buffers for the largest size, random contents.
  size_t maxElems = o.maxBytes / sizeof(float);
  streams.resize(n);
  sendBufs.resize(n);
  recvBufs.resize(n);
  for (int d = 0; d < n; ++d) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf(d)));
    MSCCLC_CUDA_OR_EXIT(
        cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&sendBufs[d], maxElems * sizeof(float)));
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&recvBufs[d], maxElems * sizeof(float)));
    fillKernel<<<1024, 256>>>(sendBufs[d], maxElems, 17u * (d + 1));
    fillKernel<<<1024, 256>>>(recvBufs[d], maxElems, 1234u + d);
    MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
  }

  std::vector<mscclcComm_t> comms(n);
  std::vector<int> devices(n);
  for (int d = 0; d < n; ++d)
    devices[d] = deviceOf(d);
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), n, devices.data()));

  std::vector<Runner> runners;
  std::vector<mscclcProgram_t> programs;
  md << "## JIT compile times\n\nmscclc: the compiler, every rank. NVRTC "
        "and cache: rank 0's kernel, which is what one process compiles.\n\n"
        "| program | mscclc (ms) | NVRTC cold (ms) | cache hit (ms) |\n"
        "|---|---|---|---|\n";
  // The collective comes from the compiled program, not its source text.
  auto addProgram = [&](const std::string &label, mscclcProgram_t prog, bool ll,
                        const std::string &algorithm, int instances) {
    programs.push_back(prog);
    const char *coll = nullptr;
    MSCCLC_OR_EXIT(mscclcProgramCollective(prog, &coll));
    Runner r;
    r.name = label;
    r.algorithm = algorithm;
    r.instances = instances > 0 ? instances : 1;
    r.collective = coll;
    r.ll = ll;
    r.launch = [prog, &comms](size_t count, std::string *err) {
      mscclcGroupStart();
      for (int d = 0; d < n; ++d)
        mscclcProgramRun(prog, comms[d], sendBufs[d], recvBufs[d], count,
                         mscclcFloat32, mscclcSum, streams[d]);
      if (mscclcGroupEnd() != mscclcSuccess) {
        *err = mscclcGetLastError();
        return false;
      }
      return true;
    };
    runners.push_back(r);
  };

  int arch = prop.major * 10 + prop.minor;
  if (!o.tune.empty()) {
    // Every catalog algorithm that serves this machine, at 1..32 instances.
    const mscclc::rt::SelectionTable *table = nullptr;
    mscclc::rt::Status ts = mscclc::rt::processSelectionTable(&table);
    if (!ts.isOk()) {
      fprintf(stderr, "--tune: %s\n", ts.message().c_str());
      return 1;
    }
    o.algos.clear();
    for (const mscclc::rt::AlgorithmInfo &a : table->algorithms()) {
      mscclc::rt::SelectionQuery q;
      q.collective = a.collective;
      q.nranks = n;
      q.arch = arch;
      std::string name = mscclc::collectiveName(a.collective);
      if (!a.selectable || !a.whyNot(q).empty() ||
          (name != "allreduce" && name != "allgather" && name != "reducescatter"))
        continue;
      for (int k : {1, 4, 8, 16, 32})
        if (k <= a.maxInstances)
          o.algos.push_back(a.name + "@" + std::to_string(k));
    }
  }
  for (const std::string &algo : o.algos) {
    // NAME or NAME@K: example NAME compiled with K instances.
    const size_t at = algo.find('@');
    const std::string base = algo.substr(0, at);
    const int instances = at == std::string::npos ? 0 : atoi(algo.c_str() + at + 1);
    std::string path = o.examples + "/" + base + ".mscl";
    std::string text = readFile(path);
    if (text.empty()) {
      printf("skip %s: no such example\n", algo.c_str());
      continue;
    }
    // JIT timing through the runtime's own classes.
    mscclc::rt::CompilerOptions copts;
    copts.ranks = n;
    copts.instances = instances;
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<mscclc::rt::Program> p;
    mscclc::rt::Status s = mscclc::rt::Program::compileFile(path, copts, &p);
    double compilerMs = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - t0).count();
    if (!s.isOk()) {
      printf("skip %s: %s\n", algo.c_str(), s.message().c_str());
      md << "| " << algo << " | compile failed | | |\n";
      continue;
    }
    // Cold: cache off. Then a fresh program stores into the cache and a
    // third one hits it.
    mscclc::rt::CompileStats cold, hit;
    auto timeJit = [&]() -> mscclc::rt::Status {
      std::string cubin;
      setenv("MSCCLC_CACHE", "0", 1);
      mscclc::rt::Status cs = p->cubin(arch, "f32", "sum", 0, &cubin, &cold);
      unsetenv("MSCCLC_CACHE");
      MSCCLC_TRY(cs);
      for (int i = 0; i < 2; ++i) {
        std::unique_ptr<mscclc::rt::Program> fresh;
        MSCCLC_TRY(mscclc::rt::Program::fromGenerated(p->cudaSource(),
                                                      p->planJson(), &fresh));
        MSCCLC_TRY(fresh->cubin(arch, "f32", "sum", 0, &cubin, &hit));
      }
      return mscclc::rt::Status::ok();
    };
    mscclc::rt::Status jit = timeJit();
    if (!jit.isOk()) {
      printf("skip %s: %s\n", algo.c_str(), jit.message().c_str());
      md << "| " << algo << " | NVRTC failed | | |\n";
      continue;
    }
    char line[256];
    snprintf(line, sizeof line, "| %s | %.0f | %.0f | %.2f%s |\n", algo.c_str(),
             compilerMs, cold.milliseconds, hit.milliseconds,
             hit.cacheHit ? "" : " (miss)");
    md << line;
    printf("%s", line);

    mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
    opts.ranks = n;
    opts.instances = instances;
    mscclcProgram_t prog;
    if (mscclcProgramCompileFile(&prog, path.c_str(), &opts) != mscclcSuccess) {
      printf("skip %s: %s\n", algo.c_str(), mscclcGetLastError());
      continue;
    }
    bool ll = algo.find("_ll") != std::string::npos || algo.find("1pa") != std::string::npos;
    addProgram(algo, prog, ll, base, instances);
  }
  // Hand-written reference kernels: NAME.cu + NAME.plan.json.
  if (!o.reference.empty()) {
    if (DIR *d = opendir(o.reference.c_str())) {
      std::vector<std::string> names;
      while (dirent *e = readdir(d)) {
        std::string f = e->d_name;
        if (f.size() > 3 && f.substr(f.size() - 3) == ".cu")
          names.push_back(f.substr(0, f.size() - 3));
      }
      closedir(d);
      std::sort(names.begin(), names.end());
      for (const std::string &nm : names) {
        std::string src = readFile(o.reference + "/" + nm + ".cu");
        std::string plan = readFile(o.reference + "/" + nm + ".plan.json");
        if (plan.empty()) {
          printf("skip reference %s: no %s.plan.json\n", nm.c_str(), nm.c_str());
          continue;
        }
        mscclcProgram_t prog;
        if (mscclcProgramCreateFromGenerated(&prog, src.c_str(), plan.c_str()) !=
            mscclcSuccess) {
          printf("skip reference %s: %s\n", nm.c_str(), mscclcGetLastError());
          continue;
        }
        bool ll = nm.find("ll") != std::string::npos || nm.find("LL") != std::string::npos;
        addProgram("ref:" + nm, prog, ll, "", 0);
      }
    }
  }
  md << "\n";

#ifdef MSCCLC_BENCH_NCCL
  std::vector<ncclComm_t> nccls(n);
  if (o.nccl) {
    std::vector<int> devs(n);
    for (int d = 0; d < n; ++d)
      devs[d] = d;
    if (ncclCommInitAll(nccls.data(), n, devs.data()) != ncclSuccess) {
      fprintf(stderr, "ncclCommInitAll failed\n");
      o.nccl = false;
    }
  }
  if (o.nccl) {
    for (const char *c : {"allreduce", "allgather", "reducescatter"}) {
      Runner r;
      r.name = "NCCL";
      r.collective = c;
      std::string coll = c;
      r.launch = [coll, &nccls](size_t count, std::string *err) {
        ncclGroupStart();
        for (int d = 0; d < n; ++d) {
          ncclResult_t res;
          if (coll == "allreduce")
            res = ncclAllReduce(sendBufs[d], recvBufs[d], count, ncclFloat, ncclSum,
                                nccls[d], streams[d]);
          else if (coll == "allgather")
            res = ncclAllGather(sendBufs[d], recvBufs[d], count, ncclFloat, nccls[d],
                                streams[d]);
          else
            res = ncclReduceScatter(sendBufs[d], recvBufs[d], count, ncclFloat, ncclSum,
                                    nccls[d], streams[d]);
          if (res != ncclSuccess) {
            *err = ncclGetErrorString(res);
            ncclGroupEnd();
            return false;
          }
        }
        return ncclGroupEnd() == ncclSuccess;
      };
      runners.insert(runners.begin(), r);
    }
  }
#endif

  // Sizes: 1 KB .. max, x4 steps.
  std::vector<size_t> sizes;
  for (size_t b = 1024; b <= o.maxBytes; b *= 4)
    sizes.push_back(b);
  if (sizes.back() != o.maxBytes && o.maxBytes >= 1024)
    sizes.push_back(o.maxBytes);

  std::vector<mscclc::rt::TuneSample> samples;
  for (const char *coll : {"allreduce", "allgather", "reducescatter"}) {
    std::vector<Runner *> cols;
    for (Runner &r : runners)
      if (r.collective == coll)
        cols.push_back(&r);
    if (cols.empty())
      continue;
    md << "## " << coll << "\n\n| size |";
    for (Runner *r : cols)
      md << " " << r->name << " |";
    md << " best mscclc / NCCL |\n|---|";
    for (size_t i = 0; i <= cols.size(); ++i)
      md << "---|";
    md << "\n";
    for (size_t bytes : sizes) {
      size_t count = countFor(coll, bytes);
      if (count == 0)
        continue;
      md << "| " << fmtSize(bytes) << " |";
      double ncclUs = -1, best = -1;
      for (Runner *r : cols) {
        if (r->ll && bytes > o.llMaxBytes) {
          md << " - |";
          continue;
        }
        std::string err;
        double us = timeCollective(*r, count, &err);
        if (us < 0) {
          md << " error |";
          printf("%s %s %s: %s\n", coll, r->name.c_str(), fmtSize(bytes).c_str(),
                 err.c_str());
          continue;
        }
        double algbw = double(bytes) / (us * 1e-6) / 1e9;
        double busbw = algbw * busFactor(coll);
        char cell[64];
        if (bytes >= (4u << 20))
          snprintf(cell, sizeof cell, " %.1f (%.0f) |", us, busbw);
        else
          snprintf(cell, sizeof cell, " %.2f |", us);
        md << cell;
        printf("%-14s %-28s %8s %10.2f us %8.1f GB/s busbw\n", coll, r->name.c_str(),
               fmtSize(bytes).c_str(), us, busbw);
        fflush(stdout);
        if (!r->algorithm.empty()) {
          mscclc::rt::TuneSample ts;
          mscclc::rt::parseCollective(coll, &ts.collective);
          ts.algorithm = r->algorithm;
          ts.instances = r->instances;
          ts.bytes = bytes;
          ts.microseconds = us;
          samples.push_back(ts);
        }
        if (r->name == "NCCL")
          ncclUs = us;
        else if (r->name.rfind("ref:", 0) != 0 && (best < 0 || us < best))
          best = us;
      }
      char cell[64];
      if (ncclUs > 0 && best > 0)
        snprintf(cell, sizeof cell, " %.2fx |", ncclUs / best);
      else
        snprintf(cell, sizeof cell, " - |");
      md << cell << "\n";
    }
    md << "\nCells: time in us; from 4 MB on, `time (busbw GB/s)`. "
          "`best mscclc / NCCL` > 1 means the best generated kernel is faster.\n\n";
  }
  std::ofstream(o.out) << md.str();
  printf("wrote %s\n", o.out.c_str());
  if (!o.tune.empty()) {
    mscclc::rt::TuneShape shape;
    shape.ranks = n;
    shape.arch = arch;
    char when[64];
    time_t now = time(nullptr);
    strftime(when, sizeof when, "%Y-%m-%d", gmtime(&now));
    shape.note = std::string("mscclc-bench --tune on ") + std::to_string(gpus) +
                 "x " + prop.name + ", " + when;
    std::string table;
    auto makeTable = [&]() -> mscclc::rt::Status {
      std::string dir, base;
      MSCCLC_TRY(mscclc::rt::stdlibDir(&dir));
      MSCCLC_TRY(mscclc::rt::readFile(dir + "/selection.json", &base));
      return mscclc::rt::tunedSelectionTable(base, shape, samples, &table);
    };
    mscclc::rt::Status ts = makeTable();
    if (!ts.isOk()) {
      fprintf(stderr, "--tune: %s\n", ts.message().c_str());
      return 1;
    }
    std::ofstream(o.tune) << table;
    printf("wrote the tuned table %s (use it with MSCCLC_SELECTION_TABLE=%s)\n",
           o.tune.c_str(), o.tune.c_str());
  }
  for (mscclcProgram_t p : programs)
    mscclcProgramDestroy(p);
  for (mscclcComm_t c : comms)
    mscclcCommDestroy(c);
#ifdef MSCCLC_BENCH_NCCL
  if (o.nccl)
    for (ncclComm_t c : nccls)
      ncclCommDestroy(c);
#endif
  return 0;
}
