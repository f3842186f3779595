//===- RunCollectiveTest.cpp - mscclcRunCollective against CPU references -===//
//
// One process drives every rank (mscclcCommInitAll, several ranks per GPU
// where there are fewer GPUs) and calls mscclcRunCollective for each
// collective the stdlib serves, through a group, on random data; outputs
// are compared with a CPU reference. AllReduce outputs must also be the
// same bits on every rank. Sampled to fit a short device slot:
//  - every dtype (the 12 of mscclcDataType_t, or those --types names) and
//    op (PreMulSum with scalars on the host and on the device) at small
//    counts (1, 3, 1000); references are exact for integers (products
//    wrap as the type does) and fp8 (data on grids where every result is
//    representable, see caseInput and premulScalar);
//  - sum for f32, bf16 and fp8 e4m3 (those of them --types names) at
//    counts up to --max-bytes per buffer;
//  - in place and out of place everywhere;
//  - rooted collectives at root 0 and root nranks-1;
//  - all-reduce and all-gather with rank 0's buffers new at every call.
// Calls the stdlib does not serve (mscclcCollectiveSupported says so) are
// reported as SKIP with the reason.
//
//   runtime-gpu-run-collective [--ranks N] [--max-bytes B] [--quick]
//                              [--types all|f32,i8,...]
//                              [--epoch-wrap] [--soak N [--seed S]]
// --epoch-wrap runs only 64 back-to-back LL calls of all-reduce, all-gather
// and reduce-scatter with the LL epochs started just before their 2^32
// wrap-around (MSCCLC_TEST_EPOCH_START). --soak N runs N random calls
// instead of the matrix: collective, dtype, op and in place from 16 random
// combinations (randomCases says why), root uniform, the count log-uniform
// from 1 element to 4 MiB per buffer (so the selection takes every
// algorithm its table names for them), each checked.
// Exit: 0 pass, 1 fail, 77 skipped (no GPU, or one GPU and no --ranks).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <random>

using namespace gputest;

namespace {

struct Options {
  int ranks = 0;
  size_t maxBytes = size_t(64) << 20;
  bool quick = false;
  bool epochWrap = false;
  int soak = 0; ///< random cases instead of the matrix
  uint64_t seed = 1;
  std::vector<DType> types = allTypes();
};

const char *collName(mscclcCollective_t c) {
  static const char *names[] = {"allreduce", "allgather", "reducescatter",
                                "broadcast", "reduce",    "alltoall",
                                "gather",    "scatter"};
  return names[int(c)];
}
bool reduces(mscclcCollective_t c) {
  return c == mscclcCollAllReduce || c == mscclcCollReduceScatter ||
         c == mscclcCollReduce;
}
bool rooted(mscclcCollective_t c) {
  return c == mscclcCollBroadcast || c == mscclcCollReduce ||
         c == mscclcCollGather || c == mscclcCollScatter;
}
const mscclcCollective_t kCollectives[] = {
    mscclcCollAllReduce, mscclcCollAllGather, mscclcCollReduceScatter,
    mscclcCollBroadcast, mscclcCollReduce,    mscclcCollAllToAll,
    mscclcCollGather,    mscclcCollScatter};
const mscclcRedOp_t kOps[] = {mscclcSum, mscclcProd, mscclcMin, mscclcMax,
                              mscclcAvg, mscclcPreMulSum};

/// Rank r's PreMulSum scalar: a power of two for floats and small integers
/// for integers, so products are exact and the reference needs no
/// rounding. fp8 takes +-1: its test data sums exactly only on its grid,
/// which a power of two other than 1 leaves.
double premulScalar(DType t, int rank) {
  static const double floats[] = {2, 0.5, 1, 4}, ints[] = {2, -1, 3, 1},
                      unsignedInts[] = {2, 1, 3, 1}, fp8[] = {1, -1, 1, -1};
  const double *table = isFp8(t)        ? fp8
                        : isUnsigned(t) ? unsignedInts
                        : isInteger(t)  ? ints
                                        : floats;
  return table[rank % 4];
}
/// PreMulSum's scalars are in device memory on odd ranks, host values on
/// even ones (NCCL lets every rank choose).
bool premulScalarOnDevice(int rank) { return rank % 2 == 1; }

size_t sendElems(mscclcCollective_t c, int n, size_t count) {
  return c == mscclcCollReduceScatter || c == mscclcCollAllToAll ||
                 c == mscclcCollScatter
             ? count * size_t(n)
             : count;
}
size_t recvElems(mscclcCollective_t c, int n, size_t count) {
  return c == mscclcCollAllGather || c == mscclcCollAllToAll ||
                 c == mscclcCollGather
             ? count * size_t(n)
             : count;
}
/// NCCL's in-place offsets: allgather/gather input at rank*count of recv;
/// reducescatter/scatter output at rank*count of send.
size_t inPlaceInputOffset(mscclcCollective_t c, int rank, size_t count) {
  return c == mscclcCollAllGather || c == mscclcCollGather ? size_t(rank) * count : 0;
}
size_t inPlaceOutputOffset(mscclcCollective_t c, int rank, size_t count) {
  return c == mscclcCollReduceScatter || c == mscclcCollScatter
             ? size_t(rank) * count
             : 0;
}

/// The expected output of `rank` (nullopt-like empty: the rank's output is
/// unspecified, e.g. a non-root of reduce), from every rank's input.
std::vector<double> reference(mscclcCollective_t c, mscclcRedOp_t op,
                              DType t, int n, int rank, int root,
                              size_t count,
                              const std::vector<std::vector<char>> &in) {
  auto v = [&](int r, size_t i) { return load(t, in[size_t(r)].data(), i); };
  std::vector<double> ref(recvElems(c, n, count));
  auto term = [&](int r, size_t i) {
    return op == mscclcPreMulSum ? v(r, i) * premulScalar(t, r) : v(r, i);
  };
  auto reduceAt = [&](size_t i) {
    double acc = term(0, i);
    for (int r = 1; r < n; ++r)
      acc = applyOp(op, acc, term(r, i));
    return finishReduction(t, op, acc, n);
  };
  switch (c) {
  case mscclcCollAllReduce:
    for (size_t i = 0; i < count; ++i) ref[i] = reduceAt(i);
    break;
  case mscclcCollReduce:
    if (rank != root) return {};
    for (size_t i = 0; i < count; ++i) ref[i] = reduceAt(i);
    break;
  case mscclcCollReduceScatter:
    for (size_t i = 0; i < count; ++i) ref[i] = reduceAt(size_t(rank) * count + i);
    break;
  case mscclcCollAllGather:
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) ref[size_t(r) * count + i] = v(r, i);
    break;
  case mscclcCollGather:
    if (rank != root) return {};
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) ref[size_t(r) * count + i] = v(r, i);
    break;
  case mscclcCollBroadcast:
    for (size_t i = 0; i < count; ++i) ref[i] = v(root, i);
    break;
  case mscclcCollScatter:
    for (size_t i = 0; i < count; ++i) ref[i] = v(root, size_t(rank) * count + i);
    break;
  case mscclcCollAllToAll:
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i)
        ref[size_t(r) * count + i] = v(r, size_t(rank) * count + i);
    break;
  }
  return ref;
}

struct Counts {
  int pass = 0, fail = 0, skip = 0;
};

/// One PASS or FAIL line (an error, else the mismatches) and its count.
void tally(const std::string &what, const std::string &err, size_t bad,
           Counts *counts) {
  if (!err.empty() || bad) {
    printf("FAIL %s: %s\n", what.c_str(),
           err.empty() ? (std::to_string(bad) + " mismatches").c_str() : err.c_str());
    ++counts->fail;
  } else {
    printf("PASS %s\n", what.c_str());
    ++counts->pass;
  }
  fflush(stdout);
}

struct Case {
  mscclcCollective_t coll;
  DType type;
  mscclcRedOp_t op;
  size_t count;
  bool inPlace;
  int root;
};

/// Runs one case on every rank and checks it; adds to `counts`.
void runCase(const Case &k, const RankLayout &layout,
             const std::vector<mscclcComm_t> &comms,
             const std::vector<cudaStream_t> &streams, Counts *counts) {
  int n = layout.ranks;
  size_t es = sizeOf(k.type);
  std::string what = std::string(collName(k.coll)) + " " + name(k.type) + " " +
                     (reduces(k.coll) ? opName(k.op) : "") +
                     " count=" + std::to_string(k.count) +
                     (k.inPlace ? " in place" : "") +
                     (rooted(k.coll) ? " root=" + std::to_string(k.root) : "");
  int supported = 0;
  MSCCLC_OR_EXIT(mscclcCollectiveSupported(comms[0], k.coll, k.count,
                                           apiType(k.type), k.op, k.root,
                                           k.inPlace, &supported));
  if (!supported) {
    printf("SKIP %s: %s\n", what.c_str(), mscclcGetLastError());
    ++counts->skip;
    return;
  }
  const char *algo = nullptr;
  MSCCLC_OR_EXIT(mscclcCollectiveAlgorithm(comms[0], k.coll, k.count,
                                           apiType(k.type), k.op, k.root,
                                           k.inPlace, &algo));
  std::string algoName = algo;
  what += " [" + algoName + "]";

  size_t sN = sendElems(k.coll, n, k.count), rN = recvElems(k.coll, n, k.count);
  std::vector<std::vector<char>> inputs(static_cast<size_t>(n));
  std::vector<void *> bufs(size_t(n) * 2, nullptr);
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    inputs[size_t(r)].resize(std::max<size_t>(sN, 1) * es);
    uint64_t seed = uint64_t(r) * 1000003 + k.count * 31 + uint64_t(k.coll) * 7 +
                    uint64_t(k.op) * 131 + uint64_t(k.type);
    fillRandom(k.type, inputs[size_t(r)].data(), sN, seed);
    if (k.op == mscclcProd)
      for (size_t i = 0; i < sN; ++i) {
        char *in = inputs[size_t(r)].data();
        store(k.type, in, i, caseInput(k.type, k.op, load(k.type, in, i), i + size_t(r)));
      }
    size_t total = k.inPlace ? std::max(sN + inPlaceInputOffset(k.coll, r, k.count), rN) : rN;
    void *recv = nullptr, *send = nullptr;
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&recv, std::max<size_t>(total * es, 2u << 20)));
    MSCCLC_CUDA_OR_EXIT(cudaMemset(recv, 0xff, total * es));
    if (k.inPlace) {
      send = static_cast<char *>(recv) + inPlaceInputOffset(k.coll, r, k.count) * es;
    } else {
      MSCCLC_CUDA_OR_EXIT(cudaMalloc(&send, std::max<size_t>(sN * es, 2u << 20)));
    }
    MSCCLC_CUDA_OR_EXIT(cudaMemcpy(send, inputs[size_t(r)].data(), sN * es,
                                   cudaMemcpyHostToDevice));
    bufs[size_t(2 * r)] = send;
    bufs[size_t(2 * r + 1)] = recv;
    // The memset, and the copy from pageable memory, may still be under
    // way on the legacy stream when they return; the ranks' non-blocking
    // streams do not wait for it.
    MSCCLC_CUDA_OR_EXIT(cudaDeviceSynchronize());
  }
  // PreMulSum: each rank's scalar as one element of the type, in host
  // memory or (premulScalarOnDevice) device memory.
  std::vector<std::vector<char>> scalars(static_cast<size_t>(n));
  std::vector<void *> deviceScalars(static_cast<size_t>(n), nullptr);
  if (k.op == mscclcPreMulSum)
    for (int r = 0; r < n; ++r) {
      scalars[size_t(r)].resize(es);
      store(k.type, scalars[size_t(r)].data(), 0, premulScalar(k.type, r));
      if (!premulScalarOnDevice(r))
        continue;
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaMalloc(&deviceScalars[size_t(r)], es));
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(deviceScalars[size_t(r)],
                                     scalars[size_t(r)].data(), es,
                                     cudaMemcpyHostToDevice));
    }
  // In place, the call's recvbuff is NCCL's: reducescatter/scatter write at
  // rank*count of the one buffer.
  MSCCLC_OR_EXIT(mscclcGroupStart());
  mscclcResult_t res = mscclcSuccess;
  for (int r = 0; r < n && res == mscclcSuccess; ++r) {
    void *send = bufs[size_t(2 * r)];
    void *recv = bufs[size_t(2 * r + 1)];
    if (k.inPlace)
      recv = static_cast<char *>(recv) + inPlaceOutputOffset(k.coll, r, k.count) * es;
    if (k.op == mscclcPreMulSum) {
      bool onDevice = deviceScalars[size_t(r)] != nullptr;
      const void *scalar = onDevice ? deviceScalars[size_t(r)]
                                    : static_cast<const void *>(scalars[size_t(r)].data());
      res = mscclcRunCollectivePreMulSum(comms[size_t(r)], k.coll, send, recv,
                                         k.count, apiType(k.type), scalar,
                                         onDevice ? 1 : 0, k.root,
                                         streams[size_t(r)]);
      // A host scalar is read at the call: clobber it before the group ends.
      if (!onDevice)
        store(k.type, scalars[size_t(r)].data(), 0, 0.0);
    } else {
      res = mscclcRunCollective(comms[size_t(r)], k.coll, send, recv, k.count,
                                apiType(k.type), k.op, k.root,
                                streams[size_t(r)]);
    }
  }
  std::string err = res == mscclcSuccess ? "" : mscclcGetLastError();
  mscclcResult_t end = mscclcGroupEnd();
  if (res == mscclcSuccess && end != mscclcSuccess)
    err = mscclcGetLastError();
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[size_t(r)]));
  }
  size_t bad = 0;
  std::vector<std::vector<char>> outs(static_cast<size_t>(n));
  if (err.empty()) {
    for (int r = 0; r < n; ++r) {
      std::vector<double> ref =
          reference(k.coll, k.op, k.type, n, r, k.root, k.count, inputs);
      if (ref.empty() && rN)
        continue; // unspecified on this rank
      outs[size_t(r)].resize(std::max<size_t>(rN, 1) * es);
      char *out = static_cast<char *>(bufs[size_t(2 * r + 1)]) +
                  (k.inPlace ? inPlaceOutputOffset(k.coll, r, k.count) * es : 0);
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(outs[size_t(r)].data(), out, rN * es,
                                     cudaMemcpyDeviceToHost));
      double tol = 0;
      if (reduces(k.coll)) {
        double mag = k.op == mscclcProd || k.op == mscclcPreMulSum ? 4.0 : 1.0;
        tol = tolerance(k.type, n, mag);
        if (isInteger(k.type) && k.op == mscclcAvg)
          tol = 1; // rounding of the integer division
      }
      bad += compare(k.type, outs[size_t(r)].data(), ref, tol,
                     what + " rank " + std::to_string(r));
    }
    // Every rank of an all-reduce holds the same bits.
    if (k.coll == mscclcCollAllReduce)
      for (int r = 1; r < n; ++r)
        bad += !sameBits(k.type, outs[0].data(), outs[size_t(r)].data(), rN, 0,
                         r, what);
  }
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    if (!k.inPlace)
      MSCCLC_CUDA_OR_EXIT(cudaFree(bufs[size_t(2 * r)]));
    MSCCLC_CUDA_OR_EXIT(cudaFree(bufs[size_t(2 * r + 1)]));
    if (deviceScalars[size_t(r)])
      MSCCLC_CUDA_OR_EXIT(cudaFree(deviceScalars[size_t(r)]));
  }
  tally(what, err, bad, counts);
}

/// `calls` back-to-back calls of one all-reduce, all-gather or
/// reduce-scatter (f32 sum), each on new data and checked. With
/// `newBuffersOnRank0`, rank 0 takes new buffers at every call and the
/// others keep theirs (as a framework's caching allocator may hand out):
/// algorithms that reach the peers' buffers run on staging, so no call may
/// wait for a set-up the other ranks do not make.
void runRepeated(mscclcCollective_t coll, size_t count, bool inPlace, int calls,
                 bool newBuffersOnRank0, const RankLayout &layout,
                 const std::vector<mscclcComm_t> &comms,
                 const std::vector<cudaStream_t> &streams, Counts *counts) {
  int n = layout.ranks;
  const char *algo = nullptr;
  MSCCLC_OR_EXIT(mscclcCollectiveAlgorithm(comms[0], coll, count, mscclcFloat32,
                                           mscclcSum, 0, inPlace, &algo));
  std::string what = std::string(collName(coll)) + " f32 count=" +
                     std::to_string(count) + (inPlace ? " in place" : "") + " x" +
                     std::to_string(calls) +
                     (newBuffersOnRank0 ? ", rank 0's buffers new at every call" : "") +
                     " [" + algo + "]";
  size_t sN = sendElems(coll, n, count), rN = recvElems(coll, n, count);
  size_t total = inPlace ? std::max(rN, sN) : rN;
  // Exact in f32: small integers.
  auto value = [](int r, size_t i, int call) { return float((r + 1) * 3 + int(i % 7) + call); };
  std::vector<void *> allocations;
  std::vector<void *> recvOf(size_t(n), nullptr), sendOf(size_t(n), nullptr);
  auto give = [&](int r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    void *recv = nullptr, *send = nullptr;
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&recv, std::max<size_t>(total * 4, 2u << 20)));
    allocations.push_back(recv);
    if (inPlace) {
      send = static_cast<char *>(recv) + inPlaceInputOffset(coll, r, count) * 4;
    } else {
      MSCCLC_CUDA_OR_EXIT(cudaMalloc(&send, std::max<size_t>(sN * 4, 2u << 20)));
      allocations.push_back(send);
    }
    recvOf[size_t(r)] = recv;
    sendOf[size_t(r)] = send;
  };
  for (int r = 0; r < n; ++r)
    give(r);
  size_t bad = 0;
  std::string err;
  for (int call = 0; call < calls && err.empty() && !bad; ++call) {
    if (call > 0 && newBuffersOnRank0)
      give(0);
    for (int r = 0; r < n; ++r) {
      std::vector<float> in(sN);
      for (size_t i = 0; i < sN; ++i)
        in[i] = value(r, i, call);
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(sendOf[size_t(r)], in.data(), sN * 4,
                                     cudaMemcpyHostToDevice));
    }
    MSCCLC_OR_EXIT(mscclcGroupStart());
    mscclcResult_t res = mscclcSuccess;
    for (int r = 0; r < n && res == mscclcSuccess; ++r) {
      void *recv = static_cast<char *>(recvOf[size_t(r)]) +
                   (inPlace ? inPlaceOutputOffset(coll, r, count) * 4 : 0);
      res = mscclcRunCollective(comms[size_t(r)], coll, sendOf[size_t(r)], recv,
                                count, mscclcFloat32, mscclcSum, 0,
                                streams[size_t(r)]);
    }
    if (res != mscclcSuccess)
      err = mscclcGetLastError();
    if (mscclcGroupEnd() != mscclcSuccess && err.empty())
      err = mscclcGetLastError();
    for (int r = 0; r < n; ++r) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[size_t(r)]));
    }
    for (int r = 0; r < n && err.empty(); ++r) {
      std::vector<float> out(rN);
      const char *at = static_cast<char *>(recvOf[size_t(r)]) +
                       (inPlace ? inPlaceOutputOffset(coll, r, count) * 4 : 0);
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(out.data(), at, rN * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < rN; ++i) {
        float want = 0;
        if (coll == mscclcCollAllReduce)
          for (int q = 0; q < n; ++q)
            want += value(q, i, call);
        else if (coll == mscclcCollReduceScatter) // rank r's block of the sum
          for (int q = 0; q < n; ++q)
            want += value(q, size_t(r) * count + i, call);
        else // all-gather: block q holds rank q's input
          want = value(int(i / count), i % count, call);
        if (out[i] != want && bad++ < 3)
          fprintf(stderr, "  %s: call %d rank %d element %zu: %g, expected %g\n",
                  what.c_str(), call, r, i, double(out[i]), double(want));
      }
    }
  }
  for (void *p : allocations)
    MSCCLC_CUDA_OR_EXIT(cudaFree(p));
  tally(what, err, bad, counts);
}

/// The matrix of the file comment.
std::vector<Case> matrixCases(const Options &o, int n) {
  std::vector<Case> cases;
  std::vector<size_t> small = {1, 3, 1000};
  std::vector<size_t> large = {65537, (size_t(1) << 20) + 3, size_t(4) << 20};
  if (!o.quick)
    large.push_back(size_t(16) << 20);
  for (mscclcCollective_t c : kCollectives)
    for (int inPlace = 0; inPlace < 2; ++inPlace)
      for (int root : {0, n - 1}) {
        if (!rooted(c) && root != 0)
          continue;
        for (DType t : o.types)
          for (mscclcRedOp_t op : kOps) {
            if (!reduces(c) && op != mscclcSum)
              continue;
            for (size_t count : small)
              cases.push_back({c, t, op, count, bool(inPlace), root});
          }
        for (DType t : {DType::F32, DType::BF16, DType::F8E4M3})
          for (size_t count : large) {
            if (std::find(o.types.begin(), o.types.end(), t) == o.types.end())
              continue;
            size_t bytes = std::max(sendElems(c, n, count), recvElems(c, n, count)) * sizeOf(t);
            if (bytes <= o.maxBytes)
              cases.push_back({c, t, mscclcSum, count, bool(inPlace), root});
          }
      }
  return cases;
}

/// `count` random calls (see --soak): a reproducible sequence per seed.
/// The (collective, dtype, op, in place) of each call comes from a pool of
/// kSoakKinds drawn first: every new combination compiles its kernels
/// (about 2 s of NVRTC per algorithm at 4 ranks), so drawing each call's
/// from all of them would spend the run compiling instead of calling.
constexpr int kSoakKinds = 16;
std::vector<Case> randomCases(int count, uint64_t seed, int n, size_t maxBytes,
                              const std::vector<DType> &types) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t choices) { return size_t(rng() % choices); };
  std::vector<Case> kinds;
  while (int(kinds.size()) < kSoakKinds) {
    Case k;
    k.coll = kCollectives[pick(std::size(kCollectives))];
    k.type = types[pick(types.size())];
    k.op = reduces(k.coll) ? kOps[pick(std::size(kOps))] : mscclcSum;
    k.inPlace = pick(2) == 1;
    kinds.push_back(k);
  }
  std::vector<Case> cases;
  while (int(cases.size()) < count) {
    Case k = kinds[pick(kinds.size())];
    k.root = rooted(k.coll) ? int(pick(size_t(n))) : 0;
    // Log-uniform bytes of the larger buffer, 1 element up to maxBytes.
    size_t es = sizeOf(k.type);
    double lo = std::log(double(es)), hi = std::log(double(maxBytes));
    size_t bytes = size_t(std::exp(lo + (hi - lo) * double(rng() % 1000000) / 1e6));
    size_t perCount = std::max(sendElems(k.coll, n, 1), recvElems(k.coll, n, 1)) * es;
    k.count = std::max<size_t>(1, bytes / perCount);
    cases.push_back(k);
  }
  return cases;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--ranks") o.ranks = atoi(next().c_str());
    else if (a == "--max-bytes") o.maxBytes = size_t(strtoull(next().c_str(), nullptr, 0));
    else if (a == "--quick") o.quick = true;
    else if (a == "--epoch-wrap") o.epochWrap = true;
    else if (a == "--soak") o.soak = atoi(next().c_str());
    else if (a == "--seed") o.seed = strtoull(next().c_str(), nullptr, 0);
    else if (a == "--types") {
      std::string list = next();
      if (!parseTypes(list, &o.types)) {
        fprintf(stderr, "unknown type in %s\n", list.c_str());
        return 2;
      }
    }
    else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  setSafeEnvironment();
  // LL epochs start 32 launches before their wrap-around (every executor
  // made from here on), so 64 launches run across it.
  if (o.epochWrap)
    setenv("MSCCLC_TEST_EPOCH_START", "0xffffffe0", 1);
  RankLayout layout;
  if (!chooseLayout(o.ranks, &layout))
    return kSkip;
  int n = layout.ranks;
  std::vector<mscclcComm_t> comms(static_cast<size_t>(n));
  std::vector<int> devices = layout.devices();
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), n, devices.data()));
  std::vector<cudaStream_t> streams(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&streams[size_t(r)], cudaStreamNonBlocking));
  }

  Counts counts;
  if (o.epochWrap) {
    // Small counts: the LL algorithms, whose packets carry the epoch's flag.
    printf("%d ranks on %d GPU(s), LL epochs from 0xffffffe0\n", n, layout.gpus);
    for (mscclcCollective_t c : {mscclcCollAllReduce, mscclcCollAllGather,
                                 mscclcCollReduceScatter})
      for (int inPlace = 0; inPlace < 2; ++inPlace)
        runRepeated(c, 1000, inPlace, 64, false, layout, comms, streams, &counts);
  }
  if (o.soak > 0) {
    std::vector<Case> cases = randomCases(o.soak, o.seed, n, size_t(4) << 20, o.types);
    printf("%d ranks on %d GPU(s), soak of %zu random calls (seed %llu)\n", n,
           layout.gpus, cases.size(), static_cast<unsigned long long>(o.seed));
    auto start = std::chrono::steady_clock::now();
    for (const Case &k : cases)
      runCase(k, layout, comms, streams, &counts);
    printf("soak: %zu calls in %.0f s\n", cases.size(),
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
               .count());
  } else if (!o.epochWrap) {
    std::vector<Case> cases = matrixCases(o, n);
    printf("%d ranks on %d GPU(s), %zu cases\n", n, layout.gpus, cases.size());
    for (const Case &k : cases)
      runCase(k, layout, comms, streams, &counts);
    for (size_t count : {size_t(1000), size_t(1) << 20})
      for (int inPlace = 0; inPlace < 2; ++inPlace)
        for (mscclcCollective_t c : {mscclcCollAllReduce, mscclcCollAllGather})
          runRepeated(c, count, inPlace, 4, true, layout, comms, streams, &counts);
  }
  for (int r = 0; r < n; ++r)
    MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(streams[size_t(r)]));
  for (mscclcComm_t c : comms)
    MSCCLC_OR_EXIT(mscclcCommDestroy(c));
  printf("%d passed, %d failed, %d skipped\n", counts.pass, counts.fail, counts.skip);
  return counts.fail ? 1 : 0;
}
