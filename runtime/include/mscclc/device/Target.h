//===- Target.h - Which GPU vendor the device code is compiled for -------===//
//
// Plain C, for host and device code alike: the vendor and the facts about
// it that the layout shared with the host depends on (the LL packet kind).
// HIP for AMD GPUs is chosen by the HIP compilers (hipcc, clang -x hip,
// hipRTC); everything else, including HIP on NVIDIA, is CUDA. Host code that
// sizes scratch for AMD kernels defines MSCCLC_TARGET_HIP=1 itself.
// MSCCLC_TARGET_HOST=1 compiles the device code for the CPU (g++, the
// emulation of test/HostRun) with NVIDIA's packets, LL16, so that it
// computes what NVIDIA GPUs do; MSCCLC_HOST_LL8=1 takes AMD's LL8 instead.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_TARGET_H
#define MSCCLC_DEVICE_TARGET_H

#ifndef MSCCLC_TARGET_HOST
#define MSCCLC_TARGET_HOST 0
#endif
#if MSCCLC_TARGET_HOST && defined(MSCCLC_TARGET_HIP) && MSCCLC_TARGET_HIP
#error "MSCCLC_TARGET_HOST excludes MSCCLC_TARGET_HIP (LL8: MSCCLC_HOST_LL8=1)"
#endif

#ifndef MSCCLC_TARGET_HIP
#if !MSCCLC_TARGET_HOST &&                                                     \
    (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__) ||                      \
     defined(__HIPCC_RTC__)) &&                                                \
    !defined(__HIP_PLATFORM_NVIDIA__)
#define MSCCLC_TARGET_HIP 1
#else
#define MSCCLC_TARGET_HIP 0
#endif
#endif

#if MSCCLC_TARGET_HIP ||                                                       \
    (MSCCLC_TARGET_HOST && defined(MSCCLC_HOST_LL8) && MSCCLC_HOST_LL8)
/// LL8: AMD guarantees single-copy atomicity for aligned 8-byte stores
/// only, so a packet is {4 data bytes, 4-byte flag}.
#define MSCCLC_LL_DATA_BYTES 4ull
#define MSCCLC_LL_PACKET_BYTES 8ull
#else
/// LL16: NVIDIA GPUs store 16 aligned bytes at once (st.v4), so a packet
/// is {data, flag, data, flag}: 8 data bytes.
#define MSCCLC_LL_DATA_BYTES 8ull
#define MSCCLC_LL_PACKET_BYTES 16ull
#endif

#endif // MSCCLC_DEVICE_TARGET_H
