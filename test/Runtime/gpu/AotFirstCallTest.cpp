//===- AotFirstCallTest.cpp - A first collective with NVRTC unavailable ---===//
//
// A fresh process uses the ahead-of-time store --store DIR
// (MSCCLC_AOT_DIR), makes NVRTC unavailable (MSCCLC_NVRTC names a missing
// library), the mscclc compiler a program that always fails
// (MSCCLC_COMPILER=/bin/false) and the user cache unused (MSCCLC_CACHE=0),
// then runs two all-reduces through mscclcRunCollective on 2 ranks sharing
// GPU 0: a small one (an LL pick) and a large one (an HB pick, staged).
// Each must give the exact sums, and the runtime's log must show every
// program bundle and every kernel coming from the store, the compiler never
// run and nothing compiled. Skipped (77) without a GPU, or where the store
// has no 2-rank f32 kernels for this GPU's architecture. With --jit-cache
// DIR the same calls run without the store, through the compiler, NVRTC
// and the kernel cache in DIR, for comparing first-call times: JIT cold (a
// new DIR) and JIT cached (DIR again; the compiler still runs).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "TestFiles.h"

#include <chrono>
#include <fstream>
#include <sstream>

using namespace gputest;
using mscclc::test::readAll;
using mscclc::test::TempDir;

namespace {

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos;
       p = text.find(what, p + 1))
    ++n;
  return n;
}

/// One all-reduce of `count` floats on both ranks; exact small integers.
bool allReduce(const std::vector<mscclcComm_t> &comms,
               const std::vector<cudaStream_t> &streams, size_t count,
               double *ms) {
  int n = int(comms.size());
  size_t bytes = std::max(count * sizeof(float), size_t(2) << 20);
  std::vector<float *> send(static_cast<size_t>(n)),
      recv(static_cast<size_t>(n));
  std::vector<float> host(count);
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&send[size_t(r)], bytes));
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&recv[size_t(r)], bytes));
    for (size_t i = 0; i < count; ++i)
      host[i] = float((r + 1) * int(i % 7 + 1));
    MSCCLC_CUDA_OR_EXIT(cudaMemcpy(send[size_t(r)], host.data(),
                                   count * sizeof(float),
                                   cudaMemcpyHostToDevice));
  }
  auto start = std::chrono::steady_clock::now();
  MSCCLC_OR_EXIT(mscclcGroupStart());
  for (int r = 0; r < n; ++r)
    MSCCLC_OR_EXIT(mscclcRunCollective(comms[size_t(r)], mscclcCollAllReduce,
                                       send[size_t(r)], recv[size_t(r)], count,
                                       mscclcFloat32, mscclcSum, 0,
                                       streams[size_t(r)]));
  MSCCLC_OR_EXIT(mscclcGroupEnd());
  for (int r = 0; r < n; ++r)
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[size_t(r)]));
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - start)
            .count();
  bool ok = true;
  for (int r = 0; r < n && ok; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaMemcpy(host.data(), recv[size_t(r)],
                                   count * sizeof(float),
                                   cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count && ok; ++i) {
      float want = float(n * (n + 1) / 2 * int(i % 7 + 1));
      if (host[i] != want) {
        fprintf(stderr, "rank %d element %zu of %zu: %g, expected %g\n", r, i,
                count, double(host[i]), double(want));
        ok = false;
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaFree(send[size_t(r)]));
    MSCCLC_CUDA_OR_EXIT(cudaFree(recv[size_t(r)]));
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  std::string store, jitCache;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--store")
      store = argv[++i];
    else if (std::string(argv[i]) == "--jit-cache")
      jitCache = argv[++i];
  if (store.empty()) {
    fprintf(stderr, "usage: runtime-gpu-aot-first-call --store DIR "
                    "[--jit-cache DIR]\n");
    return 2;
  }
  // --jit-cache: for comparison, the same calls without the store, through
  // NVRTC and the kernel cache in DIR (cold when DIR is new, else cached);
  // only the results are checked.
  bool jit = !jitCache.empty();
  // Before the runtime reads any of them.
  TempDir logDir("mscclc-aot-first-call");
  std::string logPath = logDir / "log";
  if (jit) {
    setenv("MSCCLC_AOT", "0", 1);
    setenv("MSCCLC_CACHE_DIR", jitCache.c_str(), 1);
  } else {
    setenv("MSCCLC_AOT_DIR", store.c_str(), 1);
    setenv("MSCCLC_NVRTC", "/nonexistent/libnvrtc.so", 1);
    setenv("MSCCLC_COMPILER", "/bin/false", 1);
    setenv("MSCCLC_CACHE", "0", 1);
  }
  setenv("MSCCLC_LOG", "info", 1);
  setenv("MSCCLC_LOG_FILE", logPath.c_str(), 1);
  setSafeEnvironment();

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no GPU: skipped\n");
    return kSkip;
  }
  int major = 0, minor = 0;
  MSCCLC_CUDA_OR_EXIT(cudaDeviceGetAttribute(
      &major, cudaDevAttrComputeCapabilityMajor, 0));
  MSCCLC_CUDA_OR_EXIT(cudaDeviceGetAttribute(
      &minor, cudaDevAttrComputeCapabilityMinor, 0));
  std::string wanted = ", 2 ranks, rank 0, f32 sum, sm_" +
                       std::to_string(major * 10 + minor);
  if (readAll(store + "/manifest.tsv").find(wanted) == std::string::npos) {
    printf("the store %s has no kernel \"%s\" (MSCCLC_AOT_ARCHS, _RANKS, "
           "_DTYPES): skipped\n",
           store.c_str(), wanted.c_str());
    return kSkip;
  }

  std::vector<int> onGpu0 = {0, 0};
  std::vector<mscclcComm_t> comms(2);
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), 2, onGpu0.data()));
  std::vector<cudaStream_t> streams(2);
  for (cudaStream_t &s : streams)
    MSCCLC_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  bool ok = true;
  for (size_t count : {size_t(1024), size_t(4) << 20}) {
    double ms = 0;
    bool good = allReduce(comms, streams, count, &ms);
    printf("first all-reduce of %zu floats: %s, %.1f ms (selection, the "
           "program, module loads and the kernel)\n",
           count, good ? "exact" : "WRONG", ms);
    ok = ok && good;
  }
  for (cudaStream_t s : streams)
    MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(s));
  for (mscclcComm_t c : comms)
    MSCCLC_OR_EXIT(mscclcCommDestroy(c));

  std::string log = readAll(logPath);
  size_t fromStore = countOf(log, ": ahead-of-time store in ");
  size_t compiled = countOf(log, ": compiled in ");
  size_t bundles = countOf(log, ": program bundle from the ahead-of-time store");
  size_t compilerRuns = countOf(log, "ran the compiler ");
  printf("kernels from the ahead-of-time store: %zu, from the cache: %zu, "
         "compiled: %zu; program bundles from the store: %zu, compiler "
         "runs: %zu\n",
         fromStore, countOf(log, ": cache hit in "), compiled, bundles,
         compilerRuns);
  // Two picks, two ranks each; one program per pick.
  if (!jit && (fromStore < 4 || compiled != 0 || bundles < 2 ||
               compilerRuns != 0)) {
    fprintf(stderr,
            "expected every program and kernel from the store, no compiler "
            "run; the log:\n%s",
            log.c_str());
    ok = false;
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
