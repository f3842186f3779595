//===- CostModel.cpp - Cost model settings and size parsing --------------===//

#include "mscclc/Simulator/Simulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mscclc::sim;

namespace {
struct Field {
  const char *name;
  const char *snake;
  double CostModel::*member;
};
const Field fields[] = {
    {"memHBLatency", "mem_hb_latency", &CostModel::memHBLatency},
    {"memHBBandwidth", "mem_hb_bandwidth", &CostModel::memHBBandwidth},
    {"memLLLatency", "mem_ll_latency", &CostModel::memLLLatency},
    {"memLLBandwidth", "mem_ll_bandwidth", &CostModel::memLLBandwidth},
    {"portLatency", "port_latency", &CostModel::portLatency},
    {"portBandwidth", "port_bandwidth", &CostModel::portBandwidth},
    {"netLatency", "net_latency", &CostModel::netLatency},
    {"netBandwidth", "net_bandwidth", &CostModel::netBandwidth},
    {"gpusPerNic", "gpus_per_nic", &CostModel::gpusPerNic},
    {"signalLatency", "signal_latency", &CostModel::signalLatency},
    {"switchLatency", "switch_latency", &CostModel::switchLatency},
    {"switchBandwidth", "switch_bandwidth", &CostModel::switchBandwidth},
    {"localLatency", "local_latency", &CostModel::localLatency},
    {"localBandwidth", "local_bandwidth", &CostModel::localBandwidth},
    {"blockBandwidth", "block_bandwidth", &CostModel::blockBandwidth},
    {"opOverhead", "op_overhead", &CostModel::opOverhead},
};
} // namespace

bool CostModel::set(llvm::StringRef key, double value) {
  for (const Field &f : fields)
    if (key == f.name || key == f.snake) {
      this->*f.member = value;
      return true;
    }
  return false;
}

std::vector<std::pair<std::string, double>> CostModel::entries() const {
  std::vector<std::pair<std::string, double>> result;
  for (const Field &f : fields)
    result.emplace_back(f.name, this->*f.member);
  return result;
}

static std::string unknownKey(llvm::StringRef key) {
  std::string message = "unknown cost-model key '" + key.str() + "'; keys:";
  for (const Field &f : fields)
    message += std::string(" ") + f.name;
  return message;
}

std::string mscclc::sim::loadCostModel(llvm::StringRef path,
                                       CostModel &model) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "cannot read cost model '" + path.str() +
           "': " + buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return "cost model '" + path.str() +
           "' is not valid JSON: " + llvm::toString(json.takeError());
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return "cost model '" + path.str() + "' must be a JSON object";
  for (const auto &[key, value] : *object) {
    std::optional<double> number = value.getAsNumber();
    if (!number || *number < 0)
      return "cost model key '" + key.str() + "' needs a non-negative number";
    if (!model.set(key, *number))
      return unknownKey(key);
  }
  return "";
}

std::string mscclc::sim::applyCostOverride(llvm::StringRef keyValue,
                                           CostModel &model) {
  auto [key, text] = keyValue.split('=');
  double value;
  if (text.empty() || text.getAsDouble(value) || value < 0)
    return "--cost expects key=number, got '" + keyValue.str() + "'";
  if (!model.set(key.trim(), value))
    return unknownKey(key.trim());
  return "";
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
