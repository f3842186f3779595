//===- Nodes.cpp - Which ranks share a node -------------------------------===//

#include "mscclc/runtime/Nodes.h"
#include "mscclc/runtime/Settings.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace mscclc::rt {

namespace {
/// Renumbers node ids 0.. in the order of each node's lowest rank, so that
/// every rank computes the same numbers from the same partition.
std::vector<int> canonical(const std::vector<int> &ids) {
  std::map<int, int> number;
  std::vector<int> out;
  out.reserve(ids.size());
  for (int id : ids) {
    auto it = number.emplace(id, int(number.size())).first;
    out.push_back(it->second);
  }
  return out;
}
} // namespace

/// " (MSCCLC_NODE_OF_RANK=<value>)" where it is set, for messages.
std::string nodeVariableText() {
  std::optional<RawSetting> spec = get(setting::NodeOfRank);
  return spec ? fmt::format(" ({}={})", spec->name(), spec->text) : "";
}

Status parseNodeOfRank(const std::string &spec, int nranks,
                       std::vector<int> *nodeOf) {
  std::vector<int> ids;
  size_t at = 0;
  for (;;) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos
                                           ? std::string::npos
                                           : comma - at);
    char *end = nullptr;
    long v = item.empty() ? -1 : strtol(item.c_str(), &end, 10);
    if (v < 0 || v > 1000000 || (end && *end))
      return invalidArgument(fmt::format(
          "{}='{}': entry {} ('{}') is not a node number (expected one "
          "non-negative integer per rank, comma-separated, e.g. 0,0,1,1)",
          setting::NodeOfRank.name(), spec, ids.size(), item));
    ids.push_back(int(v));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  if (int(ids.size()) != nranks)
    return invalidArgument(
        fmt::format("{}='{}' names the node of {} ranks; the communicator has "
                    "{}",
                    setting::NodeOfRank.name(), spec, ids.size(), nranks));
  *nodeOf = std::move(ids);
  return Status::ok();
}

Status assignNodesFromLabels(const std::vector<uint64_t> &hostOf,
                             const std::vector<int> &labels,
                             const std::string &origin,
                             std::vector<int> *nodeOf) {
  int n = int(hostOf.size());
  if (int(labels.size()) != n)
    return internalError(fmt::format("{}: {} node labels for {} ranks", origin,
                                     labels.size(), n));
  // Inside a node, ranks map each other's memory: one host only.
  std::map<int, int> first;
  for (int r = 0; r < n; ++r) {
    if (labels[size_t(r)] < 0)
      return invalidArgument(fmt::format(
          "{}: rank {} was given no node, while others were: give every rank "
          "its node (e.g. its node in the communicator it was split from) or "
          "none",
          origin, r));
    auto [it, fresh] = first.emplace(labels[size_t(r)], r);
    if (!fresh && hostOf[size_t(it->second)] != hostOf[size_t(r)])
      return invalidArgument(fmt::format(
          "{} puts ranks {} and {} on node {}, but they run on different "
          "hosts: a node cannot span hosts",
          origin, it->second, r, labels[size_t(r)]));
  }
  *nodeOf = canonical(labels);
  return Status::ok();
}

Status assignNodes(const std::vector<uint64_t> &hostOf, const std::string &spec,
                   std::vector<int> *nodeOf) {
  std::vector<int> ids;
  if (spec.empty()) {
    std::map<uint64_t, int> hosts;
    for (uint64_t h : hostOf)
      ids.push_back(hosts.emplace(h, int(hosts.size())).first->second);
    *nodeOf = ids;
    return Status::ok();
  }
  MSCCLC_TRY(parseNodeOfRank(spec, int(hostOf.size()), &ids));
  return assignNodesFromLabels(hostOf, ids,
                               fmt::format("{}='{}'", setting::NodeOfRank.name(), spec), nodeOf);
}

std::string describeNodes(const std::vector<int> &nodeOf) {
  std::map<int, int> sizes;
  for (int id : nodeOf)
    ++sizes[id];
  bool regular = std::all_of(sizes.begin(), sizes.end(), [&](auto &s) {
    return s.second == sizes.begin()->second;
  });
  if (regular)
    return fmt::format("{} node{} x {} rank{}", sizes.size(),
                       sizes.size() == 1 ? "" : "s", sizes.begin()->second,
                       sizes.begin()->second == 1 ? "" : "s");
  std::string list;
  for (auto &[id, size] : sizes)
    list += (list.empty() ? "" : ", ") + std::to_string(size);
  return fmt::format("nodes of {} ranks", list);
}

Status checkNodeShape(const std::string &program, int gpusPerNode,
                      const std::vector<int> &nodeOf) {
  int n = int(nodeOf.size());
  int g = gpusPerNode > 0 ? gpusPerNode : n;
  if (g == 1)
    return Status::ok(); // port channels only: any placement works
  std::vector<int> planned(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    planned[size_t(r)] = r / g;
  if (canonical(nodeOf) == canonical(planned))
    return Status::ok();
  return unsupported(fmt::format(
      "program {} was compiled for {} (--gpus-per-node {}), but the "
      "communicator's ranks are on {}{}: recompile with --gpus-per-node "
      "matching the ranks per node, and place ranks so that rank r is on node "
      "r / gpus-per-node (MSCCLC_NODE_OF_RANK sets virtual nodes)",
      program, describeNodes(planned), g, describeNodes(nodeOf),
      nodeVariableText()));
}

} // namespace mscclc::rt
