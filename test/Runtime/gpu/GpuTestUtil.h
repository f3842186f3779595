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

enum class DType { F32, F16, BF16, I32, F8E4M3, F8E5M2 };

inline bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }

inline const char *name(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I32: return "i32";
  case DType::F8E4M3: return "f8e4m3";
  case DType::F8E5M2: return "f8e5m2";
  }
  return "?";
}
inline size_t sizeOf(DType t) {
  if (isFp8(t))
    return 1;
  return t == DType::F16 || t == DType::BF16 ? 2 : 4;
}
inline mscclcDataType_t apiType(DType t) {
  switch (t) {
  case DType::F32: return mscclcFloat32;
  case DType::F16: return mscclcFloat16;
  case DType::BF16: return mscclcBfloat16;
  case DType::I32: return mscclcInt32;
  case DType::F8E4M3: return mscclcFloat8e4m3;
  case DType::F8E5M2: return mscclcFloat8e5m2;
  }
  return mscclcFloat32;
}
inline bool parseType(const std::string &s, DType *t) {
  if (s == "f32") *t = DType::F32;
  else if (s == "f16") *t = DType::F16;
  else if (s == "bf16") *t = DType::BF16;
  else if (s == "i32") *t = DType::I32;
  else if (s == "f8e4m3") *t = DType::F8E4M3;
  else if (s == "f8e5m2") *t = DType::F8E5M2;
  else return false;
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
  case DType::I32: return double(static_cast<const int32_t *>(base)[i]);
  case DType::F8E4M3:
  case DType::F8E5M2: return loadFp8(t, base, i);
  }
  return 0;
}

/// Stores `v` (representable in t, or rounded to nearest) as element i.
inline void store(DType t, void *base, size_t i, double v) {
  switch (t) {
  case DType::F32: static_cast<float *>(base)[i] = float(v); break;
  case DType::F16: static_cast<__half *>(base)[i] = __float2half(float(v)); break;
  case DType::BF16:
    static_cast<__nv_bfloat16 *>(base)[i] = __float2bfloat16(float(v));
    break;
  case DType::I32: static_cast<int32_t *>(base)[i] = int32_t(v); break;
  case DType::F8E4M3:
  case DType::F8E5M2: storeFp8(t, base, i, float(v)); break;
  }
}

/// Random values: small integers for i32 (sums never overflow), values in
/// [-1, 1) for floats, exactly representable in the type.
inline void fillRandom(DType t, void *base, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int32_t> integer(-100000, 100000);
  for (size_t i = 0; i < n; ++i) {
    switch (t) {
    case DType::F32: static_cast<float *>(base)[i] = real(rng); break;
    case DType::F16: static_cast<__half *>(base)[i] = __float2half(real(rng)); break;
    case DType::BF16:
      static_cast<__nv_bfloat16 *>(base)[i] = __float2bfloat16(real(rng));
      break;
    case DType::I32: static_cast<int32_t *>(base)[i] = integer(rng); break;
    case DType::F8E4M3:
    case DType::F8E5M2: storeFp8(t, base, i, fp8TestValue(t, real(rng))); break;
    }
  }
}

/// Tolerance for a sum of `terms` values of magnitude <= `mag`: the GPU may
/// add in any order and round every partial sum to the type.
inline double tolerance(DType t, int terms, double mag) {
  double eps = t == DType::F32 ? 1.2e-7 : t == DType::F16 ? 9.8e-4 : 7.9e-3;
  if (t == DType::I32 || isFp8(t)) // fp8 data makes every sum exact
    return 0;
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

} // namespace gputest

#endif // MSCCLC_TEST_RUNTIME_GPUTESTUTIL_H
