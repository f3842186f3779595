//===- Vendor.h - The vendor's primitives behind the shared device code --===//
//
// Every instruction that differs between NVIDIA and AMD GPUs sits behind
// one small header per vendor, with the same names on both sides:
//
//   halfToFloat, floatToHalf    f16 <-> f32 (round to nearest even)
//   timerNs                     the time-out clock, in nanoseconds
//   fenceSystem                 orders earlier writes before later ones
//                               for every observer (peers, host, proxy)
//   loadAcquireSys, incrementRelaxedSys   semaphore wait and signal
//   loadGlobal16/8/4            data loads that never hit a stale L1 line
//   packetStore8/packetLoad8    one single-copy-atomic, system-coherent
//                               8-byte access (LL8 packets)
//   packetStore16/packetLoad16  the same for 16 bytes (LL16; CUDA only)
//   storeTrigger                a 16-byte FIFO entry for the host proxy
//
// The rest of mscclc/device is vendor-neutral and shared. Multimem
// (SwitchChannel) exists on NVIDIA only: mscclc/device/cuda/Multimem.h.
// MSCCLC_TARGET_HOST selects the CPU emulation (host/Primitives.h).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_VENDOR_H
#define MSCCLC_DEVICE_VENDOR_H

#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Target.h"

#if MSCCLC_TARGET_HOST
#include "mscclc/device/host/Primitives.h"
#elif MSCCLC_TARGET_HIP
#include "mscclc/device/hip/Primitives.h"
#else
#include "mscclc/device/cuda/Primitives.h"
#endif

#endif // MSCCLC_DEVICE_VENDOR_H
