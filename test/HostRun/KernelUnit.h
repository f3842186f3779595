//===- KernelUnit.h - What the harness asks of the unit with the kernels -===//
//
// mscclc-hostrun is two halves: the harness (plan, memory, proxy, oracle),
// compiled once, and the kernel unit (KernelUnit.cpp): the generated CUDA
// source with the device library, compiled by g++ for the CPU
// (MSCCLC_TARGET_HOST) with one MSCCLC_DTYPE and MSCCLC_REDOP. Everything
// that depends on the element type, the operator or the packet layout is
// asked of the unit through these C functions, so the harness computes
// sizes and reductions with the kernels' own code. Kernels are found by
// their plan names (dlsym; the binary is linked with -rdynamic).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_KERNELUNIT_H
#define MSCCLC_TEST_HOSTRUN_KERNELUNIT_H

#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Layout.h"

extern "C" {

typedef void (*MscclcHostKernel)(MscclcKernelArgs);

/// What the unit was compiled for.
typedef struct MscclcHostUnit {
  const char *dtype;      ///< MSCCLC_DTYPE
  const char *redop;      ///< MSCCLC_REDOP
  unsigned elemSize;      ///< sizeof(T)
  unsigned llPacketBytes; ///< 16 (LL16) or 8 (LL8, MSCCLC_HOST_LL8)
  unsigned threads;       ///< threads per block the kernels need at least
} MscclcHostUnit;

void mscclc_hostrun_describe(MscclcHostUnit *unit);

/// Scratch bytes for `count` (Layout.h, the unit's packet layout and T).
unsigned long long mscclc_hostrun_scratch_bytes(const MscclcScratchDesc *bufs,
                                                int n, unsigned long long count,
                                                unsigned long long chunks);

/// *out = RedOp::apply(*a, *b), in T.
void mscclc_hostrun_apply(const void *a, const void *b, void *out);
/// T to double (16-bit and 8-bit floats through the device conversions).
double mscclc_hostrun_to_double(const void *x);
/// double to T (floats: rounded as the device library rounds).
void mscclc_hostrun_from_double(double v, void *out);

/// Runs thread block `block` of a launch of `blocks` blocks of `threads`
/// threads; returns when every thread of the block has returned.
void mscclc_hostrun_run_block(MscclcHostKernel kernel,
                              const MscclcKernelArgs *args, unsigned block,
                              unsigned blocks, unsigned threads);

/// Makes synchronising accesses sleep now and then, up to `us`
/// microseconds (host/Primitives.h jitter); 0: never.
void mscclc_hostrun_set_jitter(unsigned us, unsigned long long seed);

/// 1 + the largest thread number a kernel gave a role to that its block
/// lacked (host/Cuda.h), 0 when none.
unsigned mscclc_hostrun_missing_threads(void);
}

#endif // MSCCLC_TEST_HOSTRUN_KERNELUNIT_H
