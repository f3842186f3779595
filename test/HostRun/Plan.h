//===- Plan.h - The parts of an mscclc plan the host harness uses --------===//
//
// Read independently of the runtime's reader (runtime/lib/Plan.cpp), which
// needs the GPU runtime: docs/plan.md is the contract both follow.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_PLAN_H
#define MSCCLC_TEST_HOSTRUN_PLAN_H

#include "mscclc/device/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hostrun {

enum BufferId { Input = 0, Output = 1, Scratch = 2 };

struct PlanChannel {
  int index = 0;
  std::string name;
  int peer = 0;
  int peerIndex = -1;
  bool ll = false;
  bool peerBuffer[3] = {false, false, false}; ///< by BufferId
};

struct RankPlan {
  std::string kernel;
  unsigned blocks = 0;
  unsigned waitSlots = 0;
  std::vector<PlanChannel> memory, port;
  size_t switchChannels = 0;
};

struct Plan {
  std::string name, collective;
  int ranks = 0;
  uint64_t chunks = 1, inputChunks = 1, outputChunks = 1;
  bool inPlace = false;
  int root = 0;
  bool usesPortChannels = false, usesSwitchChannels = false;
  std::vector<MscclcScratchDesc> scratch;
  std::vector<std::string> dtypes, redops;
  std::vector<RankPlan> rankPlans;

  /// Elements of the user buffers for `count` (docs/plan.md).
  uint64_t inputElems(uint64_t count) const {
    return mscclc_chunk_begin(inputChunks, count, chunks);
  }
  uint64_t outputElems(uint64_t count) const {
    return mscclc_chunk_begin(outputChunks, count, chunks);
  }
};

/// Reads and checks a plan; throws std::runtime_error saying what is wrong.
Plan readPlan(const std::string &path);

} // namespace hostrun

#endif // MSCCLC_TEST_HOSTRUN_PLAN_H
