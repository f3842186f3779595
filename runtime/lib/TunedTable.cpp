//===- TunedTable.cpp - A selection table from measured timings -----------===//

#include "mscclc/runtime/TunedTable.h"
#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/JsonDepth.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>

namespace mscclc::rt {

using json = nlohmann::ordered_json;

namespace {

/// The winner at one size.
struct Winner {
  uint64_t bytes = 0;
  const TuneSample *best = nullptr;
};

/// The fastest sample per measured size, sizes ascending.
std::vector<Winner> winners(const std::vector<const TuneSample *> &samples) {
  std::map<uint64_t, const TuneSample *> best;
  for (const TuneSample *s : samples) {
    auto it = best.find(s->bytes);
    if (it == best.end() || s->microseconds < it->second->microseconds)
      best[s->bytes] = s;
  }
  std::vector<Winner> out;
  for (const auto &[bytes, s] : best)
    out.push_back({bytes, s});
  return out;
}

bool sameChoice(const TuneSample &a, const TuneSample &b) {
  return a.algorithm == b.algorithm && a.instances == b.instances;
}

} // namespace

Status tunedSelectionTable(const std::string &baseTable, const TuneShape &shape,
                           const std::vector<TuneSample> &samples,
                           std::string *out) {
  if (samples.empty())
    return invalidArgument("tuned table: no timings");
  if (shape.ranks < 1 || shape.nodes < 1 || shape.arch <= 0)
    return invalidArgument(fmt::format(
        "tuned table: bad shape ({} ranks, {} nodes, sm_{})", shape.ranks,
        shape.nodes, shape.arch));
  // Printed again below, which recurses once per level of nesting.
  if (int depth = jsonNestingDepth(baseTable); depth > limits::kMaxJsonDepth)
    return invalidArgument(fmt::format(
        "tuned table: the base table nests JSON {} deep, more than the limit "
        "of {}",
        depth, limits::kMaxJsonDepth));
  json base = json::parse(baseTable, nullptr, false);
  if (base.is_discarded() || !base.is_object() || !base.contains("entries") ||
      !base["entries"].is_array())
    return invalidArgument("tuned table: the base table is not a selection table");
  // Not base.value("note", ...), which throws where the note is no string.
  std::string baseNote;
  if (auto note = base.find("note"); note != base.end() && note->is_string())
    baseNote = note->get<std::string>();

  std::map<int, std::vector<const TuneSample *>> byCollective;
  for (const TuneSample &s : samples) {
    if (!(s.microseconds > 0) || s.instances < 1 || s.algorithm.empty())
      return invalidArgument(fmt::format(
          "tuned table: bad timing of {} instances={} at {} bytes: {} us",
          s.algorithm, s.instances, s.bytes, s.microseconds));
    byCollective[int(s.collective)].push_back(&s);
  }

  json tuned = json::array();
  for (const auto &[coll, list] : byCollective) {
    std::vector<Winner> w = winners(list);
    for (size_t i = 0; i < w.size();) {
      size_t j = i + 1;
      while (j < w.size() && sameChoice(*w[j].best, *w[i].best))
        ++j;
      // [this size, the next winner's size); the first from 0, the last open.
      json bytes = json::array({i == 0 ? uint64_t(0) : w[i].bytes});
      if (j < w.size())
        bytes.push_back(w[j].bytes);
      else
        bytes.push_back(nullptr);
      json e;
      e["collective"] = collectiveName(Collective(coll));
      e["ranks"] = shape.ranks;
      e["nodes"] = shape.nodes;
      e["arch"] = fmt::format("sm_{}", shape.arch);
      e["bytes"] = bytes;
      e["algorithm"] = w[i].best->algorithm;
      e["instances"] = w[i].best->instances;
      e["source"] = "measured";
      tuned.push_back(e);
      i = j;
    }
  }
  for (const json &e : base["entries"])
    tuned.push_back(e);
  json table = base;
  table["note"] = fmt::format(
      "Tuned: {} ranks, {} node(s), sm_{}; {}. Then the base table's entries. "
      "Base note: {}",
      shape.ranks, shape.nodes, shape.arch, shape.note, baseNote);
  table["entries"] = tuned;
  *out = table.dump(2) + "\n";
  return Status::ok();
}

} // namespace mscclc::rt
