//===- Plan.cpp - Reading an mscclc plan ---------------------------------===//

#include "Plan.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace hostrun {

namespace {

using nlohmann::json;

PlanChannel readChannel(const json &j, int ranks, const std::string &where) {
  PlanChannel c;
  c.index = j.at("index").get<int>();
  c.name = j.at("name").get<std::string>();
  c.peer = j.at("peer").get<int>();
  c.peerIndex = j.at("peerIndex").get<int>();
  c.ll = j.value("protocol", std::string("HB")) == "LL";
  for (const json &b : j.at("peerBuffers")) {
    const std::string s = b.get<std::string>();
    if (s == "input")
      c.peerBuffer[Input] = true;
    else if (s == "output")
      c.peerBuffer[Output] = true;
    else if (s == "scratch")
      c.peerBuffer[Scratch] = true;
    else
      throw std::runtime_error(
          fmt::format("{} {}: unknown peer buffer '{}'", where, c.name, s));
  }
  if (c.peer < 0 || c.peer >= ranks)
    throw std::runtime_error(fmt::format("{} {}: peer {} of {} ranks", where,
                                         c.name, c.peer, ranks));
  return c;
}

std::vector<std::string> strings(const json &j) {
  std::vector<std::string> out;
  for (const json &s : j)
    out.push_back(s.get<std::string>());
  return out;
}

} // namespace

Plan readPlan(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(fmt::format("cannot read plan {}", path));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception &e) {
    throw std::runtime_error(fmt::format("plan {}: {}", path, e.what()));
  }
  Plan p;
  try {
    if (j.at("format") != "mscclc-plan")
      throw std::runtime_error("not an mscclc plan");
    p.name = j.at("name").get<std::string>();
    p.collective = j.at("collective").get<std::string>();
    p.ranks = j.at("ranks").get<int>();
    p.chunks = j.at("chunks").get<uint64_t>();
    p.inputChunks = j.at("inputChunks").get<uint64_t>();
    p.outputChunks = j.at("outputChunks").get<uint64_t>();
    p.inPlace = j.at("inPlace").get<bool>();
    p.root = j.at("root").get<int>();
    p.usesPortChannels = j.at("usesPortChannels").get<bool>();
    p.usesSwitchChannels = j.at("usesSwitchChannels").get<bool>();
    p.dtypes = strings(j.at("dtypes"));
    p.redops = strings(j.at("redops"));
    const json &scratch = j.at("scratch");
    p.scratch.resize(scratch.size());
    for (const json &s : scratch) {
      const size_t i = s.at("index").get<size_t>();
      if (i >= p.scratch.size())
        throw std::runtime_error(fmt::format("scratch index {}", i));
      p.scratch[i].chunks = s.at("chunks").get<uint64_t>();
      p.scratch[i].packet = s.at("packet").get<bool>() ? 1 : 0;
    }
    if (p.ranks < 1 || p.chunks < 1)
      throw std::runtime_error("no ranks or no chunks");
    const json &ranks = j.at("rankPlans");
    if (ranks.size() != size_t(p.ranks))
      throw std::runtime_error(
          fmt::format("{} rank plans for {} ranks", ranks.size(), p.ranks));
    p.rankPlans.resize(size_t(p.ranks));
    for (const json &r : ranks) {
      const int rank = r.at("rank").get<int>();
      if (rank < 0 || rank >= p.ranks)
        throw std::runtime_error(fmt::format("rank plan of rank {}", rank));
      RankPlan &rp = p.rankPlans[size_t(rank)];
      rp.kernel = r.at("kernel").get<std::string>();
      rp.blocks = r.at("blocks").get<unsigned>();
      rp.waitSlots = r.at("waitSlots").get<unsigned>();
      const std::string where = fmt::format("rank {}", rank);
      for (const json &c : r.at("memoryChannels"))
        rp.memory.push_back(readChannel(c, p.ranks, where + " memory channel"));
      for (const json &c : r.at("portChannels"))
        rp.port.push_back(readChannel(c, p.ranks, where + " port channel"));
      rp.switchChannels = r.at("switchChannels").size();
      for (size_t i = 0; i < rp.memory.size(); ++i)
        if (rp.memory[i].index != int(i))
          throw std::runtime_error(where + ": memory channels out of order");
      for (size_t i = 0; i < rp.port.size(); ++i)
        if (rp.port[i].index != int(i))
          throw std::runtime_error(where + ": port channels out of order");
    }
    // Reverse channels must exist where they are named.
    for (int r = 0; r < p.ranks; ++r) {
      for (const PlanChannel &c : p.rankPlans[size_t(r)].memory)
        if (c.peerIndex >= int(p.rankPlans[size_t(c.peer)].memory.size()))
          throw std::runtime_error(fmt::format(
              "rank {} memory channel {}: peerIndex {} past the peer's list", r,
              c.name, c.peerIndex));
      for (const PlanChannel &c : p.rankPlans[size_t(r)].port)
        if (c.peerIndex >= int(p.rankPlans[size_t(c.peer)].port.size()))
          throw std::runtime_error(fmt::format(
              "rank {} port channel {}: peerIndex {} past the peer's list", r,
              c.name, c.peerIndex));
    }
  } catch (const json::exception &e) {
    throw std::runtime_error(fmt::format("plan {}: {}", path, e.what()));
  } catch (const std::runtime_error &e) {
    throw std::runtime_error(fmt::format("plan {}: {}", path, e.what()));
  }
  return p;
}

} // namespace hostrun
