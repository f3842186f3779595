//===- allreduce_host.cpp - Run an .mscl all-reduce from C++ --------------===//
//
// The smallest complete use of the JIT API: compile an algorithm for the
// number of GPUs, run it in place and out of place, check the result.
//
//   allreduce_host [--nranks N] [file.mscl] [count]
//                                               # one process, every GPU (N
//                                               # ranks: several per GPU
//                                               # where there are fewer)
//   allreduce_host --rank R --nranks N --addr host:port [file.mscl] [count]
//                                               # one process per GPU (e.g.
//                                               # from mpirun or torchrun)
// The compiler is found through MSCCLC_COMPILER, next to libmscclc, or PATH.
//
//===----------------------------------------------------------------------===//

#include "mscclc/CudaCheck.h"
#include "mscclc/mscclc.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

/// Rank r contributes r + 1 + i % 7 at element i: the sum is known.
static float expected(int nranks, size_t i) {
  float s = 0;
  for (int r = 0; r < nranks; ++r)
    s += float(r + 1) + float(i % 7);
  return s;
}

/// One rank's buffers (rank r contributes r + 1 + i % 7) and stream.
struct Rank {
  int rank = 0;
  float *send = nullptr, *recv = nullptr;
  cudaStream_t stream = nullptr;
};

/// Allocates and fills rank `rank`'s buffers on the current device.
static Rank setUp(int rank, size_t count) {
  Rank r;
  r.rank = rank;
  std::vector<float> host(count);
  for (size_t i = 0; i < count; ++i)
    host[i] = float(rank + 1) + float(i % 7);
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&r.send, count * sizeof(float)));
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&r.recv, count * sizeof(float)));
  MSCCLC_CUDA_OR_EXIT(cudaMemcpy(r.send, host.data(), count * sizeof(float),
                                 cudaMemcpyHostToDevice));
  // Non-blocking: ranks that share a GPU must run at once, on streams of
  // their own that do not wait for the legacy default stream.
  MSCCLC_CUDA_OR_EXIT(
      cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  return r;
}

/// Waits for the rank's run, checks its result and frees it; returns errors.
static int checkAndFree(mscclcProgram_t prog, mscclcComm_t comm, Rank &r,
                        int nranks, size_t count) {
  // Waits, and turns a kernel's time-out record into an error message.
  MSCCLC_OR_EXIT(
      mscclcProgramCheck(prog, comm, mscclcFloat32, mscclcSum, r.stream));
  std::vector<float> host(count);
  MSCCLC_CUDA_OR_EXIT(cudaMemcpy(host.data(), r.recv, count * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < count; ++i)
    bad += host[i] != expected(nranks, i);
  printf("rank %d: %zu elements, %d wrong\n", r.rank, count, bad);
  MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(r.stream));
  MSCCLC_CUDA_OR_EXIT(cudaFree(r.send));
  MSCCLC_CUDA_OR_EXIT(cudaFree(r.recv));
  return bad;
}

int main(int argc, char **argv) {
  int rank = -1, nranks = 0;
  std::string addr;
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rank" && i + 1 < argc) rank = atoi(argv[++i]);
    else if (a == "--nranks" && i + 1 < argc) nranks = atoi(argv[++i]);
    else if (a == "--addr" && i + 1 < argc) addr = argv[++i];
    else rest.push_back(a);
  }
  std::string file = rest.size() > 0 ? rest[0] : "stdlib/allreduce_2pa_hb.mscl";
  size_t count = rest.size() > 1 ? strtoull(rest[1].c_str(), nullptr, 10) : 1000003;

  if (rank >= 0) {
    // One process per GPU: every rank derives the same id from the address.
    int devices = 0;
    MSCCLC_CUDA_OR_EXIT(cudaGetDeviceCount(&devices));
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(rank % devices));
    mscclcUniqueId id;
    MSCCLC_OR_EXIT(mscclcUniqueIdFromAddress(&id, addr.c_str()));
    mscclcComm_t comm;
    MSCCLC_OR_EXIT(mscclcCommInitRank(&comm, nranks, id, rank));
    mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
    opts.ranks = nranks;
    mscclcProgram_t prog;
    MSCCLC_OR_EXIT(mscclcProgramCompileFile(&prog, file.c_str(), &opts));
    Rank r = setUp(rank, count);
    MSCCLC_OR_EXIT(mscclcProgramRun(prog, comm, r.send, r.recv, count,
                                    mscclcFloat32, mscclcSum, r.stream));
    int bad = checkAndFree(prog, comm, r, nranks, count);
    MSCCLC_OR_EXIT(mscclcProgramDestroy(prog));
    MSCCLC_OR_EXIT(mscclcCommDestroy(comm));
    return bad ? 1 : 0;
  }

  // One process driving every GPU: one communicator per rank, rank r on GPU
  // r % GPUs (several ranks share a GPU where there are fewer), every rank's
  // buffers first, then one group launches all ranks at once.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess)
    devices = 0; // no driver: nothing to run on
  if (nranks <= 0)
    nranks = devices;
  if (devices < 1) {
    printf("no GPU: nothing to run on\n");
    return 77;
  }
  if (nranks < 2) {
    printf("one GPU: give --nranks N to place N ranks on it\n");
    return 77;
  }
  std::vector<int> deviceOf;
  for (int r = 0; r < nranks; ++r)
    deviceOf.push_back(r % devices);
  std::vector<mscclcComm_t> comms(static_cast<size_t>(nranks));
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), nranks, deviceOf.data()));
  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  opts.ranks = nranks;
  mscclcProgram_t prog;
  MSCCLC_OR_EXIT(mscclcProgramCompileFile(&prog, file.c_str(), &opts));
  std::vector<Rank> ranks;
  for (int r = 0; r < nranks; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf[size_t(r)]));
    ranks.push_back(setUp(r, count));
  }
  MSCCLC_OR_EXIT(mscclcGroupStart());
  for (int r = 0; r < nranks; ++r)
    MSCCLC_OR_EXIT(mscclcProgramRun(prog, comms[size_t(r)], ranks[size_t(r)].send,
                                    ranks[size_t(r)].recv, count, mscclcFloat32,
                                    mscclcSum, ranks[size_t(r)].stream));
  MSCCLC_OR_EXIT(mscclcGroupEnd());
  int total = 0;
  for (int r = 0; r < nranks; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(deviceOf[size_t(r)]));
    total += checkAndFree(prog, comms[size_t(r)], ranks[size_t(r)], nranks, count);
  }
  MSCCLC_OR_EXIT(mscclcProgramDestroy(prog));
  for (int r = 0; r < nranks; ++r)
    MSCCLC_OR_EXIT(mscclcCommDestroy(comms[size_t(r)]));
  printf("%s\n", total ? "FAILED" : "PASSED");
  return total ? 1 : 0;
}
