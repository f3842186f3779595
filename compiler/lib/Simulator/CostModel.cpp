//===- CostModel.cpp - Cost model settings and size parsing --------------===//

#include "mscclc/Simulator/Simulator.h"
#include "mscclc/runtime/JsonDepth.h"

#include "llvm/Support/JSON.h"
#include <algorithm>
#include <cmath>

using namespace mscclc::sim;

namespace {
/// A cost-model key. Rates (bandwidths, GPUs per NIC) divide, so they must
/// be positive; times may be zero. Every value is finite.
struct Field {
  const char *name;
  const char *snake;
  double CostModel::*member;
  bool rate;
};
const Field fields[] = {
    {"memHBLatency", "mem_hb_latency", &CostModel::memHBLatency, false},
    {"memHBBandwidth", "mem_hb_bandwidth", &CostModel::memHBBandwidth, true},
    {"memLLLatency", "mem_ll_latency", &CostModel::memLLLatency, false},
    {"memLLBandwidth", "mem_ll_bandwidth", &CostModel::memLLBandwidth, true},
    {"portLatency", "port_latency", &CostModel::portLatency, false},
    {"portBandwidth", "port_bandwidth", &CostModel::portBandwidth, true},
    {"netLatency", "net_latency", &CostModel::netLatency, false},
    {"netBandwidth", "net_bandwidth", &CostModel::netBandwidth, true},
    {"gpusPerNic", "gpus_per_nic", &CostModel::gpusPerNic, true},
    {"signalLatency", "signal_latency", &CostModel::signalLatency, false},
    {"switchLatency", "switch_latency", &CostModel::switchLatency, false},
    {"switchBandwidth", "switch_bandwidth", &CostModel::switchBandwidth, true},
    {"localLatency", "local_latency", &CostModel::localLatency, false},
    {"localBandwidth", "local_bandwidth", &CostModel::localBandwidth, true},
    {"blockBandwidth", "block_bandwidth", &CostModel::blockBandwidth, true},
    {"opOverhead", "op_overhead", &CostModel::opOverhead, false},
};

const Field *findField(llvm::StringRef key) {
  for (const Field &f : fields)
    if (key == f.name || key == f.snake)
      return &f;
  return nullptr;
}

std::string unknownKey(llvm::StringRef key) {
  std::string message = "unknown cost-model key '" + key.str() + "'; keys:";
  for (const Field &f : fields)
    message += std::string(" ") + f.name;
  return message;
}

/// Sets `key` (a field name such as `memHBLatency`, or its snake-case form
/// `mem_hb_latency`) after checking `value`; an error message, or "". The
/// one way a value gets into a cost model from outside.
std::string setChecked(CostModel &model, llvm::StringRef key, double value) {
  const Field *f = findField(key);
  if (!f)
    return unknownKey(key);
  if (!std::isfinite(value) || value < 0 || (f->rate && value == 0))
    return "cost-model key '" + key.str() + "' needs a finite " +
           (f->rate ? "positive" : "non-negative") + " number";
  model.*f->member = value;
  return "";
}

} // namespace

std::vector<std::pair<std::string, double>> CostModel::entries() const {
  std::vector<std::pair<std::string, double>> result;
  for (const Field &f : fields)
    result.emplace_back(f.name, this->*f.member);
  return result;
}

std::string mscclc::sim::parseCostModel(llvm::StringRef text,
                                        llvm::StringRef name,
                                        CostModel &model) {
  if (mscclc::jsonNestingDepth(std::string_view(text)) > 1)
    return "cost model '" + name.str() +
           "' must be one JSON object of numbers, with nothing nested";
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return "cost model '" + name.str() +
           "' is not valid JSON: " + llvm::toString(json.takeError());
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return "cost model '" + name.str() + "' must be a JSON object";
  for (const auto &[key, value] : *object) {
    std::optional<double> number = value.getAsNumber();
    if (!number)
      return "cost-model key '" + key.str() + "' needs a number";
    if (std::string error = setChecked(model, key, *number); !error.empty())
      return error;
  }
  return "";
}

std::string mscclc::sim::applyCostOverride(llvm::StringRef keyValue,
                                           CostModel &model) {
  auto [key, text] = keyValue.split('=');
  double value;
  if (text.empty() || text.getAsDouble(value))
    return "--cost expects key=number, got '" + keyValue.str() + "'";
  return setChecked(model, key.trim(), value);
}

std::optional<int64_t> mscclc::sim::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  int64_t scale = 1;
  if (text.ends_with_insensitive("b"))
    text = text.drop_back();
  if (!text.empty()) {
    switch (text.back()) {
    case 'k':
    case 'K':
      scale = 1024;
      break;
    case 'm':
    case 'M':
      scale = 1024 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024 * 1024 * 1024;
      break;
    default:
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  int64_t value;
  if (text.empty() || text.getAsInteger(10, value) || value <= 0 ||
      value > (int64_t(1) << 40) / scale)
    return std::nullopt;
  return value * scale;
}
