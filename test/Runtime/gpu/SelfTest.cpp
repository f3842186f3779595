//===- SelfTest.cpp - The runtime on the GPU, with hand-written kernels ---===//
//
// Checks the runtime itself (communicators in all three process models,
// IPC exchange, semaphores, scratch growth, buffer contexts, the port proxy
// with copy engines, LL8 packets, groups, back-to-back launches, CUDA graphs,
// kernel time-outs and their reports, reset, the multicast refusal) with the
// kernels of SelfTestKernels.h, so it does not depend on the code generator.
//
//   runtime-gpu-selftest [--model group|threads|procs|all] [--timeout-test]
//                        [--abort-test] [--quick] [--ranks N]
// --ranks N places N ranks on the GPUs present, several per GPU where there
// are fewer (then the procs model is skipped: ranks sharing a GPU live in
// one process). Default: one rank per GPU, at most 8.
// Exit: 0 pass, 1 fail, 77 skipped (no GPU, or one GPU and no --ranks).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "SelfTestKernels.h"
#include "mscclc/device/KernelArgs.h"

#include <sys/wait.h>
#include <chrono>
#include <barrier>
#include <functional>
#include <thread>
#include <unistd.h>

using namespace gputest;

namespace {

bool quick = false;
/// The GPU of each rank (several ranks share one where there are fewer).
RankLayout layout;

/// The self-test kernels (SelfTestKernels.h).
enum class Kernel { Hb, Port, LL8 };

const char *kernelName(Kernel k) {
  switch (k) {
  case Kernel::Hb: return "selftest_hb";
  case Kernel::Port: return "selftest_port";
  case Kernel::LL8: return "selftest_ll8";
  }
  return "?";
}

/// Rank r's channels, channel i to peer (r + 1 + i) % n. The HB and port
/// kernels signal and wait (one wait slot per channel); the LL8 kernel
/// synchronises through its packets alone.
std::string channelJson(int r, int n, Kernel k) {
  const char *protocol = k == Kernel::Hb    ? ", \"protocol\": \"HB\""
                         : k == Kernel::LL8 ? ", \"protocol\": \"LL\""
                                            : "";
  const char *peerBuf = k == Kernel::Port ? "output" : "scratch";
  bool sync = k != Kernel::LL8;
  std::string s;
  for (int i = 0; i + 1 < n; ++i) {
    int peer = (r + 1 + i) % n;
    int peerIndex = (r - peer - 1 + 2 * n) % n;
    s += std::string(i ? "," : "") + "{\"index\": " + std::to_string(i) +
         ", \"name\": \"c" + std::to_string(r) + "_" + std::to_string(peer) +
         "\", \"peer\": " + std::to_string(peer) + protocol +
         ", \"id\": 0, \"peerIndex\": " + std::to_string(peerIndex) +
         ", \"block\": 0, \"group\": 1, \"waitSlot\": " +
         std::to_string(sync ? i : -1) +
         ", \"signals\": " + (sync ? "true" : "false") +
         ", \"waits\": " + (sync ? "true" : "false") +
         ", \"peerBuffers\": [\"" + peerBuf + "\"]}";
  }
  return s;
}

/// The plan of a self-test kernel for n ranks.
std::string selfTestPlan(Kernel k, int n, bool inPlace) {
  std::string name = kernelName(k);
  bool gather = k != Kernel::Hb;
  std::string scratch =
      k == Kernel::Hb ? "{\"name\": \"recv\", \"index\": 0, \"chunks\": " +
                            std::to_string(n) + "}"
      : k == Kernel::LL8
          ? "{\"name\": \"packets\", \"index\": 0, \"chunks\": " +
                std::to_string(n) + ", \"packet\": true}"
          : "";
  int waitSlots = k == Kernel::LL8 ? 0 : n - 1;
  std::string s = "{\"format\": \"mscclc-plan\", \"version\": 1, "
                  "\"abiVersion\": " + std::to_string(MSCCLC_ABI_VERSION) +
                  ", \"name\": \"" + name +
                  "\", \"collective\": \"" +
                  (gather ? "allgather" : "allreduce") +
                  "\", \"ranks\": " + std::to_string(n) +
                  ", \"chunks\": 1, \"inputChunks\": 1, \"outputChunks\": " +
                  std::to_string(gather ? n : 1) +
                  ", \"inPlace\": " + (inPlace ? "true" : "false") +
                  ", \"threadsPerBlock\": 512, "
                  "\"dtypes\": [\"f32\", \"f16\", \"bf16\", \"i32\"], "
                  "\"redops\": [\"sum\"], \"usesPortChannels\": " +
                  (k == Kernel::Port ? "true" : "false") +
                  ", \"usesSwitchChannels\": false, \"scratch\": [" + scratch +
                  "], \"rankPlans\": [";
  for (int r = 0; r < n; ++r) {
    std::string chans = channelJson(r, n, k);
    bool port = k == Kernel::Port;
    s += std::string(r ? "," : "") + "{\"rank\": " + std::to_string(r) +
         ", \"kernel\": \"" + name + "_rank" + std::to_string(r) +
         "\", \"blocks\": 1, \"waitSlots\": " + std::to_string(waitSlots) +
         ", \"memoryChannels\": [" + (port ? "" : chans) +
         "], \"portChannels\": [" + (port ? chans : "") +
         "], \"switchChannels\": []}";
  }
  return s + "]}";
}

struct Programs {
  mscclcProgram_t hb = nullptr, hbInPlace = nullptr, port = nullptr,
                  ll8 = nullptr, sw = nullptr;

  mscclcProgram_t of(Kernel k, bool inPlace) const {
    switch (k) {
    case Kernel::Hb: return inPlace ? hbInPlace : hb;
    case Kernel::Port: return port;
    case Kernel::LL8: return ll8;
    }
    return nullptr;
  }
  void destroy() {
    for (mscclcProgram_t p : {hb, hbInPlace, port, ll8, sw})
      mscclcProgramDestroy(p);
  }
};

mscclcProgram_t createProgram(const std::string &plan) {
  mscclcProgram_t p;
  MSCCLC_OR_EXIT(
      mscclcProgramCreateFromGenerated(&p, selfTestSource(), plan.c_str()));
  return p;
}

Programs makePrograms(int n) {
  Programs p;
  p.hb = createProgram(selfTestPlan(Kernel::Hb, n, false));
  p.hbInPlace = createProgram(selfTestPlan(Kernel::Hb, n, true));
  p.port = createProgram(selfTestPlan(Kernel::Port, n, false));
  p.ll8 = createProgram(selfTestPlan(Kernel::LL8, n, false));
  std::string sw = selfTestPlan(Kernel::Hb, n, false);
  sw.replace(sw.find("\"usesSwitchChannels\": false"), 27,
             "\"usesSwitchChannels\": true");
  p.sw = createProgram(sw);
  return p;
}

/// The cases every process model runs: (kernel, in place).
const std::pair<Kernel, bool> kCases[] = {{Kernel::Hb, false},
                                          {Kernel::Hb, true},
                                          {Kernel::Port, false},
                                          {Kernel::LL8, false}};

uint64_t seedOf(int rank, size_t count, DType t, int round) {
  return 0x9e3779b9ull * uint64_t(rank + 1) + count * 131 + uint64_t(t) * 7 +
         uint64_t(round) * 100003;
}

/// All-reduce (hb) or all-gather (port, ll8) reference from every rank's
/// seed.
std::vector<double> reference(bool gather, int n, int rank, size_t count,
                              DType t, int round, double *mag) {
  (void)rank;
  std::vector<char> buf(count * sizeOf(t));
  std::vector<double> ref(gather ? count * size_t(n) : count, 0.0);
  *mag = 0;
  for (int r = 0; r < n; ++r) {
    fillRandom(t, buf.data(), count, seedOf(r, count, t, round));
    for (size_t i = 0; i < count; ++i) {
      double v = load(t, buf.data(), i);
      if (gather)
        ref[size_t(r) * count + i] = v;
      else
        ref[i] += v;
      *mag = std::max(*mag, std::fabs(v));
    }
  }
  return ref;
}

/// One rank's buffers for a case.
struct Case {
  Kernel kernel = Kernel::Hb;
  bool inPlace = false;
  DType t = DType::F32;
  size_t count = 0;
  void *send = nullptr, *recv = nullptr;
  size_t sendBytes = 0, recvBytes = 0;

  bool gathers() const { return kernel != Kernel::Hb; }
};

void setUp(Case &c, int n, int rank, int round) {
  c.sendBytes = c.count * sizeOf(c.t);
  c.recvBytes = c.gathers() ? c.sendBytes * size_t(n) : c.sendBytes;
  // Buffers that peers map get allocations of their own (docs/jit-api.md).
  MSCCLC_CUDA_OR_EXIT(
      cudaMalloc(&c.recv, std::max<size_t>(c.recvBytes, 2u << 20)));
  MSCCLC_CUDA_OR_EXIT(cudaMemset(c.recv, 0xff, c.recvBytes)); // poison
  if (c.inPlace) {
    c.send = c.recv;
  } else {
    MSCCLC_CUDA_OR_EXIT(
        cudaMalloc(&c.send, std::max<size_t>(c.sendBytes, 2u << 20)));
  }
  std::vector<char> host(c.sendBytes);
  fillRandom(c.t, host.data(), c.count, seedOf(rank, c.count, c.t, round));
  MSCCLC_CUDA_OR_EXIT(
      cudaMemcpy(c.send, host.data(), c.sendBytes, cudaMemcpyHostToDevice));
  // The memset, and the copy from pageable memory, may still be under way
  // on the legacy stream when they return; the ranks' non-blocking streams
  // do not wait for it.
  MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
}

size_t verify(const Case &c, int n, int rank, int round, const std::string &what) {
  std::vector<char> host(c.recvBytes);
  MSCCLC_CUDA_OR_EXIT(
      cudaMemcpy(host.data(), c.recv, c.recvBytes, cudaMemcpyDeviceToHost));
  double mag = 0;
  std::vector<double> ref =
      reference(c.gathers(), n, rank, c.count, c.t, round, &mag);
  double tol = c.gathers() ? 0 : tolerance(c.t, n, mag);
  return compare(c.t, host.data(), ref, tol, what);
}

void tearDown(Case &c) {
  if (!c.inPlace)
    MSCCLC_CUDA_OR_EXIT(cudaFree(c.send));
  MSCCLC_CUDA_OR_EXIT(cudaFree(c.recv));
  c.send = c.recv = nullptr;
}

std::string describe(const Case &c, const char *model) {
  char buf[160];
  const char *what = c.kernel == Kernel::Hb     ? "hb-allreduce"
                     : c.kernel == Kernel::Port ? "port-allgather"
                                                : "ll8-allgather";
  snprintf(buf, sizeof(buf), "[%s] %s %s count=%zu%s", model, what, name(c.t),
           c.count, c.inPlace ? " in-place" : "");
  return buf;
}

/// The per-rank test body of the thread and process models: every rank runs
/// it on its own communicator; collective calls line up by program order.
int rankMain(int rank, int n, mscclcComm_t comm, const char *model,
             const std::function<void()> &betweenRanks = nullptr) {
  Programs progs = makePrograms(n);
  cudaStream_t stream;
  MSCCLC_CUDA_OR_EXIT(
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto separateRanks = [&] {
    if (betweenRanks)
      betweenRanks();
  };
  int failures = 0;
  std::vector<size_t> counts = {1, 3, 1023, 65536 + 7, (1 << 20) + 3};
  if (!quick)
    counts.push_back((16 << 20) + 1);
  std::vector<DType> types = {DType::F32, DType::F16, DType::BF16, DType::I32};
  int round = 0;
  for (auto [kernel, inPlace] : kCases) {
    for (DType t : types) {
      for (size_t count : counts) {
        Case c;
        c.kernel = kernel;
        c.inPlace = inPlace;
        c.t = t;
        c.count = count;
        ++round;
        setUp(c, n, rank, round);
        separateRanks(); // setUp allocates: see tearDown below
        mscclcProgram_t prog = progs.of(kernel, inPlace);
        MSCCLC_OR_EXIT(mscclcProgramRun(prog, comm, c.send, c.recv, count,
                                        apiType(t), mscclcSum, stream));
        MSCCLC_OR_EXIT(
            mscclcProgramCheck(prog, comm, apiType(t), mscclcSum, stream));
        size_t bad = verify(c, n, rank, round, describe(c, model));
        if (bad) {
          fprintf(stderr, "FAIL rank %d %s: %zu wrong\n", rank, describe(c, model).c_str(), bad);
          ++failures;
        }
        // cudaFree waits for the whole GPU: with ranks sharing it, no rank
        // may launch again until every rank has freed.
        separateRanks();
        tearDown(c);
        separateRanks();
      }
    }
  }
  // 1000 back-to-back launches on the same buffers, then one check; then the
  // same through a CUDA graph.
  for (Kernel kernel : {Kernel::Hb, Kernel::Port, Kernel::LL8}) {
    Case c;
    c.kernel = kernel;
    c.t = DType::F32;
    c.count = 16384 + 5;
    ++round;
    setUp(c, n, rank, round);
    separateRanks();
    mscclcProgram_t prog = progs.of(kernel, false);
    for (int i = 0; i < 1000; ++i)
      MSCCLC_OR_EXIT(mscclcProgramRun(prog, comm, c.send, c.recv, c.count,
                                      mscclcFloat32, mscclcSum, stream));
    MSCCLC_OR_EXIT(
        mscclcProgramCheck(prog, comm, mscclcFloat32, mscclcSum, stream));
    size_t bad = verify(c, n, rank, round, describe(c, model) + " x1000");
    MSCCLC_CUDA_OR_EXIT(cudaMemsetAsync(c.recv, 0xff, c.recvBytes, stream));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    MSCCLC_CUDA_OR_EXIT(
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    MSCCLC_OR_EXIT(mscclcProgramRun(prog, comm, c.send, c.recv, c.count,
                                    mscclcFloat32, mscclcSum, stream));
    MSCCLC_CUDA_OR_EXIT(cudaStreamEndCapture(stream, &graph));
    MSCCLC_CUDA_OR_EXIT(cudaGraphInstantiate(&exec, graph, 0));
    // Instantiating may wait for the whole GPU: no rank may launch before
    // every rank has instantiated.
    separateRanks();
    for (int i = 0; i < 1000; ++i)
      MSCCLC_CUDA_OR_EXIT(cudaGraphLaunch(exec, stream));
    MSCCLC_OR_EXIT(
        mscclcProgramCheck(prog, comm, mscclcFloat32, mscclcSum, stream));
    bad += verify(c, n, rank, round, describe(c, model) + " graph x1000");
    MSCCLC_CUDA_OR_EXIT(cudaGraphExecDestroy(exec));
    MSCCLC_CUDA_OR_EXIT(cudaGraphDestroy(graph));
    if (bad) {
      fprintf(stderr, "FAIL rank %d %s repeated: %zu wrong\n", rank,
              describe(c, model).c_str(), bad);
      ++failures;
    }
    separateRanks();
    tearDown(c);
    separateRanks();
  }
  // SwitchChannel programs are refused here, before any multicast call.
  {
    Case c;
    c.count = 16;
    setUp(c, n, rank, 0);
    mscclcResult_t r = mscclcProgramRun(progs.sw, comm, c.send, c.recv, c.count,
                                        mscclcFloat32, mscclcSum, stream);
    std::string msg = mscclcGetLastError();
    if (r != mscclcUnsupported || msg.find("refused") == std::string::npos) {
      fprintf(stderr, "FAIL rank %d: SwitchChannel run gave %s: %s\n", rank,
              mscclcGetErrorString(r), msg.c_str());
      ++failures;
    } else if (rank == 0) {
      printf("[%s] SwitchChannel refused as required: %s\n", model, msg.c_str());
    }
    tearDown(c);
  }
  MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(stream));
  progs.destroy();
  MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(stream));
  printf("[%s] rank %d: %s\n", model, rank, failures ? "FAILED" : "passed");
  return failures;
}

int runThreads(int n) {
  std::barrier<> allRanks(n);
  mscclcUniqueId id;
  MSCCLC_OR_EXIT(mscclcGetUniqueId(&id));
  std::vector<int> failures(static_cast<size_t>(n), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      mscclcComm_t comm;
      MSCCLC_OR_EXIT(mscclcCommInitRank(&comm, n, id, r));
      failures[size_t(r)] = rankMain(r, n, comm, "threads", [&] {
        if (layout.shared())
          allRanks.arrive_and_wait();
      });
      MSCCLC_OR_EXIT(mscclcCommDestroy(comm));
    });
  for (auto &t : threads)
    t.join();
  int total = 0;
  for (int f : failures)
    total += f;
  return total;
}

int runProcesses(int n) {
  if (layout.shared()) {
    printf("[procs] skipped: ranks that share a GPU live in one process\n");
    return 0;
  }
  mscclcUniqueId id;
  MSCCLC_OR_EXIT(mscclcGetUniqueId(&id)); // the root thread lives in the parent
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      mscclcComm_t comm;
      MSCCLC_OR_EXIT(mscclcCommInitRank(&comm, n, id, r));
      int f = rankMain(r, n, comm, "procs");
      MSCCLC_OR_EXIT(mscclcCommDestroy(comm));
      fflush(stdout);
      _exit(f ? 1 : 0);
    }
    kids.push_back(pid);
  }
  int total = 0;
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      ++total;
  }
  return total;
}

/// One thread drives every GPU: communicators from mscclcCommInitAll, runs
/// inside a group.
int runGroup(int n) {
  std::vector<mscclcComm_t> comms(static_cast<size_t>(n));
  std::vector<int> devices = layout.devices();
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), n, devices.data()));
  Programs progs = makePrograms(n);
  std::vector<cudaStream_t> streams(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    MSCCLC_CUDA_OR_EXIT(
        cudaStreamCreateWithFlags(&streams[size_t(r)], cudaStreamNonBlocking));
  }
  int failures = 0, round = 5000;
  {
    // A program whose thread blocks cannot all be resident at once (with
    // every rank that shares the GPU) is refused before it launches.
    std::string plan = selfTestPlan(Kernel::Hb, n, false);
    for (size_t at; (at = plan.find("\"blocks\": 1,")) != std::string::npos;)
      plan.replace(at, 12, "\"blocks\": 60000,");
    mscclcProgram_t huge = createProgram(plan);
    std::vector<Case> cs(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      cs[size_t(r)].count = 1024;
      setUp(cs[size_t(r)], n, r, 1);
    }
    MSCCLC_OR_EXIT(mscclcGroupStart());
    for (int r = 0; r < n; ++r)
      MSCCLC_OR_EXIT(mscclcProgramRun(huge, comms[size_t(r)], cs[size_t(r)].send,
                                      cs[size_t(r)].recv, 1024, mscclcFloat32,
                                      mscclcSum, streams[size_t(r)]));
    mscclcResult_t res = mscclcGroupEnd();
    std::string msg = mscclcGetLastError();
    bool refused = res == mscclcUnsupported &&
                   msg.find("resident at once") != std::string::npos;
    printf("[group] 60000 blocks per rank: %s (%s)\n",
           refused ? "refused" : "NOT REFUSED", msg.c_str());
    failures += refused ? 0 : 1;
    for (int r = 0; r < n; ++r)
      tearDown(cs[size_t(r)]);
    mscclcProgramDestroy(huge);
  }
  if (layout.shared()) {
    // Ranks 0 and `gpus` share GPU 0: one stream for both would run their
    // kernels one after the other, each waiting for the other; refused.
    int other = layout.gpus;
    Case a, b;
    a.count = b.count = 1024;
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(0));
    setUp(a, n, 0, 1);
    setUp(b, n, other, 1);
    MSCCLC_OR_EXIT(mscclcGroupStart());
    MSCCLC_OR_EXIT(mscclcProgramRun(progs.hb, comms[0], a.send, a.recv,
                                    a.count, mscclcFloat32, mscclcSum,
                                    streams[0]));
    MSCCLC_OR_EXIT(mscclcProgramRun(progs.hb, comms[size_t(other)], b.send,
                                    b.recv, b.count, mscclcFloat32, mscclcSum,
                                    streams[0]));
    mscclcResult_t res = mscclcGroupEnd();
    std::string msg = mscclcGetLastError();
    bool refused = res == mscclcInvalidArgument &&
                   msg.find("same stream") != std::string::npos;
    printf("[group] one stream for ranks 0 and %d on GPU 0: %s (%s)\n", other,
           refused ? "refused" : "NOT REFUSED", msg.c_str());
    failures += refused ? 0 : 1;
    tearDown(a);
    tearDown(b);
  }
  std::vector<size_t> counts = {1, 777, 65536 + 7, (1 << 20) + 3};
  for (auto [kernel, inPlace] : kCases)
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32})
      for (size_t count : counts) {
        ++round;
        std::vector<Case> cs(static_cast<size_t>(n));
        for (int r = 0; r < n; ++r) {
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
          cs[size_t(r)].kernel = kernel;
          cs[size_t(r)].inPlace = inPlace;
          cs[size_t(r)].t = t;
          cs[size_t(r)].count = count;
          setUp(cs[size_t(r)], n, r, round);
        }
        mscclcProgram_t prog = progs.of(kernel, inPlace);
        MSCCLC_OR_EXIT(mscclcGroupStart());
        for (int r = 0; r < n; ++r)
          MSCCLC_OR_EXIT(mscclcProgramRun(
              prog, comms[size_t(r)], cs[size_t(r)].send, cs[size_t(r)].recv,
              count, apiType(t), mscclcSum, streams[size_t(r)]));
        MSCCLC_OR_EXIT(mscclcGroupEnd());
        // Every rank's kernel is done before any buffer is freed: on a
        // shared GPU a free waits for the whole GPU, and holds up the copies
        // that a later rank's kernel may still wait for (a TCP signal).
        for (int r = 0; r < n; ++r) {
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
          MSCCLC_OR_EXIT(mscclcProgramCheck(prog, comms[size_t(r)], apiType(t),
                                            mscclcSum, streams[size_t(r)]));
        }
        for (int r = 0; r < n; ++r) {
          MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
          size_t bad = verify(cs[size_t(r)], n, r, round, describe(cs[size_t(r)], "group"));
          if (bad) {
            fprintf(stderr, "FAIL rank %d %s: %zu wrong\n", r,
                    describe(cs[size_t(r)], "group").c_str(), bad);
            ++failures;
          }
          tearDown(cs[size_t(r)]);
        }
      }
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(streams[size_t(r)]));
  }
  progs.destroy();
  for (mscclcComm_t c : comms)
    mscclcCommDestroy(c);
  printf("[group] %s\n", failures ? "FAILED" : "passed");
  return failures;
}

/// One rank of a test in which only rank 0 launches: its communicator, the
/// self-test programs, a stream and buffers of 4096 floats, with progs.hb
/// prepared (its collective setup done on every rank).
struct LoneLaunchRank {
  int rank = 0;
  mscclcComm_t comm = nullptr;
  Programs progs;
  cudaStream_t stream = nullptr;
  Case c;

  mscclcProgram_t program() const { return progs.of(c.kernel, false); }
  mscclcResult_t run() {
    return mscclcProgramRun(program(), comm, c.send, c.recv, c.count,
                            mscclcFloat32, mscclcSum, stream);
  }
  mscclcResult_t check() {
    return mscclcProgramCheck(program(), comm, mscclcFloat32, mscclcSum, stream);
  }
  mscclcResult_t reset() {
    return mscclcProgramReset(program(), comm, mscclcFloat32, mscclcSum);
  }
};

/// Runs `body` for each of n ranks on its own thread, between the setup of
/// a `kernel` case and the teardown (which destroys the communicator);
/// returns the failures the bodies count. No rank tears down before every
/// body is done: on a shared GPU, freeing memory waits for the whole GPU,
/// and holds up the CUDA calls of the threads that serve a peer's kernel
/// (docs/runtime.md, "Device-wide calls").
int runWithLoneLauncher(int n, Kernel kernel,
                        const std::function<int(LoneLaunchRank &)> &body) {
  mscclcUniqueId id;
  MSCCLC_OR_EXIT(mscclcGetUniqueId(&id));
  std::vector<int> failures(static_cast<size_t>(n), 0);
  std::barrier bodiesDone(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      LoneLaunchRank lr;
      lr.rank = r;
      MSCCLC_OR_EXIT(mscclcCommInitRank(&lr.comm, n, id, r));
      lr.progs = makePrograms(n);
      MSCCLC_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&lr.stream, cudaStreamNonBlocking));
      lr.c.kernel = kernel;
      lr.c.count = 4096;
      setUp(lr.c, n, r, 1);
      MSCCLC_OR_EXIT(mscclcProgramPrepare(lr.program(), lr.comm, lr.c.send,
                                          lr.c.recv, lr.c.count, mscclcFloat32,
                                          mscclcSum, lr.stream));
      failures[size_t(r)] = body(lr);
      bodiesDone.arrive_and_wait();
      tearDown(lr.c);
      MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(lr.stream));
      lr.progs.destroy();
      MSCCLC_OR_EXIT(mscclcCommDestroy(lr.comm));
    });
  for (auto &t : threads)
    t.join();
  int total = 0;
  for (int f : failures)
    total += f;
  return total;
}

/// When the process started: the ranks' reports share it.
const auto kProcessStart = std::chrono::steady_clock::now();

/// Rank 1 never launches: rank 0's wait must time out and be reported with
/// rank/block/channel/op; a reset must make the program usable again, and
/// the communicators must then be destroyed cleanly. Over memory channels
/// (a peer's semaphore) and port channels (the proxy, whose FIFO the
/// timed-out kernel leaves behind).
int runTimeout(int n) {
  // Read once, before any launch; a longer one from the environment stays
  // (the tcp transport's first round trip after a reset may need it).
  setenv("MSCCLC_TIMEOUT_MS", "300", 0);
  int total = 0;
  for (Kernel kernel : {Kernel::Hb, Kernel::Port}) {
    const char *channel = kernel == Kernel::Hb ? "memory channel" : "port channel";
    total += runWithLoneLauncher(n, kernel, [n, channel](LoneLaunchRank &lr) {
      int failures = 0;
      if (lr.rank == 0) {
        MSCCLC_OR_EXIT(lr.run());
        mscclcResult_t res = lr.check();
        std::string msg = mscclcGetLastError();
        printf("[timeout] %s: rank 0 check: %s: %s\n", channel,
               mscclcGetErrorString(res), msg.c_str());
        if (res != mscclcDeviceError ||
            msg.find("rank 0 block 0 timed out") == std::string::npos ||
            msg.find(channel) == std::string::npos)
          ++failures;
      }
      MSCCLC_OR_EXIT(lr.reset());
      // Every rank reports how its run after the reset went, and when (a
      // rank that launches late leaves its peers waiting).
      auto since = [] {
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - kProcessStart)
            .count();
      };
      mscclcResult_t ran = lr.run();
      double launched = since();
      mscclcResult_t checked = ran == mscclcSuccess ? lr.check() : ran;
      std::string msg = checked == mscclcSuccess ? "" : mscclcGetLastError();
      printf("[timeout] %s: rank %d after the reset: launched at %.1f ms, "
             "checked at %.1f ms: %s%s%s\n",
             channel, lr.rank, launched, since(), mscclcGetErrorString(checked),
             msg.empty() ? "" : ": ", msg.c_str());
      if (checked != mscclcSuccess)
        return failures + 1;
      if (verify(lr.c, n, lr.rank, 1, std::string(channel) + ", after reset"))
        ++failures;
      return failures;
    });
  }
  printf("[timeout] %s\n", total ? "FAILED" : "passed");
  return total;
}

/// Rank 1 never launches: rank 0's wait would last until the time-out;
/// mscclcCommAbort from the host must end it long before, be reported as an
/// abort, and refuse later runs. (The time-out is long, not off, so that an
/// abort that does not work fails the test instead of hanging it.)
int runAbort(int n) {
  setenv("MSCCLC_TIMEOUT_MS", "60000", 1); // read once, before any launch
  // The other ranks keep their buffers until rank 0 is done (the teardown
  // waits for every rank's body).
  int total = runWithLoneLauncher(n, Kernel::Hb, [](LoneLaunchRank &lr) {
    if (lr.rank != 0)
      return 0;
    int failures = 0;
    MSCCLC_OR_EXIT(lr.run());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    bool stillRunning = cudaStreamQuery(lr.stream) == cudaErrorNotReady;
    MSCCLC_OR_EXIT(mscclcCommAbort(lr.comm));
    mscclcResult_t res = lr.check();
    std::string msg = mscclcGetLastError();
    printf("[abort] rank 0 (waiting before the abort: %s) check: %s: %s\n",
           stillRunning ? "yes" : "no", mscclcGetErrorString(res),
           msg.c_str());
    if (!stillRunning || res != mscclcDeviceError ||
        msg.find("aborted") == std::string::npos)
      ++failures;
    if (lr.run() == mscclcSuccess)
      ++failures;
    return failures;
  });
  printf("[abort] %s\n", total ? "FAILED" : "passed");
  return total;
}

} // namespace

int main(int argc, char **argv) {
  setSafeEnvironment();
  std::string model = "all";
  bool timeoutTest = false, abortTest = false;
  int ranks = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--model" && i + 1 < argc)
      model = argv[++i];
    else if (a == "--timeout-test")
      timeoutTest = true;
    else if (a == "--abort-test")
      abortTest = true;
    else if (a == "--quick")
      quick = true;
    else if (a == "--ranks" && i + 1 < argc)
      ranks = atoi(argv[++i]);
    else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!chooseLayout(ranks, &layout))
    return kSkip;
  int n = layout.ranks;
  int failures = 0;
  if (timeoutTest)
    return runTimeout(n) ? 1 : 0;
  if (abortTest)
    return runAbort(n) ? 1 : 0;
  if (model == "procs" || model == "all")
    failures += runProcesses(n); // first: CUDA is not initialised yet
  if (model == "threads" || model == "all")
    failures += runThreads(n);
  if (model == "group" || model == "all")
    failures += runGroup(n);
  printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
