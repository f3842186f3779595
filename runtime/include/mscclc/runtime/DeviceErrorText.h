//===- DeviceErrorText.h - A kernel's error record in words ---*- C++ -*-===//
//
// Turns the record a failing block writes (MscclcErrorRecord) into the line
// the runtime reports: program, rank, block, what went wrong, what the block
// was waiting on and over which channel, with the .mscl line. Kept apart from
// the Executor so that every operation code's wording is tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_DEVICEERRORTEXT_H
#define MSCCLC_RUNTIME_DEVICEERRORTEXT_H

#include "mscclc/device/KernelArgs.h"
#include "mscclc/runtime/Plan.h"

#include <string>

namespace mscclc::rt {

/// E.g. "program allreduce_1pa rank 0 block 0 timed out in wait on memory
/// channel 0 'mem_hb_0_1' (to rank 1) (.mscl line 12): expected 3, observed 2".
/// `rankPlan` is the failing rank's part of `plan`.
std::string describeDeviceError(const Plan &plan, const RankPlan &rankPlan,
                                const MscclcErrorRecord &record);

} // namespace mscclc::rt

#endif
