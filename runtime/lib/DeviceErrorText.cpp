//===- DeviceErrorText.cpp - A kernel's error record in words -------------===//

#include "mscclc/runtime/DeviceErrorText.h"

#include <fmt/format.h>

namespace mscclc::rt {

namespace {

const char *opName(uint32_t op) {
  switch (op) {
  case MSCCLC_OPC_WAIT: return "wait";
  case MSCCLC_OPC_LL_READ: return "LL packet read";
  case MSCCLC_OPC_FIFO_PUSH: return "proxy FIFO push";
  case MSCCLC_OPC_FLUSH: return "flush";
  case MSCCLC_OPC_ENTRY: return "kernel entry";
  case MSCCLC_OPC_SCALE: return "avg scaling (waiting for the rank's blocks)";
  default: return "operation";
  }
}

const char *errName(uint32_t code) {
  switch (code) {
  case MSCCLC_ERR_TIMEOUT: return "timed out";
  case MSCCLC_ERR_ABORTED: return "aborted";
  case MSCCLC_ERR_ABI_MISMATCH: return "kernel ABI mismatch";
  case MSCCLC_ERR_BAD_ARGS: return "bad kernel arguments";
  default: return "failed";
  }
}

/// " on memory channel 0 'name' (to rank 1)", or "" when the record names
/// no channel.
std::string channelText(const RankPlan &rankPlan, const MscclcErrorRecord &r) {
  if (r.channelKind == MSCCLC_CHAN_SWITCH)
    return fmt::format(" on switch channel {}", r.channel);
  if (r.channelKind != MSCCLC_CHAN_MEMORY && r.channelKind != MSCCLC_CHAN_PORT)
    return "";
  const bool memory = r.channelKind == MSCCLC_CHAN_MEMORY;
  const auto &list = memory ? rankPlan.memoryChannels : rankPlan.portChannels;
  const char *kind = memory ? "memory" : "port";
  if (r.channel >= list.size()) // a corrupt record still gets a message
    return fmt::format(" on {} channel {}", kind, r.channel);
  const PlanChannel &c = list[r.channel];
  return fmt::format(" on {} channel {} '{}' (to rank {})", kind, r.channel,
                     c.name, c.peer);
}

} // namespace

std::string describeDeviceError(const Plan &plan, const RankPlan &rankPlan,
                                const MscclcErrorRecord &r) {
  std::string line = r.line ? fmt::format(" (.mscl line {})", r.line) : "";
  return fmt::format("program {} rank {} block {} {} in {}{}{}: expected {}, "
                     "observed {}",
                     plan.name, r.rank, r.block, errName(r.code), opName(r.op),
                     channelText(rankPlan, r), line,
                     static_cast<unsigned long long>(r.expected),
                     static_cast<unsigned long long>(r.observed));
}

} // namespace mscclc::rt
