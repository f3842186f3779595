//===- Primitives.h - The CPU's accesses behind mscclc/device/Vendor.h ---===//
//
// The CPU emulation of the device library (MSCCLC_TARGET_HOST, compiled by
// g++; test/HostRun runs generated kernels with it). Every access that
// another thread may make at the same time is a C++ atomic with the
// ordering the GPU code has, so the emulation has no data race of its own
// and a race checker sees the synchronisation the kernels rely on:
//
//   semaphores   acquire loads; signals add with release (below);
//   LL8 packets  relaxed 8-byte atomics (st/ld.volatile are relaxed);
//   LL16         16-byte accesses under a striped lock (below);
//   triggers     two 8-byte stores, the valid half last, with release;
//   data         plain loads: a load that races with a store is the
//                program's bug, as on the GPU.
//
// Spins call timerNs every 256 polls (Sync.h's Spinner, with a time-out
// set), which yields the CPU: the emulation runs more threads than there
// are cores, and a spinning thread must let the thread it waits for run.
// With host::jitterUs set, the synchronising accesses now and then sleep,
// so that runs see other interleavings than the OS's usual one.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_HOST_PRIMITIVES_H
#define MSCCLC_DEVICE_HOST_PRIMITIVES_H

// Vendor.h includes this file inside `#if MSCCLC_TARGET_HOST`, and
// `mscclc --emit=cuda --embed-headers` pastes every header once, at its
// first #include: a shared header first reached here would land in CUDA
// output inside that dead branch. So only KernelArgs.h (which Vendor.h
// includes before) and host headers; the standard ones come with Cuda.h,
// before its macros.
#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/host/Cuda.h"

#ifndef __FLT16_MANT_DIG__
#error "the host emulation of f16 needs _Float16 (g++ 12 or newer)"
#endif

namespace mscclc {
namespace host {

/// The longest sleep of jitter(), in microseconds (0: none), and the seed
/// of the threads' draws.
inline std::atomic<unsigned> jitterUs{0};
inline std::atomic<std::uint64_t> jitterSeed{0};

/// Sleeps now and then for a random time below jitterUs: one call in 32,
/// or in every fourth thread one call in 2, so that ranks drift apart.
inline void jitter() {
  const unsigned limit = jitterUs.load(std::memory_order_relaxed);
  if (!limit)
    return;
  thread_local std::uint64_t state =
      jitterSeed.load() ^
      std::hash<std::thread::id>()(std::this_thread::get_id());
  thread_local const bool slow = (state >> 7 & 3) == 0;
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  const std::uint64_t z = state >> 33;
  if ((z & (slow ? 1 : 31)) == 0)
    std::this_thread::sleep_for(std::chrono::microseconds((z >> 5) % limit));
}

/// LL16 packets need 16-byte single-copy atomicity, which the CPU gives
/// only through cmpxchg16b (x86-64, -mcx16; g++ sends 16-byte atomics to
/// libatomic, which may take a lock anyway): every load would be a locked
/// write bouncing the line between the spinning reader and the writer, and
/// other hosts lack it. A packet is instead accessed under one of these
/// mutexes, chosen by its address: atomic by construction, portable, and
/// exactly what race checkers model. Packet memory is never accessed
/// otherwise within a launch (the compiler refuses plain accesses to packet
/// buffers); a mutex rather than a spin lock, since a preempted holder
/// must not make the other threads spin.
inline std::mutex packetLocks[256];
inline std::mutex &packetLock(const void *p) {
  return packetLocks[(reinterpret_cast<std::uintptr_t>(p) >> 4) & 255];
}

} // namespace host

namespace dev {

/// _Float16 conversions round to nearest even, as cvt.rn does.
inline float halfToFloat(unsigned short bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}
inline unsigned short floatToHalf(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  unsigned short bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

inline mscclc_u64 timerNs() {
  std::this_thread::yield();
  return static_cast<mscclc_u64>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

inline void fenceSystem() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

inline mscclc_u64 loadAcquireSys(const mscclc_u64 *p) {
  host::jitter();
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/// Release where the GPU adds relaxed: every signal (Sync.h
/// signalSemaphore) adds right after fenceSystem, which makes the two the
/// same ordering, and a race checker that does not model fences still sees
/// the release.
inline void incrementRelaxedSys(mscclc_u64 *p) {
  host::jitter();
  __atomic_fetch_add(p, 1ull, __ATOMIC_RELEASE);
}

inline uint4 loadGlobal16(const void *p) {
  uint4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint2 loadGlobal8(const void *p) {
  uint2 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline unsigned loadGlobal4(const void *p) {
  unsigned v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void packetStore8(void *p, uint2 v) {
  host::jitter();
  const mscclc_u64 word =
      static_cast<mscclc_u64>(v.x) | static_cast<mscclc_u64>(v.y) << 32;
  __atomic_store_n(static_cast<mscclc_u64 *>(p), word, __ATOMIC_RELAXED);
}
inline uint2 packetLoad8(const void *p) {
  host::jitter();
  const mscclc_u64 word =
      __atomic_load_n(static_cast<const mscclc_u64 *>(p), __ATOMIC_RELAXED);
  return make_uint2(static_cast<unsigned>(word),
                    static_cast<unsigned>(word >> 32));
}

inline void packetStore16(void *p, uint4 v) {
  host::jitter();
  std::lock_guard<std::mutex> lock(host::packetLock(p));
  std::memcpy(p, &v, sizeof v);
}
inline uint4 packetLoad16(const void *p) {
  host::jitter();
  uint4 v;
  std::lock_guard<std::mutex> lock(host::packetLock(p));
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Two 8-byte stores, as on AMD: the proxy waits for both halves (fst != 0
/// and snd's valid bit). snd goes last with release, so a proxy that
/// acquires it sees fst and the data the kernel wrote before the push.
inline void storeTrigger(MscclcTrigger *slot, MscclcTrigger t) {
  host::jitter();
  __atomic_store_n(&slot->fst, t.fst, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->snd, t.snd, __ATOMIC_RELEASE);
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_HOST_PRIMITIVES_H
