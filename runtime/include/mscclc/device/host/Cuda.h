//===- Cuda.h - The CUDA language the device library uses, on a CPU ------===//
//
// What generated kernels and mscclc/device take from CUDA, in C++17, so that
// g++ compiles them for the CPU emulation (MSCCLC_TARGET_HOST, test/HostRun):
// qualifiers, vector types, the thread indices, __syncthreads and the two
// atomics. The model: every thread of a thread block is an OS thread, which
// runBlock starts; blockIdx, threadIdx, blockDim and gridDim are
// thread_local; __syncthreads is a barrier of the block's threads.
//
// The standard headers of the emulation come first, here: the qualifiers
// are macros, and libstdc++ spells some of the same words as attributes
// (`__attribute__((__noinline__))`), so no standard header may follow.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_HOST_CUDA_H
#define MSCCLC_DEVICE_HOST_CUDA_H

#include "mscclc/device/KernelArgs.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <math.h>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __grid_constant__

struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return uint4{x, y, z, w};
}

inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

namespace mscclc {
namespace host {

struct Dim3 {
  unsigned x, y, z;
};

/// 1 + the largest thread number a kernel gave a role to (`threadIdx.x ==
/// n`) that its block did not have, 0 while none. Such a role is never
/// played (a wait that nobody does), so the harness reports this rather
/// than the time-out that follows.
inline std::atomic<unsigned> missingThreads{0};

/// threadIdx.x: its value, and comparisons that check the thread exists.
struct ThreadNumber {
  unsigned value;
  operator unsigned() const { return value; }
  template <class I> bool operator==(I n) const;
  template <class I> bool operator!=(I n) const { return !(*this == n); }
};
struct ThreadIndex {
  ThreadNumber x;
  unsigned y, z;
};

/// __syncthreads of one block. A thread that returns from the kernel
/// leaves, so that a block whose threads end at different points (an
/// early return after an error) does not wait for them.
class BlockBarrier {
public:
  explicit BlockBarrier(unsigned threads) : members_(threads) {}

  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long long round = round_;
    if (++arrived_ == members_) {
      release();
      return;
    }
    changed_.wait(lock, [&] { return round_ != round; });
  }

  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--members_ == arrived_ && arrived_ > 0)
      release();
  }

private:
  void release() {
    arrived_ = 0;
    ++round_;
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  unsigned members_;
  unsigned arrived_ = 0;
  unsigned long long round_ = 0;
};

/// The barrier of the calling thread's block; null for one-thread blocks.
inline thread_local BlockBarrier *currentBarrier = nullptr;

} // namespace host
} // namespace mscclc

inline thread_local mscclc::host::Dim3 blockIdx, blockDim, gridDim;
inline thread_local mscclc::host::ThreadIndex threadIdx;

template <class I> bool mscclc::host::ThreadNumber::operator==(I n) const {
  const unsigned wanted = static_cast<unsigned>(n);
  if (wanted >= blockDim.x) {
    unsigned seen = missingThreads.load(std::memory_order_relaxed);
    while (seen < wanted + 1 &&
           !missingThreads.compare_exchange_weak(seen, wanted + 1,
                                                 std::memory_order_relaxed))
      ;
  }
  return value == wanted;
}

inline void __syncthreads() {
  if (mscclc::host::BlockBarrier *b = mscclc::host::currentBarrier)
    b->arriveAndWait();
}

inline void __threadfence_system() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

/// CUDA's atomics are relaxed.
template <class X> inline X atomicAdd(X *p, X v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class X> inline X atomicCAS(X *p, X expected, X desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
  return expected;
}

namespace mscclc {
namespace host {

typedef void (*Kernel)(MscclcKernelArgs);

/// Runs thread block `block` of a `blocks`-block launch of `kernel` with
/// `threads` threads: the calling thread is thread 0, the others are new
/// OS threads; returns when all of them have returned.
inline void runBlock(Kernel kernel, const MscclcKernelArgs &args,
                     unsigned block, unsigned blocks, unsigned threads) {
  BlockBarrier barrier(threads);
  auto thread = [&](unsigned t) {
    blockIdx = Dim3{block, 0, 0};
    threadIdx = ThreadIndex{ThreadNumber{t}, 0, 0};
    blockDim = Dim3{threads, 1, 1};
    gridDim = Dim3{blocks, 1, 1};
    currentBarrier = threads > 1 ? &barrier : nullptr;
    kernel(args);
    if (currentBarrier)
      barrier.leave();
    currentBarrier = nullptr;
  };
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t)
    others.emplace_back(thread, t);
  thread(0);
  for (std::thread &t : others)
    t.join();
}

} // namespace host
} // namespace mscclc

#endif // MSCCLC_DEVICE_HOST_CUDA_H
