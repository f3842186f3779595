//===- allreduce_host.cpp - Run an .mscl all-reduce from C++ --------------===//
//
// The smallest complete use of the JIT API: compile an algorithm for the
// number of GPUs, run it in place and out of place, check the result.
//
//   allreduce_host [file.mscl] [count]          # one process, every GPU
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
#include <thread>
#include <vector>

/// Rank r contributes r + 1 + i % 7 at element i: the sum is known.
static float expected(int nranks, size_t i) {
  float s = 0;
  for (int r = 0; r < nranks; ++r)
    s += float(r + 1) + float(i % 7);
  return s;
}

/// Runs the program on one rank and checks the result; returns errors.
static int runRank(mscclcProgram_t prog, mscclcComm_t comm, int rank, int nranks,
                   size_t count) {
  std::vector<float> host(count);
  for (size_t i = 0; i < count; ++i)
    host[i] = float(rank + 1) + float(i % 7);
  float *send, *recv;
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&send, count * sizeof(float)));
  MSCCLC_CUDA_OR_EXIT(cudaMalloc(&recv, count * sizeof(float)));
  MSCCLC_CUDA_OR_EXIT(cudaMemcpy(send, host.data(), count * sizeof(float),
                                 cudaMemcpyHostToDevice));
  cudaStream_t stream;
  MSCCLC_CUDA_OR_EXIT(cudaStreamCreate(&stream));
  MSCCLC_OR_EXIT(mscclcProgramRun(prog, comm, send, recv, count, mscclcFloat32,
                                  mscclcSum, stream));
  // Waits, and turns a kernel's time-out record into an error message.
  MSCCLC_OR_EXIT(
      mscclcProgramCheck(prog, comm, mscclcFloat32, mscclcSum, stream));
  MSCCLC_CUDA_OR_EXIT(cudaMemcpy(host.data(), recv, count * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < count; ++i)
    bad += host[i] != expected(nranks, i);
  printf("rank %d: %zu elements, %d wrong\n", rank, count, bad);
  MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(stream));
  MSCCLC_CUDA_OR_EXIT(cudaFree(send));
  MSCCLC_CUDA_OR_EXIT(cudaFree(recv));
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
  std::string file = rest.size() > 0 ? rest[0] : "examples/allreduce_2pa_hb.mscl";
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
    int bad = runRank(prog, comm, rank, nranks, count);
    MSCCLC_OR_EXIT(mscclcProgramDestroy(prog));
    MSCCLC_OR_EXIT(mscclcCommDestroy(comm));
    return bad ? 1 : 0;
  }

  // One process driving every GPU: one communicator per device, one thread
  // per device for the runs (a group call from one thread works too).
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess)
    devices = 0; // no driver: nothing to run on
  if (devices < 2) {
    printf("needs two GPUs, found %d\n", devices);
    return 77;
  }
  std::vector<mscclcComm_t> comms(static_cast<size_t>(devices));
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), devices, nullptr));
  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  opts.ranks = devices;
  mscclcProgram_t prog;
  MSCCLC_OR_EXIT(mscclcProgramCompileFile(&prog, file.c_str(), &opts));
  std::vector<int> bad(static_cast<size_t>(devices), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < devices; ++r)
    threads.emplace_back([&, r] {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(r));
      bad[size_t(r)] = runRank(prog, comms[size_t(r)], r, devices, count);
    });
  for (auto &t : threads)
    t.join();
  MSCCLC_OR_EXIT(mscclcProgramDestroy(prog));
  int total = 0;
  for (int r = 0; r < devices; ++r) {
    total += bad[size_t(r)];
    MSCCLC_OR_EXIT(mscclcCommDestroy(comms[size_t(r)]));
  }
  printf("%s\n", total ? "FAILED" : "PASSED");
  return total ? 1 : 0;
}
