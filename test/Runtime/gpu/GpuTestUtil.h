//===- GpuTestUtil.h - Shared helpers of the runtime GPU tests -*- C++ -*-===//
//
// Random data in the checked types, CPU references for the
// collectives, comparison with type-aware tolerances, and the exit codes
// ctest reads (77 = skipped: no GPU).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TEST_RUNTIME_GPUTESTUTIL_H
#define MSCCLC_TEST_RUNTIME_GPUTESTUTIL_H

#include "mscclc/CudaCheck.h"
#include "mscclc/mscclc.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace gputest {

constexpr int kSkip = 77;

inline void setSafeEnvironment() {
  // Never multicast on shared machines (DEVICE.md); the runtime refuses
  // SwitchChannel setup with either variable set.
  setenv("MSCCLC_DISABLE_MULTICAST", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
}

/// The number of CUDA devices, counted in a child process: the tests that
/// fork one process per rank must not initialise CUDA before they do.
inline int countDevicesInChild() {
  int fds[2];
  if (pipe(fds) != 0)
    return 0;
  pid_t pid = fork();
  if (pid == 0) {
    int d = 0;
    if (cudaGetDeviceCount(&d) != cudaSuccess)
      d = 0;
    _exit(write(fds[1], &d, sizeof(d)) == sizeof(d) ? 0 : 1);
  }
  close(fds[1]);
  int devices = 0;
  if (pid < 0 || read(fds[0], &devices, sizeof(devices)) != sizeof(devices))
    devices = 0;
  close(fds[0]);
  if (pid > 0)
    waitpid(pid, nullptr, 0);
  return devices;
}

/// Where the ranks of a test run: rank r on GPU r % gpus. With fewer GPUs
/// than ranks, several ranks share a GPU, which only the models that keep
/// every rank in one process allow (docs/runtime.md).
struct RankLayout {
  int ranks = 0, gpus = 0;
  int deviceOf(int rank) const { return rank % gpus; }
  bool shared() const { return ranks > gpus; }
  std::vector<int> devices() const {
    std::vector<int> d;
    for (int r = 0; r < ranks; ++r)
      d.push_back(deviceOf(r));
    return d;
  }
};

/// `ranks` ranks (0: one per GPU, at most 8) over the GPUs present.
/// Returns false, after printing why, when the test cannot run (no GPU, or
/// fewer than two ranks).
inline bool chooseLayout(int ranks, RankLayout *out) {
  int gpus = countDevicesInChild();
  if (gpus < 1) {
    printf("SKIPPED: no CUDA device\n");
    return false;
  }
  int n = ranks > 0 ? ranks : std::min(gpus, 8);
  if (n < 2) {
    printf("SKIPPED: one GPU and no --ranks: give --ranks N to place N "
           "ranks on it\n");
    return false;
  }
  out->ranks = n;
  out->gpus = gpus;
  if (out->shared())
    printf("%d ranks on %d GPU(s): ranks share GPUs (timings mean nothing "
           "here)\n", n, gpus);
  return true;
}

/// Every element type of the API (mscclcDataType_t).
enum class DType { F32, F16, BF16, F64, I8, U8, I32, U32, I64, U64, F8E4M3, F8E5M2 };

/// All of them, for sweeps over every type.
inline const std::vector<DType> &allTypes() {
  static const std::vector<DType> all = {
      DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8, DType::U8,
      DType::I32, DType::U32, DType::I64, DType::U64, DType::F8E4M3,
      DType::F8E5M2};
  return all;
}

inline bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
inline bool isInteger(DType t) {
  return t == DType::I8 || t == DType::U8 || t == DType::I32 ||
         t == DType::U32 || t == DType::I64 || t == DType::U64;
}
inline bool isUnsigned(DType t) {
  return t == DType::U8 || t == DType::U32 || t == DType::U64;
}

inline const char *name(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F64: return "f64";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::I32: return "i32";
  case DType::U32: return "u32";
  case DType::I64: return "i64";
  case DType::U64: return "u64";
  case DType::F8E4M3: return "f8e4m3";
  case DType::F8E5M2: return "f8e5m2";
  }
  return "?";
}
inline size_t sizeOf(DType t) {
  switch (t) {
  case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2:
    return 1;
  case DType::F16: case DType::BF16:
    return 2;
  case DType::F32: case DType::I32: case DType::U32:
    return 4;
  case DType::F64: case DType::I64: case DType::U64:
    return 8;
  }
  return 4;
}
inline mscclcDataType_t apiType(DType t) {
  switch (t) {
  case DType::F32: return mscclcFloat32;
  case DType::F16: return mscclcFloat16;
  case DType::BF16: return mscclcBfloat16;
  case DType::F64: return mscclcFloat64;
  case DType::I8: return mscclcInt8;
  case DType::U8: return mscclcUint8;
  case DType::I32: return mscclcInt32;
  case DType::U32: return mscclcUint32;
  case DType::I64: return mscclcInt64;
  case DType::U64: return mscclcUint64;
  case DType::F8E4M3: return mscclcFloat8e4m3;
  case DType::F8E5M2: return mscclcFloat8e5m2;
  }
  return mscclcFloat32;
}
/// A type by the name name() gives.
inline bool parseType(const std::string &s, DType *t) {
  for (DType d : allTypes())
    if (s == name(d)) {
      *t = d;
      return true;
    }
  return false;
}
/// A comma-separated list of names, or "all"; false on an unknown name.
inline bool parseTypes(const std::string &list, std::vector<DType> *out) {
  if (list == "all") {
    *out = allTypes();
    return true;
  }
  out->clear();
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos)
      end = list.size();
    DType t;
    if (!parseType(list.substr(begin, end - begin), &t))
      return false;
    out->push_back(t);
    begin = end + 1;
  }
  return true;
}

/// fp8 test data: a value in [-1, 1) snapped to a grid on which every sum
/// of up to 8 ranks' values is exact in the type (halves for e4m3, whose
/// spacing reaches 0.5 only at 4..8; whole numbers for e5m2), so that sums
/// compare exactly and a lost or doubled contribution always shows.
inline float fp8TestValue(DType t, float f) {
  float grid = t == DType::F8E4M3 ? 0.5f : 1.0f;
  return std::nearbyint(f / grid) * grid;
}
inline void storeFp8(DType t, void *base, size_t i, float f) {
  unsigned char bits = __nv_cvt_float_to_fp8(
      f, __NV_SATFINITE, t == DType::F8E4M3 ? __NV_E4M3 : __NV_E5M2);
  static_cast<unsigned char *>(base)[i] = bits;
}
inline double loadFp8(DType t, const void *base, size_t i) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(
      static_cast<const unsigned char *>(base)[i],
      t == DType::F8E4M3 ? __NV_E4M3 : __NV_E5M2);
  return double(__half2float(__half(h)));
}

/// Host values as double, from raw bytes of type t.
inline double load(DType t, const void *base, size_t i) {
  switch (t) {
  case DType::F32: return double(static_cast<const float *>(base)[i]);
  case DType::F16: return double(__half2float(static_cast<const __half *>(base)[i]));
  case DType::BF16:
    return double(__bfloat162float(static_cast<const __nv_bfloat16 *>(base)[i]));
  case DType::F64: return static_cast<const double *>(base)[i];
  case DType::I8: return double(static_cast<const int8_t *>(base)[i]);
  case DType::U8: return double(static_cast<const uint8_t *>(base)[i]);
  case DType::I32: return double(static_cast<const int32_t *>(base)[i]);
  case DType::U32: return double(static_cast<const uint32_t *>(base)[i]);
  case DType::I64: return double(static_cast<const int64_t *>(base)[i]);
  case DType::U64: return double(static_cast<const uint64_t *>(base)[i]);
  case DType::F8E4M3:
  case DType::F8E5M2: return loadFp8(t, base, i);
  }
  return 0;
}

/// An integral value `v` (exact in a double) wrapped into type t's range
/// as two's-complement arithmetic of t's width wraps it: the reference of
/// an integer product that overflows the type.
inline double wrapInteger(DType t, double v) {
  int64_t x = int64_t(v);
  switch (t) {
  case DType::I8: return double(int8_t(uint8_t(x)));
  case DType::U8: return double(uint8_t(x));
  case DType::I32: return double(int32_t(uint32_t(x)));
  case DType::U32: return double(uint32_t(x));
  default: return v; // 64-bit: the tests' values never reach 2^53
  }
}

/// Stores `v` (representable in t, or rounded to nearest; integers
/// wrapped) as element i.
inline void store(DType t, void *base, size_t i, double v) {
  switch (t) {
  case DType::F32: static_cast<float *>(base)[i] = float(v); break;
  case DType::F16: static_cast<__half *>(base)[i] = __float2half(float(v)); break;
  case DType::BF16:
    static_cast<__nv_bfloat16 *>(base)[i] = __float2bfloat16(float(v));
    break;
  case DType::F64: static_cast<double *>(base)[i] = v; break;
  case DType::I8: static_cast<int8_t *>(base)[i] = int8_t(wrapInteger(t, v)); break;
  case DType::U8: static_cast<uint8_t *>(base)[i] = uint8_t(wrapInteger(t, v)); break;
  case DType::I32: static_cast<int32_t *>(base)[i] = int32_t(wrapInteger(t, v)); break;
  case DType::U32: static_cast<uint32_t *>(base)[i] = uint32_t(wrapInteger(t, v)); break;
  case DType::I64: static_cast<int64_t *>(base)[i] = int64_t(v); break;
  case DType::U64: static_cast<uint64_t *>(base)[i] = uint64_t(int64_t(v)); break;
  case DType::F8E4M3:
  case DType::F8E5M2: storeFp8(t, base, i, float(v)); break;
  }
}

/// `v` rounded to type t as store() rounds it.
inline double roundTo(DType t, double v) {
  unsigned char bytes[8];
  store(t, bytes, 0, v);
  return load(t, bytes, 0);
}

/// The test value of type t drawn from 64 random bits `h`: integers small
/// enough that a sum over 8 ranks never overflows the type (i8 [-15, 15],
/// u8 [0, 31], wider types +-100000 or [0, 200000]); floats in [-1, 1),
/// rounded to the type (fp8: on fp8TestValue's grid).
inline double testValue(DType t, uint64_t h) {
  switch (t) {
  case DType::I8: return double(int64_t(h % 31) - 15);
  case DType::U8: return double(h % 32);
  case DType::I32: case DType::I64: return double(int64_t(h % 200001) - 100000);
  case DType::U32: case DType::U64: return double(h % 200001);
  default: break;
  }
  double f = double(int64_t(h >> 40) - (1 << 23)) / double(1 << 23); // [-1, 1)
  return isFp8(t) ? fp8TestValue(t, float(f)) : f;
}

/// Random values: testValue() of a reproducible stream per seed.
inline void fillRandom(DType t, void *base, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i)
    store(t, base, i, testValue(t, rng()));
}

/// "sum", "prod", ... as the API's names for the operators go.
inline const char *opName(mscclcRedOp_t op) {
  static const char *names[] = {"sum", "prod", "min", "max", "avg", "premulsum"};
  return names[int(op)];
}

/// a op b, for a reduction's reference: avg and PreMulSum add (the one
/// scales the sum afterwards, the other each input before).
inline double applyOp(mscclcRedOp_t op, double a, double b) {
  switch (op) {
  case mscclcSum: case mscclcAvg: case mscclcPreMulSum: return a + b;
  case mscclcProd: return a * b;
  case mscclcMin: return std::min(a, b);
  case mscclcMax: return std::max(a, b);
  }
  return 0;
}

/// The reference of a reduction over `n` ranks from `acc`, the inputs
/// combined exactly: integers wrap as the type's arithmetic does; avg is
/// the sum scaled by 1/n in the type (integers truncate toward zero, fp8
/// rounds once, to nearest).
inline double finishReduction(DType t, mscclcRedOp_t op, double acc, int n) {
  if (isInteger(t))
    acc = wrapInteger(t, acc);
  if (op != mscclcAvg)
    return acc;
  if (isInteger(t))
    return std::trunc(acc / n);
  return isFp8(t) ? roundTo(t, acc / n) : acc / n;
}

/// A test value `x` (testValue) turned into an input of `op`; `salt`
/// varies it by element and rank. Products of values in [-1, 1) vanish,
/// and of the integers' ranges leave a double's exact range, so prod takes
/// values near 1 for floats; +-1/2, +-1 or +-2 for fp8 (its grid holds too
/// few values), every product of 8 of which is representable; and -3..3
/// (unsigned: 0..3) for integers, whose products then wrap exactly as the
/// type's arithmetic does (wrapInteger).
inline double caseInput(DType t, mscclcRedOp_t op, double x, uint64_t salt) {
  if (op != mscclcProd)
    return x;
  if (isInteger(t))
    return double(int64_t(x) % 4);
  if (isFp8(t)) {
    static const double powers[] = {0.5, 1, 2};
    double p = powers[salt % 3];
    return x < 0 ? -p : p;
  }
  return 1.0 + x / 8;
}

/// Tolerance for a sum of `terms` values of magnitude <= `mag`: the GPU may
/// add in any order and round every partial sum to the type. Integers, and
/// fp8 on its test grid, sum exactly.
inline double tolerance(DType t, int terms, double mag) {
  if (isInteger(t) || isFp8(t))
    return 0;
  double eps = t == DType::F64   ? 2.3e-16
               : t == DType::F32 ? 1.2e-7
               : t == DType::F16 ? 9.8e-4
                                 : 7.9e-3;
  return (terms + 1) * eps * std::max(1.0, mag) * terms;
}

/// Runs body(begin, end) over [0, n) split across the host's cores. The
/// sweeps generate, reduce and compare up to 64 MiB per rank at 8 ranks,
/// which takes one core longer than the GPU takes to run the collective.
inline void parallelFor(size_t n, const std::function<void(size_t, size_t)> &body) {
  constexpr size_t kMinChunk = size_t(1) << 16; // below it a thread costs more
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  size_t chunks = std::min(cores, (n + kMinChunk - 1) / kMinChunk);
  if (chunks <= 1) {
    body(0, n);
    return;
  }
  size_t per = (n + chunks - 1) / chunks;
  std::vector<std::thread> threads;
  for (size_t begin = 0; begin < n; begin += per)
    threads.emplace_back(body, begin, std::min(n, begin + per));
  for (std::thread &t : threads)
    t.join();
}

/// Compares `ref.size()` elements; prints the first few mismatches;
/// returns their count.
inline size_t compare(DType t, const void *got, const std::vector<double> &ref,
                      double tol, const std::string &what) {
  auto wrong = [&](size_t i) {
    double g = load(t, got, i);
    return std::isnan(g) || std::fabs(g - ref[i]) > tol;
  };
  std::atomic<size_t> bad{0};
  parallelFor(ref.size(), [&](size_t begin, size_t end) {
    size_t mine = 0;
    for (size_t i = begin; i < end; ++i)
      mine += wrong(i);
    bad += mine;
  });
  // The first few, in order, for the log.
  size_t shown = 0, toShow = std::min<size_t>(bad, 5);
  for (size_t i = 0; i < ref.size() && shown < toShow; ++i)
    if (wrong(i)) {
      fprintf(stderr, "  %s: element %zu = %.8g, expected %.8g\n", what.c_str(),
              i, load(t, got, i), ref[i]);
      ++shown;
    }
  return bad;
}

/// All-reduce results must be the same bits on every rank: false (and the
/// first differing element printed) where rank `rank`'s `got` differs from
/// rank `firstRank`'s `first`, `elems` elements of `t`.
inline bool sameBits(DType t, const void *first, const void *got, size_t elems,
                     int firstRank, int rank, const std::string &what) {
  const size_t es = sizeOf(t);
  if (memcmp(first, got, elems * es) == 0)
    return true;
  size_t i = 0;
  while (memcmp(static_cast<const char *>(first) + i * es,
                static_cast<const char *>(got) + i * es, es) == 0)
    ++i;
  fprintf(stderr, "  %s: rank %d differs from rank %d at element %zu "
          "(not bit-identical)\n", what.c_str(), rank, firstRank, i);
  return false;
}

} // namespace gputest

#endif // MSCCLC_TEST_RUNTIME_GPUTESTUTIL_H
