//===- NcclGpuTest.cpp - The NCCL library on a GPU, against CPU references ===//
//
// N ranks in this process through ncclCommInitAll, on the GPUs present and
// several per GPU where there are fewer (ncclCommInitAll({0,0,...}) with
// MSCCLC_ALLOW_SHARED_GPU=1, which real NCCL refuses). Modes, one per
// process because the kernels' time-out and the fallback policy are read
// once per process:
//   --collectives (default): every collective, out of place and in place,
//       over the data types and operators, in groups of all ranks, against
//       a CPU reference; several collectives aggregated in one group; CUDA
//       graph capture (after a first call, and as a communicator's very
//       first call); PreMulSum (native, host and device scalars, one per
//       rank); split (an all-reduce on each half); a non-blocking
//       communicator; destroyed
//       operators and communicators refused; the shared GPU refused
//       without MSCCLC_ALLOW_SHARED_GPU.
//   --timeout-test: rank 0 alone in an all-reduce: its kernel times out
//       (MSCCLC_TIMEOUT_MS=2000) and ncclCommGetAsyncError reports it
//       without blocking.
//   --abort-test: rank 0 alone in an all-reduce: ncclCommAbort ends its
//       waiting kernel long before the time-out.
//   --fallback-test: one rank per GPU with MSCCLC_NCCL_FALLBACK=all: every
//       collective, PreMulSum and ncclCommFinalize through the real NCCL
//       (skipped when none is found).
//   --premulsum-test: only the PreMulSum cases of --collectives.
//   --split-test: only the split of --collectives; with MSCCLC_NODE_OF_RANK
//       set (virtual nodes), each half keeps its ranks' nodes.
//   --window-test: all-reduces on symmetric windows run on the caller's
//       buffers (the log says so); windows deregistered, freed, allocated
//       again (at the same address where CUDA gives it) and registered
//       anew; then freed and allocated again without deregistering: the
//       stale window no longer counts, the call is staged, results right.
// Options: --ranks N (default 2), --quick, --real-preloaded PATH (before
// anything else, load the real NCCL at PATH into the global scope, as
// PyTorch does at import: its calls of its own functions then reach ours,
// which must hand them back).
// Prints PASS/FAIL/NOTE lines; exit 0 pass, 1 fail, 77 skipped (no GPU).
//
//===----------------------------------------------------------------------===//

#include "nccl.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kSkip = 77;
int failures = 0;
int passes = 0;

void check(bool ok, const std::string &what) {
  printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  fflush(stdout);
  ok ? ++passes : ++failures;
}

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
              cudaGetErrorString(e_));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

std::string lastError() { return ncclGetLastError(nullptr); }

enum class Coll { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, Gather, Scatter };
const char *collName(Coll c) {
  const char *names[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                         "Reduce", "AlltoAll", "Gather", "Scatter"};
  return names[int(c)];
}
bool reducing(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce;
}

size_t elemSize(ncclDataType_t t) {
  switch (t) {
  case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
  default: return 8;
  }
}
const char *typeName(ncclDataType_t t) {
  const char *names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                         "float16", "float32", "float64", "bfloat16",
                         "f8e4m3", "f8e5m2"};
  return names[int(t)];
}
bool isFloat(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 ||
         t == ncclBfloat16 || t == ncclFloat8e4m3 || t == ncclFloat8e5m2;
}
const char *opName(int op) {
  const char *names[] = {"sum", "prod", "max", "min", "avg"};
  return op < 5 ? names[op] : "premulsum";
}

void store(ncclDataType_t t, void *p, size_t i, double v) {
  switch (t) {
  case ncclInt8: static_cast<int8_t *>(p)[i] = int8_t(v); break;
  case ncclUint8: static_cast<uint8_t *>(p)[i] = uint8_t(v); break;
  case ncclInt32: static_cast<int32_t *>(p)[i] = int32_t(v); break;
  case ncclUint32: static_cast<uint32_t *>(p)[i] = uint32_t(v); break;
  case ncclInt64: static_cast<int64_t *>(p)[i] = int64_t(v); break;
  case ncclUint64: static_cast<uint64_t *>(p)[i] = uint64_t(v); break;
  case ncclFloat16: static_cast<__half *>(p)[i] = __float2half(float(v)); break;
  case ncclFloat32: static_cast<float *>(p)[i] = float(v); break;
  case ncclFloat64: static_cast<double *>(p)[i] = v; break;
  case ncclBfloat16: static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16(float(v)); break;
  case ncclFloat8e4m3: static_cast<__nv_fp8_e4m3 *>(p)[i] = __nv_fp8_e4m3(float(v)); break;
  case ncclFloat8e5m2: static_cast<__nv_fp8_e5m2 *>(p)[i] = __nv_fp8_e5m2(float(v)); break;
  default: break;
  }
}

double load(ncclDataType_t t, const void *p, size_t i) {
  switch (t) {
  case ncclInt8: return static_cast<const int8_t *>(p)[i];
  case ncclUint8: return static_cast<const uint8_t *>(p)[i];
  case ncclInt32: return static_cast<const int32_t *>(p)[i];
  case ncclUint32: return static_cast<const uint32_t *>(p)[i];
  case ncclInt64: return double(static_cast<const int64_t *>(p)[i]);
  case ncclUint64: return double(static_cast<const uint64_t *>(p)[i]);
  case ncclFloat16: return __half2float(static_cast<const __half *>(p)[i]);
  case ncclFloat32: return static_cast<const float *>(p)[i];
  case ncclFloat64: return static_cast<const double *>(p)[i];
  case ncclBfloat16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  case ncclFloat8e4m3: return float(static_cast<const __nv_fp8_e4m3 *>(p)[i]);
  case ncclFloat8e5m2: return float(static_cast<const __nv_fp8_e5m2 *>(p)[i]);
  default: return 0;
  }
}

/// Inputs are small integers (1..3), exact in every type, so sums and
/// products over up to 8 ranks stay exact where the type has the bits.
double inputValue(int rank, size_t i) { return double((rank + i) % 3 + 1); }

double combine(int op, double a, double b) {
  switch (op) {
  case ncclProd: return a * b;
  case ncclMax: return std::max(a, b);
  case ncclMin: return std::min(a, b);
  default: return a + b; // sum, avg, premulsum (scaled by the caller)
  }
}

double tolerance(ncclDataType_t t) {
  switch (t) {
  case ncclFloat16: return 1e-2;
  case ncclBfloat16: return 2e-2;
  case ncclFloat8e4m3: case ncclFloat8e5m2: return 0.15;
  case ncclFloat32: return 1e-5;
  case ncclFloat64: return 1e-12;
  default: return 0;
  }
}

struct World {
  int ranks = 0;
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
};

bool makeWorld(int ranks, World *w) {
  int gpus = 0;
  CUDA_OK(cudaGetDeviceCount(&gpus));
  w->ranks = ranks;
  w->devices.clear();
  for (int r = 0; r < ranks; ++r)
    w->devices.push_back(r % gpus);
  w->comms.assign(size_t(ranks), nullptr);
  ncclResult_t res = ncclCommInitAll(w->comms.data(), ranks, w->devices.data());
  if (res != ncclSuccess) {
    check(false, std::string("ncclCommInitAll: ") + ncclGetErrorString(res) +
                     ": " + lastError());
    return false;
  }
  w->streams.assign(size_t(ranks), nullptr);
  for (int r = 0; r < ranks; ++r) {
    CUDA_OK(cudaSetDevice(w->devices[size_t(r)]));
    CUDA_OK(cudaStreamCreateWithFlags(&w->streams[size_t(r)], cudaStreamNonBlocking));
  }
  return true;
}

void endWorld(World *w, bool abort = false) {
  for (int r = 0; r < w->ranks; ++r) {
    if (w->streams[size_t(r)]) {
      CUDA_OK(cudaSetDevice(w->devices[size_t(r)]));
      CUDA_OK(cudaStreamSynchronize(w->streams[size_t(r)]));
      CUDA_OK(cudaStreamDestroy(w->streams[size_t(r)]));
    }
    if (w->comms[size_t(r)])
      (abort ? ncclCommAbort : ncclCommDestroy)(w->comms[size_t(r)]);
  }
  w->comms.clear();
  w->streams.clear();
}

/// Element counts of a rank's send and receive buffers for NCCL's count.
void bufferElems(Coll c, size_t count, int n, size_t *send, size_t *recv) {
  *send = *recv = count;
  if (c == Coll::AllGather || c == Coll::Gather)
    *recv = count * size_t(n);
  if (c == Coll::ReduceScatter || c == Coll::Scatter)
    *send = count * size_t(n);
  if (c == Coll::AllToAll)
    *send = *recv = count * size_t(n);
}

/// What rank `r` must hold in element `i` of its receive buffer, or NAN
/// where NCCL defines nothing (a reduce's or gather's non-root ranks).
/// `scalars`: each rank's PreMulSum scalar (op >= ncclNumOps).
double expected(Coll c, int op, int n, int root, size_t count, int r, size_t i,
                const std::vector<double> &scalars) {
  auto term = [&](int s, size_t at) {
    return op >= ncclNumOps ? inputValue(s, at) * scalars[size_t(s)]
                            : inputValue(s, at);
  };
  auto reduceAll = [&](size_t at) {
    double v = term(0, at);
    for (int s = 1; s < n; ++s)
      v = combine(op, v, term(s, at));
    if (op == ncclAvg)
      v /= n;
    return v;
  };
  switch (c) {
  case Coll::AllReduce: return reduceAll(i);
  case Coll::Reduce: return r == root ? reduceAll(i) : NAN;
  case Coll::ReduceScatter: return reduceAll(size_t(r) * count + i);
  case Coll::AllGather: return inputValue(int(i / count), i % count);
  case Coll::Gather: return r == root ? inputValue(int(i / count), i % count) : NAN;
  case Coll::Broadcast: return inputValue(root, i);
  case Coll::Scatter: return inputValue(root, size_t(r) * count + i);
  case Coll::AllToAll: return inputValue(int(i / count), size_t(r) * count + i % count);
  }
  return NAN;
}

ncclResult_t call(Coll c, const void *s, void *d, size_t count, ncclDataType_t t,
                  ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t st) {
  switch (c) {
  case Coll::AllReduce: return ncclAllReduce(s, d, count, t, op, comm, st);
  case Coll::AllGather: return ncclAllGather(s, d, count, t, comm, st);
  case Coll::ReduceScatter: return ncclReduceScatter(s, d, count, t, op, comm, st);
  case Coll::Broadcast: return ncclBroadcast(s, d, count, t, root, comm, st);
  case Coll::Reduce: return ncclReduce(s, d, count, t, op, root, comm, st);
  case Coll::AllToAll: return ncclAlltoAll(s, d, count, t, comm, st);
  case Coll::Gather: return ncclGather(s, d, count, t, root, comm, st);
  case Coll::Scatter: return ncclScatter(s, d, count, t, root, comm, st);
  }
  return ncclInternalError;
}

struct Buffers {
  std::vector<void *> send, recv;
  size_t sendElems = 0, recvElems = 0;
};

enum class Placement { OutOfPlace, InPlace };

/// Device buffers of every rank, inputs written, outputs poisoned. In
/// place, the send buffer is NCCL's slice of the receive buffer (or the
/// other way round for reduce-scatter and scatter).
Buffers allocate(const World &w, Coll c, size_t count, ncclDataType_t t,
                 Placement where) {
  Buffers b;
  bufferElems(c, count, w.ranks, &b.sendElems, &b.recvElems);
  size_t es = elemSize(t);
  for (int r = 0; r < w.ranks; ++r) {
    CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
    std::vector<char> host(std::max(b.sendElems, b.recvElems) * es);
    void *send = nullptr, *recv = nullptr;
    if (where == Placement::InPlace) {
      size_t big = std::max(b.sendElems, b.recvElems);
      CUDA_OK(cudaMalloc(&recv, big * es));
      CUDA_OK(cudaMemset(recv, 0xff, big * es));
      send = recv;
      if (c == Coll::AllGather || c == Coll::Gather)
        send = static_cast<char *>(recv) + size_t(r) * count * es;
      if (c == Coll::ReduceScatter || c == Coll::Scatter)
        recv = static_cast<char *>(send) + size_t(r) * count * es;
    } else {
      CUDA_OK(cudaMalloc(&send, b.sendElems * es));
      CUDA_OK(cudaMalloc(&recv, b.recvElems * es));
      CUDA_OK(cudaMemset(recv, 0xff, b.recvElems * es));
    }
    for (size_t i = 0; i < b.sendElems; ++i)
      store(t, host.data(), i, inputValue(r, i));
    CUDA_OK(cudaMemcpy(send, host.data(), b.sendElems * es, cudaMemcpyHostToDevice));
    // The memset, and the copy from pageable memory, may still be under way
    // on the legacy stream when they return; the ranks' non-blocking
    // streams do not wait for it.
    CUDA_OK(cudaDeviceSynchronize());
    b.send.push_back(send);
    b.recv.push_back(recv);
  }
  return b;
}

void release(const World &w, Coll c, const Buffers &b, Placement where) {
  for (int r = 0; r < w.ranks; ++r) {
    CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
    bool sendIsBase = where == Placement::InPlace &&
                      (c == Coll::ReduceScatter || c == Coll::Scatter);
    bool recvIsBase = where == Placement::InPlace && !sendIsBase;
    if (where == Placement::OutOfPlace || sendIsBase)
      CUDA_OK(cudaFree(b.send[size_t(r)]));
    if (where == Placement::OutOfPlace || recvIsBase)
      CUDA_OK(cudaFree(b.recv[size_t(r)]));
  }
}

/// Compares every rank's receive buffer with the reference; "" or the
/// first mismatch.
std::string verify(const World &w, Coll c, const Buffers &b, size_t count,
                   ncclDataType_t t, int op, int root,
                   const std::vector<double> &scalars = {}) {
  size_t es = elemSize(t);
  for (int r = 0; r < w.ranks; ++r) {
    std::vector<char> host(b.recvElems * es);
    CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
    CUDA_OK(cudaMemcpy(host.data(), b.recv[size_t(r)], host.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < b.recvElems; ++i) {
      double want = expected(c, op, w.ranks, root, count, r, i, scalars);
      if (std::isnan(want))
        continue;
      // Integer avg divides as integers do.
      if (op == ncclAvg && !isFloat(t))
        want = std::floor(want);
      double got = load(t, host.data(), i);
      double tol = tolerance(t) * std::max(1.0, std::fabs(want));
      if (std::fabs(got - want) > tol) {
        char msg[200];
        snprintf(msg, sizeof msg, "rank %d element %zu: %g, expected %g", r, i,
                 got, want);
        return msg;
      }
    }
  }
  return "";
}

void syncAll(const World &w) {
  for (int r = 0; r < w.ranks; ++r) {
    CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
    CUDA_OK(cudaStreamSynchronize(w.streams[size_t(r)]));
  }
}

/// Runs one collective on every rank in one group and checks the result.
/// Returns false when the library does not cover it here (a NOTE line):
/// the call must then have been refused with ncclInvalidUsage and a reason.
bool runCase(const World &w, Coll c, size_t count, ncclDataType_t t, int op,
             Placement where, bool mustRun) {
  int root = w.ranks > 1 ? 1 : 0;
  char name[160];
  snprintf(name, sizeof name, "nccl%s %zu %s%s%s %s (%d ranks)", collName(c),
           count, typeName(t), reducing(c) ? " " : "",
           reducing(c) ? opName(op) : "",
           where == Placement::InPlace ? "in place" : "out of place", w.ranks);
  Buffers b = allocate(w, c, count, t, where);
  ncclResult_t first = ncclSuccess;
  std::string why;
  if (ncclGroupStart() != ncclSuccess)
    check(false, std::string(name) + ": ncclGroupStart");
  for (int r = 0; r < w.ranks; ++r) {
    ncclResult_t res = call(c, b.send[size_t(r)], b.recv[size_t(r)], count, t,
                            ncclRedOp_t(op), root, w.comms[size_t(r)],
                            w.streams[size_t(r)]);
    if (res != ncclSuccess && first == ncclSuccess) {
      first = res;
      why = lastError();
    }
  }
  ncclResult_t end = ncclGroupEnd();
  bool ran = false;
  if (first == ncclInvalidUsage && !mustRun && why.find("does not cover") != std::string::npos) {
    printf("NOTE %s: not covered here: %s\n", name, why.c_str());
  } else if (first != ncclSuccess || end != ncclSuccess) {
    check(false, std::string(name) + ": " +
                     ncclGetErrorString(first != ncclSuccess ? first : end) +
                     ": " + (why.empty() ? lastError() : why));
  } else {
    syncAll(w);
    std::string bad = verify(w, c, b, count, t, op, root);
    check(bad.empty(), std::string(name) + (bad.empty() ? "" : ": " + bad));
    ran = true;
  }
  release(w, c, b, where);
  return ran;
}

void testCollectives(const World &w, bool quick) {
  std::vector<size_t> counts = quick ? std::vector<size_t>{1000, 65536}
                                     : std::vector<size_t>{1, 1000, 65536, 1 << 20};
  const Coll all[] = {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter,
                      Coll::Broadcast, Coll::Reduce, Coll::AllToAll,
                      Coll::Gather, Coll::Scatter};
  // Every collective in float32 (sum): stdlib/selection.json serves each
  // on one node and over several (MSCCLC_NODE_OF_RANK's virtual nodes), so
  // each must run natively.
  for (Coll c : all)
    for (size_t count : counts)
      for (Placement where : {Placement::OutOfPlace, Placement::InPlace})
        if (where == Placement::OutOfPlace || c != Coll::AllToAll) // NCCL has no in-place all-to-all
          runCase(w, c, count, ncclFloat32, ncclSum, where, true);
  // Every data type and operator of the reductions.
  const ncclDataType_t types[] = {ncclInt8, ncclUint8, ncclInt32, ncclUint32,
                                  ncclInt64, ncclUint64, ncclFloat16,
                                  ncclFloat32, ncclFloat64, ncclBfloat16,
                                  ncclFloat8e4m3, ncclFloat8e5m2};
  for (Coll c : {Coll::AllReduce, Coll::ReduceScatter, Coll::Reduce})
    for (ncclDataType_t t : types)
      for (int op = ncclSum; op < ncclNumOps; ++op) {
        bool fp8 = t == ncclFloat8e4m3 || t == ncclFloat8e5m2;
        if (fp8 && op == ncclProd)
          continue; // products of 1..3 leave fp8's exact range
        runCase(w, c, counts.back(), t, op, Placement::OutOfPlace, false);
      }
  // The data movers in other widths.
  for (Coll c : {Coll::AllGather, Coll::Broadcast, Coll::AllToAll})
    for (ncclDataType_t t : {ncclUint8, ncclFloat16, ncclInt64})
      runCase(w, c, counts.front(), t, ncclSum, Placement::OutOfPlace, false);
}

/// Two all-reduces and an all-gather per rank in one group: aggregated.
void testAggregation(const World &w) {
  size_t count = 4096;
  Buffers a = allocate(w, Coll::AllReduce, count, ncclFloat32, Placement::OutOfPlace);
  Buffers b = allocate(w, Coll::AllReduce, count * 3, ncclFloat32, Placement::OutOfPlace);
  Buffers g = allocate(w, Coll::AllGather, count, ncclFloat32, Placement::OutOfPlace);
  ncclResult_t res = ncclGroupStart();
  for (int r = 0; r < w.ranks && res == ncclSuccess; ++r) {
    res = ncclAllReduce(a.send[r], a.recv[r], count, ncclFloat32, ncclSum, w.comms[r], w.streams[r]);
    if (res == ncclSuccess)
      res = ncclAllReduce(b.send[r], b.recv[r], count * 3, ncclFloat32, ncclMax, w.comms[r], w.streams[r]);
    if (res == ncclSuccess)
      res = ncclAllGather(g.send[r], g.recv[r], count, ncclFloat32, w.comms[r], w.streams[r]);
  }
  ncclResult_t end = ncclGroupEnd();
  if (res != ncclSuccess || end != ncclSuccess) {
    check(false, "aggregated group: " + lastError());
  } else {
    syncAll(w);
    std::string bad = verify(w, Coll::AllReduce, a, count, ncclFloat32, ncclSum, 0);
    if (bad.empty())
      bad = verify(w, Coll::AllReduce, b, count * 3, ncclFloat32, ncclMax, 0);
    if (bad.empty())
      bad = verify(w, Coll::AllGather, g, count, ncclFloat32, ncclSum, 0);
    check(bad.empty(), "three collectives aggregated in one group" + (bad.empty() ? "" : ": " + bad));
  }
  release(w, Coll::AllReduce, a, Placement::OutOfPlace);
  release(w, Coll::AllReduce, b, Placement::OutOfPlace);
  release(w, Coll::AllGather, g, Placement::OutOfPlace);
}

/// Captures an all-reduce of every rank into one graph per rank and
/// replays it. `warm`: whether the communicator already ran it (else the
/// capture holds the communicator's very first call).
void testGraph(const World &w, bool warm) {
  size_t count = 8192;
  const char *what = warm ? "CUDA graph of an all-reduce (after a first call)"
                          : "CUDA graph of a communicator's first all-reduce";
  Buffers b = allocate(w, Coll::AllReduce, count, ncclFloat32, Placement::OutOfPlace);
  auto group = [&] {
    ncclResult_t res = ncclGroupStart();
    for (int r = 0; r < w.ranks && res == ncclSuccess; ++r)
      res = ncclAllReduce(b.send[r], b.recv[r], count, ncclFloat32, ncclSum,
                          w.comms[r], w.streams[r]);
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
  };
  if (warm && group() != ncclSuccess) {
    check(false, std::string(what) + ": warm-up: " + lastError());
    release(w, Coll::AllReduce, b, Placement::OutOfPlace);
    return;
  }
  syncAll(w);
  for (int r = 0; r < w.ranks; ++r) {
    CUDA_OK(cudaSetDevice(w.devices[r]));
    CUDA_OK(cudaMemsetAsync(b.recv[r], 0, count * 4, w.streams[r]));
    // Global, as torch.cuda.graph captures by default.
    CUDA_OK(cudaStreamBeginCapture(w.streams[r], cudaStreamCaptureModeGlobal));
  }
  ncclResult_t res = group();
  std::string why = lastError();
  std::vector<cudaGraphExec_t> execs(size_t(w.ranks), nullptr);
  std::vector<cudaGraph_t> graphs(size_t(w.ranks), nullptr);
  bool captured = true;
  // Every capture ends before any graph is instantiated: in global mode no
  // such call is allowed while another stream still captures.
  for (int r = 0; r < w.ranks; ++r) {
    CUDA_OK(cudaSetDevice(w.devices[r]));
    cudaError_t e = cudaStreamEndCapture(w.streams[r], &graphs[r]);
    if (e != cudaSuccess || !graphs[r]) {
      captured = false;
      why += std::string(" capture: ") + cudaGetErrorString(e);
      (void)cudaGetLastError();
    }
  }
  for (int r = 0; r < w.ranks; ++r) {
    if (!graphs[r])
      continue;
    CUDA_OK(cudaSetDevice(w.devices[r]));
    CUDA_OK(cudaGraphInstantiate(&execs[r], graphs[r], 0));
    CUDA_OK(cudaGraphDestroy(graphs[r]));
  }
  if (res != ncclSuccess || !captured) {
    check(false, std::string(what) + ": " + why);
  } else {
    for (int replay = 0; replay < 3; ++replay)
      for (int r = 0; r < w.ranks; ++r) {
        CUDA_OK(cudaSetDevice(w.devices[r]));
        CUDA_OK(cudaGraphLaunch(execs[r], w.streams[r]));
      }
    syncAll(w);
    std::string bad = verify(w, Coll::AllReduce, b, count, ncclFloat32, ncclSum, 0);
    check(bad.empty(), std::string(what) + ", replayed 3 times" + (bad.empty() ? "" : ": " + bad));
    // Larger calls after the capture grow the scratch of the programs they
    // run (the captured one's too, for counts its size range still picks
    // it); the graph keeps the scratch it captured.
    for (size_t bigger : {count * 2, count * 4, count * 16, count * 128}) {
      Buffers big = allocate(w, Coll::AllReduce, bigger, ncclFloat32, Placement::OutOfPlace);
      ncclResult_t r2 = ncclGroupStart();
      for (int r = 0; r < w.ranks && r2 == ncclSuccess; ++r)
        r2 = ncclAllReduce(big.send[r], big.recv[r], bigger, ncclFloat32, ncclSum,
                           w.comms[r], w.streams[r]);
      ncclResult_t e2 = ncclGroupEnd();
      syncAll(w);
      std::string bad2 = r2 != ncclSuccess || e2 != ncclSuccess
                             ? lastError()
                             : verify(w, Coll::AllReduce, big, bigger, ncclFloat32, ncclSum, 0);
      if (!bad2.empty())
        check(false, std::string(what) + ": a larger all-reduce after it: " + bad2);
      release(w, Coll::AllReduce, big, Placement::OutOfPlace);
    }
    for (int r = 0; r < w.ranks; ++r) {
      CUDA_OK(cudaSetDevice(w.devices[r]));
      CUDA_OK(cudaMemsetAsync(b.recv[r], 0, count * 4, w.streams[r]));
    }
    for (int r = 0; r < w.ranks; ++r) {
      CUDA_OK(cudaSetDevice(w.devices[r]));
      CUDA_OK(cudaGraphLaunch(execs[r], w.streams[r]));
    }
    syncAll(w);
    bad = verify(w, Coll::AllReduce, b, count, ncclFloat32, ncclSum, 0);
    check(bad.empty(), std::string(what) + ", replayed after larger calls grew the scratch" +
                           (bad.empty() ? "" : ": " + bad));
  }
  for (cudaGraphExec_t e : execs)
    if (e)
      CUDA_OK(cudaGraphExecDestroy(e));
  release(w, Coll::AllReduce, b, Placement::OutOfPlace);
}

/// PreMulSum with host and device scalars, a different one on every rank:
/// the result is the sum of scalar * input over the ranks. All-reduce out
/// of place, reduce-scatter in place, reduce to the last rank. Each rank
/// destroys its operator right after its call, inside the group (NCCL
/// allows it: the call holds what it needs). A destroyed operator is then
/// refused.
void testPreMulSum(const World &w) {
  size_t count = 2048;
  struct Shape {
    Coll coll;
    Placement where;
    int root;
  };
  const Shape shapes[] = {{Coll::AllReduce, Placement::OutOfPlace, 0},
                          {Coll::ReduceScatter, Placement::InPlace, 0},
                          {Coll::Reduce, Placement::OutOfPlace, w.ranks - 1}};
  std::vector<double> scalars;
  for (int r = 0; r < w.ranks; ++r)
    scalars.push_back(r % 2 ? 0.5 : 2.0);
  for (ncclScalarResidence_t residence : {ncclScalarHostImmediate, ncclScalarDevice})
    for (const Shape &shape : shapes) {
      const char *where = residence == ncclScalarDevice ? "device" : "host";
      std::string name = std::string("nccl") + collName(shape.coll) + " PreMulSum (" +
                         where + " scalars)";
      std::vector<float *> devScalar(size_t(w.ranks), nullptr);
      std::vector<ncclRedOp_t> ops(size_t(w.ranks));
      bool made = true;
      for (int r = 0; r < w.ranks; ++r) {
        float scalar = float(scalars[size_t(r)]);
        void *s = &scalar;
        if (residence == ncclScalarDevice) {
          CUDA_OK(cudaSetDevice(w.devices[r]));
          CUDA_OK(cudaMalloc(&devScalar[r], sizeof(float)));
          CUDA_OK(cudaMemcpy(devScalar[r], &scalar, sizeof(float), cudaMemcpyHostToDevice));
          CUDA_OK(cudaDeviceSynchronize()); // see allocate()
          s = devScalar[r];
        }
        ncclResult_t res = ncclRedOpCreatePreMulSum(&ops[r], s, ncclFloat32, residence, w.comms[r]);
        made = made && res == ncclSuccess && ops[r] >= ncclNumOps;
      }
      check(made, "ncclRedOpCreatePreMulSum for " + name);
      Buffers b = allocate(w, shape.coll, count, ncclFloat32, shape.where);
      ncclResult_t first = ncclSuccess;
      std::string why;
      bool destroyed = true;
      ncclGroupStart();
      for (int r = 0; r < w.ranks; ++r) {
        ncclResult_t res = call(shape.coll, b.send[r], b.recv[r], count, ncclFloat32,
                                ops[r], shape.root, w.comms[r], w.streams[r]);
        if (res != ncclSuccess && first == ncclSuccess) {
          first = res;
          why = lastError();
        }
        destroyed = destroyed && ncclRedOpDestroy(ops[r], w.comms[r]) == ncclSuccess;
      }
      ncclResult_t end = ncclGroupEnd();
      check(destroyed, "ncclRedOpDestroy inside the group of " + name);
      if (first == ncclSuccess && end == ncclSuccess) {
        syncAll(w);
        std::string bad = verify(w, shape.coll, b, count, ncclFloat32, ncclNumOps,
                                 shape.root, scalars);
        check(bad.empty(), name + (bad.empty() ? "" : ": " + bad));
      } else {
        check(false, name + ": " + (why.empty() ? lastError() : why));
      }
      for (int r = 0; r < w.ranks; ++r) {
        // A destroyed operator is refused, not used.
        ncclResult_t res = call(shape.coll, b.send[r], b.recv[r], count, ncclFloat32,
                                ops[r], shape.root, w.comms[r], w.streams[r]);
        check(res == ncclInvalidArgument, "a destroyed operator is ncclInvalidArgument");
        if (devScalar[r])
          CUDA_OK(cudaFree(devScalar[r]));
      }
      release(w, shape.coll, b, shape.where);
    }
}

void testQueriesAndErrors(const World &w) {
  for (int r = 0; r < w.ranks; ++r) {
    int count = -1, rank = -1, dev = -1;
    ncclResult_t async = ncclInternalError;
    bool ok = ncclCommCount(w.comms[r], &count) == ncclSuccess && count == w.ranks &&
              ncclCommUserRank(w.comms[r], &rank) == ncclSuccess && rank == r &&
              ncclCommCuDevice(w.comms[r], &dev) == ncclSuccess && dev == w.devices[r] &&
              ncclCommGetAsyncError(w.comms[r], &async) == ncclSuccess &&
              async == ncclSuccess;
    check(ok, "rank " + std::to_string(r) + ": count, rank, device, no async error");
  }
  float *buf = nullptr;
  CUDA_OK(cudaSetDevice(w.devices[0]));
  CUDA_OK(cudaMalloc(&buf, 64));
  check(ncclAllReduce(buf, buf, 4, ncclDataType_t(42), ncclSum, w.comms[0], w.streams[0]) ==
            ncclInvalidArgument, "a bad data type is ncclInvalidArgument");
  check(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclRedOp_t(17), w.comms[0], w.streams[0]) ==
            ncclInvalidArgument, "a bad operator is ncclInvalidArgument");
  check(ncclBroadcast(buf, buf, 4, ncclFloat32, w.ranks, w.comms[0], w.streams[0]) ==
            ncclInvalidArgument, "a root outside the communicator is ncclInvalidArgument");
  check(ncclAllReduce(nullptr, buf, 4, ncclFloat32, ncclSum, w.comms[0], w.streams[0]) ==
            ncclInvalidArgument, "a NULL send buffer is ncclInvalidArgument");
  void *handle = nullptr;
  check(ncclCommRegister(w.comms[0], buf, 64, &handle) == ncclSuccess &&
            ncclCommDeregister(w.comms[0], handle) == ncclSuccess &&
            ncclCommDeregister(w.comms[0], handle) == ncclInvalidArgument,
        "ncclCommRegister/Deregister (twice: refused)");
  CUDA_OK(cudaFree(buf));
  void *mem = nullptr;
  check(ncclMemAlloc(&mem, 1000) == ncclSuccess && mem && ncclMemFree(mem) == ncclSuccess,
        "ncclMemAlloc/ncclMemFree");
}

/// A non-blocking communicator (config.blocking = 0): ncclInProgress (or
/// success) at once, then ncclCommGetAsyncError reaches ncclSuccess.
void testNonBlockingInit() {
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  CUDA_OK(cudaSetDevice(0));
  ncclResult_t res = ncclGetUniqueId(&id);
  if (res == ncclSuccess)
    res = ncclCommInitRankConfig(&comm, 1, id, 0, &config);
  check((res == ncclInProgress || res == ncclSuccess) && comm,
        std::string("non-blocking ncclCommInitRankConfig returns at once: ") +
            ncclGetErrorString(res));
  ncclResult_t state = ncclInProgress;
  auto start = std::chrono::steady_clock::now();
  while (comm && state == ncclInProgress &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  check(state == ncclSuccess, std::string("the non-blocking communicator completes: ") +
                                  ncclGetErrorString(state) + " " + lastError());
  int n = 0;
  check(comm && ncclCommCount(comm, &n) == ncclSuccess && n == 1, "and is usable");
  if (comm)
    ncclCommDestroy(comm);
}

/// Split into even and odd ranks (one group from this thread), then an
/// all-reduce on each half. Under virtual nodes (MSCCLC_NODE_OF_RANK, whose
/// list names the parent's ranks) each half keeps its ranks' nodes.
void testSplit(const World &w) {
  if (w.ranks < 2)
    return;
  std::vector<ncclComm_t> halves(size_t(w.ranks), nullptr);
  ncclResult_t res = ncclGroupStart();
  for (int r = 0; r < w.ranks && res == ncclSuccess; ++r)
    res = ncclCommSplit(w.comms[r], r % 2, r, &halves[r], nullptr);
  ncclResult_t end = ncclGroupEnd();
  bool ok = res == ncclSuccess && end == ncclSuccess;
  for (int r = 0; r < w.ranks && ok; ++r) {
    int n = 0, rank = -1;
    ok = ncclCommCount(halves[r], &n) == ncclSuccess && ncclCommUserRank(halves[r], &rank) == ncclSuccess &&
         n == (w.ranks + 1 - r % 2) / 2 && rank == r / 2;
  }
  check(ok, "ncclCommSplit into even and odd ranks: " + (ok ? std::string("sizes and ranks") : lastError()));
  ncclComm_t destroyed = halves[0];
  for (int parity = 0; parity < 2; ++parity) {
    World half;
    for (int r = parity; r < w.ranks; r += 2) {
      half.devices.push_back(w.devices[size_t(r)]);
      half.comms.push_back(halves[size_t(r)]);
      half.streams.push_back(nullptr);
      CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
      CUDA_OK(cudaStreamCreateWithFlags(&half.streams.back(), cudaStreamNonBlocking));
    }
    half.ranks = int(half.comms.size());
    if (ok && half.ranks > 1)
      runCase(half, Coll::AllReduce, 1000, ncclFloat32, ncclSum, Placement::OutOfPlace, false);
    endWorld(&half);
  }
  int n = 0;
  check(ncclCommCount(destroyed, &n) == ncclInvalidArgument,
        "a destroyed communicator is ncclInvalidArgument");
}

/// The warm-up every rank joins, then rank 0 alone: its kernel waits for
/// peers that never come.
bool launchAlone(const World &w, Buffers *b, size_t count) {
  *b = allocate(w, Coll::AllReduce, count, ncclFloat32, Placement::OutOfPlace);
  ncclResult_t res = ncclGroupStart();
  for (int r = 0; r < w.ranks && res == ncclSuccess; ++r)
    res = ncclAllReduce(b->send[r], b->recv[r], count, ncclFloat32, ncclSum, w.comms[r], w.streams[r]);
  if (ncclGroupEnd() != ncclSuccess || res != ncclSuccess) {
    check(false, "warm-up all-reduce: " + lastError());
    return false;
  }
  syncAll(w);
  res = ncclAllReduce(b->send[0], b->recv[0], count, ncclFloat32, ncclSum, w.comms[0], w.streams[0]);
  check(res == ncclSuccess, "rank 0's lone all-reduce is enqueued");
  return res == ncclSuccess;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int timeoutTest(int ranks) {
  World w;
  if (!makeWorld(ranks, &w))
    return 1;
  Buffers b;
  if (launchAlone(w, &b, 4096)) {
    auto start = std::chrono::steady_clock::now();
    ncclResult_t async = ncclSuccess;
    double slowest = 0;
    while (async == ncclSuccess && secondsSince(start) < 30) {
      auto t = std::chrono::steady_clock::now();
      if (ncclCommGetAsyncError(w.comms[0], &async) != ncclSuccess)
        break;
      slowest = std::max(slowest, secondsSince(t));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    check(async == ncclRemoteError || async == ncclSystemError,
          std::string("ncclCommGetAsyncError reports the time-out: ") +
              ncclGetErrorString(async) + ": " + lastError());
    check(slowest < 1.0, "ncclCommGetAsyncError never blocks (slowest poll " +
                             std::to_string(slowest) + " s)");
  }
  endWorld(&w, true);
  return failures ? 1 : 0;
}

int abortTest(int ranks) {
  World w;
  if (!makeWorld(ranks, &w))
    return 1;
  Buffers b;
  if (launchAlone(w, &b, 4096)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ncclResult_t async = ncclInternalError;
    check(ncclCommGetAsyncError(w.comms[0], &async) == ncclSuccess && async == ncclSuccess,
          "no async error while the kernel waits");
    auto start = std::chrono::steady_clock::now();
    check(ncclCommAbort(w.comms[0]) == ncclSuccess, "ncclCommAbort");
    w.comms[0] = nullptr;
    CUDA_OK(cudaSetDevice(w.devices[0]));
    CUDA_OK(cudaStreamSynchronize(w.streams[0]));
    double took = secondsSince(start);
    check(took < 10, "the aborted kernel ended in " + std::to_string(took) +
                         " s (time-out 30 s)");
  }
  endWorld(&w, true);
  return failures ? 1 : 0;
}

int fallbackTest(bool quick) {
  int gpus = 0;
  CUDA_OK(cudaGetDeviceCount(&gpus));
  World w;
  if (!makeWorld(1, &w))
    return 1;
  // Probe: with MSCCLC_NCCL_FALLBACK=all, no real NCCL means a refusal.
  float *buf = nullptr;
  CUDA_OK(cudaMalloc(&buf, 64));
  ncclResult_t res = ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, w.comms[0], w.streams[0]);
  CUDA_OK(cudaStreamSynchronize(w.streams[0]));
  CUDA_OK(cudaFree(buf));
  if (res == ncclInvalidUsage && lastError().find("no fallback NCCL") != std::string::npos) {
    printf("SKIP no real NCCL: %s\n", lastError().c_str());
    endWorld(&w);
    return kSkip;
  }
  for (Coll c : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast,
                 Coll::Reduce, Coll::AllToAll, Coll::Gather, Coll::Scatter})
    runCase(w, c, quick ? 1000 : 65536, ncclFloat32, ncclSum, Placement::OutOfPlace, true);
  runCase(w, Coll::AllReduce, 4096, ncclBfloat16, ncclAvg, Placement::OutOfPlace, true);
  testPreMulSum(w);
  testGraph(w, true);
  check(ncclCommFinalize(w.comms[0]) == ncclSuccess,
        "ncclCommFinalize on the fallback: " + lastError());
  ncclResult_t async = ncclInternalError;
  check(ncclCommGetAsyncError(w.comms[0], &async) == ncclSuccess && async == ncclSuccess,
        "no async error after ncclCommFinalize");
  endWorld(&w);
  return failures ? 1 : 0;
}

/// One part of --collectives alone (--premulsum-test, --split-test).
int partOfCollectives(int ranks, void (*part)(const World &)) {
  World w;
  if (!makeWorld(ranks, &w))
    return 1;
  part(w);
  endWorld(&w);
  return failures ? 1 : 0;
}

int collectivesTest(int ranks, bool quick) {
  int gpus = 0;
  CUDA_OK(cudaGetDeviceCount(&gpus));
  // Several ranks on one GPU: refused unless allowed, as NCCL refuses it.
  if (ranks > gpus) {
    unsetenv("MSCCLC_ALLOW_SHARED_GPU");
    std::vector<ncclComm_t> comms(static_cast<size_t>(ranks), nullptr);
    std::vector<int> devs(static_cast<size_t>(ranks), 0);
    ncclResult_t res = ncclCommInitAll(comms.data(), ranks, devs.data());
    check(res == ncclInvalidUsage &&
              lastError().find("MSCCLC_ALLOW_SHARED_GPU") != std::string::npos,
          "a shared GPU is refused without MSCCLC_ALLOW_SHARED_GPU: " + lastError());
    setenv("MSCCLC_ALLOW_SHARED_GPU", "1", 1);
  }
  World first;
  if (makeWorld(ranks, &first)) {
    testGraph(first, false); // the communicators' very first call
    endWorld(&first);
  }
  World w;
  if (!makeWorld(ranks, &w))
    return 1;
  testQueriesAndErrors(w);
  testCollectives(w, quick);
  testAggregation(w);
  testGraph(w, true);
  testPreMulSum(w);
  testSplit(w);
  testNonBlockingInit();
  endWorld(&w);
  return failures ? 1 : 0;
}

} // namespace

/// Rank r's send holds r + 1 + (i % 7) * base; the all-reduce's sum is
/// checked on every rank.
bool windowAllReduce(const World &w, const std::vector<float *> &send,
                     const std::vector<float *> &recv, size_t count,
                     float base, const std::string &what) {
  std::vector<float> host(count);
  for (int r = 0; r < w.ranks; ++r) {
    for (size_t i = 0; i < count; ++i)
      host[i] = float(r + 1) + float(i % 7) * base;
    CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
    CUDA_OK(cudaMemcpy(send[size_t(r)], host.data(), count * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(recv[size_t(r)], 0, count * 4));
  }
  CUDA_OK(cudaDeviceSynchronize());
  ncclResult_t res = ncclGroupStart();
  for (int r = 0; r < w.ranks && res == ncclSuccess; ++r)
    res = ncclAllReduce(send[size_t(r)], recv[size_t(r)], count, ncclFloat32, ncclSum,
                        w.comms[size_t(r)], w.streams[size_t(r)]);
  ncclResult_t end = ncclGroupEnd();
  if (res != ncclSuccess || end != ncclSuccess) {
    check(false, what + ": " + lastError());
    return false;
  }
  syncAll(w);
  float n = float(w.ranks);
  bool ok = true;
  for (int r = 0; r < w.ranks && ok; ++r) {
    CUDA_OK(cudaMemcpy(host.data(), recv[size_t(r)], count * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count && ok; ++i)
      ok = host[i] == n * (n + 1) / 2 + n * float(i % 7) * base;
  }
  check(ok, what);
  return ok;
}

int windowTest(int ranks, const std::string &logPath) {
  World w;
  if (!makeWorld(ranks, &w))
    return 1;
  const size_t count = size_t(1) << 20; // 4 MiB of float32 per buffer
  std::vector<float *> send(static_cast<size_t>(ranks)), recv(send);
  std::vector<ncclWindow_t> sendWin(static_cast<size_t>(ranks)), recvWin(sendWin);
  auto allocate = [&] {
    for (int r = 0; r < ranks; ++r) {
      CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
      CUDA_OK(cudaMalloc(&send[size_t(r)], count * 4));
      CUDA_OK(cudaMalloc(&recv[size_t(r)], count * 4));
    }
  };
  auto release = [&] {
    CUDA_OK(cudaDeviceSynchronize());
    for (int r = 0; r < ranks; ++r) {
      CUDA_OK(cudaSetDevice(w.devices[size_t(r)]));
      CUDA_OK(cudaFree(send[size_t(r)]));
      CUDA_OK(cudaFree(recv[size_t(r)]));
    }
  };
  auto registerAll = [&] {
    ncclResult_t res = ncclGroupStart();
    for (int r = 0; r < ranks && res == ncclSuccess; ++r) {
      res = ncclCommWindowRegister(w.comms[size_t(r)], send[size_t(r)], count * 4,
                                   &sendWin[size_t(r)], NCCL_WIN_COLL_SYMMETRIC);
      if (res == ncclSuccess)
        res = ncclCommWindowRegister(w.comms[size_t(r)], recv[size_t(r)], count * 4,
                                     &recvWin[size_t(r)], NCCL_WIN_COLL_SYMMETRIC);
    }
    ncclResult_t end = ncclGroupEnd();
    check(res == ncclSuccess && end == ncclSuccess,
          "ncclCommWindowRegister (symmetric) on every rank" +
              (res == ncclSuccess ? std::string() : ": " + lastError()));
  };
  auto deregisterAll = [&] {
    bool ok = true;
    for (int r = 0; r < ranks; ++r)
      ok &= ncclCommWindowDeregister(w.comms[size_t(r)], sendWin[size_t(r)]) == ncclSuccess &&
            ncclCommWindowDeregister(w.comms[size_t(r)], recvWin[size_t(r)]) == ncclSuccess;
    check(ok, "ncclCommWindowDeregister on every rank");
  };
  allocate();
  registerAll();
  windowAllReduce(w, send, recv, count, 1, "all-reduce on symmetric windows");
  std::vector<float *> before = send;
  deregisterAll();
  release();
  allocate();
  printf("NOTE reallocation at the same address: %s\n",
         send == before ? "yes, on every rank" : "not on every rank");
  registerAll();
  windowAllReduce(w, send, recv, count, 2, "all-reduce on windows registered anew");
  before = send;
  release(); // without deregistering: the windows are stale
  allocate();
  printf("NOTE stale windows over reallocated memory at the same address: %s\n",
         send == before ? "yes, on every rank" : "not on every rank");
  windowAllReduce(w, send, recv, count, 3,
                  "all-reduce on memory that replaced a registered window (staged)");
  deregisterAll();
  release();
  endWorld(&w);
  std::string log;
  if (FILE *f = fopen(logPath.c_str(), "r")) {
    char buf[4096];
    size_t got = 0;
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
      log.append(buf, got);
    fclose(f);
  }
  check(log.find("symmetric windows, no staging copy") != std::string::npos,
        "the log shows the all-reduce ran on the windows (" + logPath + ")");
  // Memory at another address lies in no window at all.
  bool sameAddress = before == send;
  check(log.find(sameAddress ? "was freed after it was registered"
                             : "is in no registered window") != std::string::npos,
        "the log shows the stale window's call was staged");
  remove(logPath.c_str());
  return 0;
}

int main(int argc, char **argv) {
  int ranks = 2;
  bool quick = false;
  std::string preloaded;
  std::string mode = "--collectives";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      ranks = atoi(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else if (a == "--real-preloaded" && i + 1 < argc)
      preloaded = argv[++i];
    else if (a == "--collectives" || a == "--timeout-test" || a == "--abort-test" ||
             a == "--fallback-test" || a == "--premulsum-test" ||
             a == "--window-test" || a == "--split-test")
      mode = a;
    else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  // Never multicast on shared machines; read once per process, like the
  // kernels' time-out and the fallback policy.
  setenv("MSCCLC_DISABLE_MULTICAST", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (mode == "--timeout-test")
    setenv("MSCCLC_TIMEOUT_MS", "2000", 1);
  if (mode == "--abort-test")
    setenv("MSCCLC_TIMEOUT_MS", "30000", 1);
  if (mode == "--fallback-test")
    setenv("MSCCLC_NCCL_FALLBACK", "all", 1);
  std::string windowLog = "/tmp/nccl-window-test-" + std::to_string(getpid()) + ".log";
  if (mode == "--window-test") {
    // The routing log tells a call on the windows from a staged one.
    setenv("MSCCLC_DEBUG", "INFO", 1);
    setenv("MSCCLC_LOG", "info", 1);
    setenv("MSCCLC_LOG_FILE", windowLog.c_str(), 1);
  }
  if (!preloaded.empty()) {
    if (!dlopen(preloaded.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "--real-preloaded: %s\n", dlerror());
      return 2;
    }
    printf("NOTE the real NCCL %s is loaded into the global scope\n", preloaded.c_str());
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    printf("SKIP no GPU\n");
    return kSkip;
  }
  if (ranks < 1) {
    fprintf(stderr, "--ranks must be at least 1\n");
    return 2;
  }
  if (ranks > gpus)
    setenv("MSCCLC_ALLOW_SHARED_GPU", "1", 1);
  int rc = 0;
  if (mode == "--timeout-test")
    rc = timeoutTest(ranks);
  else if (mode == "--abort-test")
    rc = abortTest(ranks);
  else if (mode == "--fallback-test")
    rc = fallbackTest(quick);
  else if (mode == "--premulsum-test")
    rc = partOfCollectives(ranks, testPreMulSum);
  else if (mode == "--split-test")
    rc = partOfCollectives(ranks, testSplit);
  else if (mode == "--window-test")
    rc = windowTest(ranks, windowLog);
  else
    rc = collectivesTest(ranks, quick);
  printf("%d passed, %d failed\n", passes, failures);
  return rc == kSkip ? kSkip : (failures ? 1 : rc);
}
