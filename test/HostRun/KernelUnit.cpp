//===- KernelUnit.cpp - Generated kernels and the functions of their T ---===//
//
// Compiled once per generated source, element type and operator:
//   g++ -std=c++17 -DMSCCLC_TARGET_HOST=1 -DMSCCLC_DTYPE=.. -DMSCCLC_REDOP=..
//       -DMSCCLC_HOSTRUN_KERNELS='"gen.cu"' -DMSCCLC_HOSTRUN_THREADS=n
//       -I runtime/include -c KernelUnit.cpp
// (test/HostRun/hostrun.py does it). The device library is included once,
// through the generated source, so its out-of-line functions
// (MSCCLC_OUTLINE_OPS) are defined once.
//
//===----------------------------------------------------------------------===//

#if !MSCCLC_TARGET_HOST
#error "compile with -DMSCCLC_TARGET_HOST=1"
#endif
#ifndef MSCCLC_HOSTRUN_KERNELS
#error "MSCCLC_HOSTRUN_KERNELS names the generated source"
#endif
/// Threads per block: one more than the largest thread number the kernels
/// give a role to (signals, waits and flushes over several channels use
/// threads 0, 1, ...), which the driver reads from the source.
#ifndef MSCCLC_HOSTRUN_THREADS
#define MSCCLC_HOSTRUN_THREADS 1
#endif

#include MSCCLC_HOSTRUN_KERNELS

#include "KernelUnit.h"

#define MSCCLC_HOSTRUN_STR_(x) #x
#define MSCCLC_HOSTRUN_STR(x) MSCCLC_HOSTRUN_STR_(x)

namespace {

// Templates, so that `if constexpr` drops the branches of other types.

/// The storage-only float types, which convert through f32.
template <class X>
constexpr bool kViaFloat =
    IsSame<X, Half>::value || IsSame<X, BFloat16>::value ||
    IsSame<X, Fp8E4M3>::value || IsSame<X, Fp8E5M2>::value;

template <class X> double toDouble(X x) {
  if constexpr (kViaFloat<X>)
    return toFloat(x);
  else
    return static_cast<double>(x);
}

template <class X> X fromDouble(double v) {
  const float f = static_cast<float>(v);
  if constexpr (IsSame<X, Half>::value)
    return toHalf(f);
  else if constexpr (IsSame<X, BFloat16>::value)
    return toBFloat16(f);
  else if constexpr (IsSame<X, Fp8E4M3>::value)
    return toFp8E4M3(f);
  else if constexpr (IsSame<X, Fp8E5M2>::value)
    return toFp8E5M2(f);
  else
    return static_cast<X>(v);
}

} // namespace

extern "C" {

void mscclc_hostrun_describe(MscclcHostUnit *unit) {
  unit->dtype = MSCCLC_HOSTRUN_STR(MSCCLC_DTYPE);
  unit->redop = MSCCLC_HOSTRUN_STR(MSCCLC_REDOP);
  unit->elemSize = sizeof(T);
  unit->llPacketBytes = MSCCLC_LL_PACKET_BYTES;
  unit->threads = MSCCLC_HOSTRUN_THREADS;
}

unsigned long long mscclc_hostrun_scratch_bytes(const MscclcScratchDesc *bufs,
                                                int n, unsigned long long count,
                                                unsigned long long chunks) {
  return mscclc_scratch_bytes(bufs, n, count, chunks, sizeof(T));
}

void mscclc_hostrun_apply(const void *a, const void *b, void *out) {
  T x, y;
  std::memcpy(&x, a, sizeof(T));
  std::memcpy(&y, b, sizeof(T));
  const T r = RedOp::apply(x, y);
  std::memcpy(out, &r, sizeof(T));
}

double mscclc_hostrun_to_double(const void *x) {
  T v;
  std::memcpy(&v, x, sizeof(T));
  return toDouble(v);
}

void mscclc_hostrun_from_double(double v, void *out) {
  const T x = fromDouble<T>(v);
  std::memcpy(out, &x, sizeof(T));
}

void mscclc_hostrun_run_block(MscclcHostKernel kernel,
                              const MscclcKernelArgs *args, unsigned block,
                              unsigned blocks, unsigned threads) {
  mscclc::host::runBlock(kernel, *args, block, blocks, threads);
}

void mscclc_hostrun_set_jitter(unsigned us, unsigned long long seed) {
  mscclc::host::jitterSeed = seed;
  mscclc::host::jitterUs = us;
}

unsigned mscclc_hostrun_missing_threads(void) {
  return mscclc::host::missingThreads.load();
}
}
