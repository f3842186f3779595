//===- Selection.cpp - The stdlib catalog and selection table -------------===//

#include "mscclc/runtime/Selection.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/JsonDepth.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace mscclc::rt {

namespace {

using json = nlohmann::json;

/// Byte offsets where the elements of the array under top-level key `key`
/// start. nlohmann's DOM keeps no positions, so messages about an entry get
/// their line from this scan (strings skipped, depth tracked).
std::vector<size_t> arrayElementOffsets(const std::string &text,
                                        const std::string &key) {
  std::vector<size_t> out;
  int depth = 0;
  bool inArray = false, expectElement = false, afterKey = false;
  int arrayDepth = 0;
  std::string lastString;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (isspace(static_cast<unsigned char>(c)))
      continue;
    if (inArray && expectElement && depth == arrayDepth) {
      if (c != ']')
        out.push_back(i);
      expectElement = false;
    }
    if (c == '"') {
      size_t j = i + 1;
      std::string s;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\')
          ++j;
        else
          s += text[j];
      }
      lastString = s;
      i = j;
      continue;
    }
    if (c == ':') {
      afterKey = depth == 1 && lastString == key;
      continue;
    }
    if (c == '{' || c == '[') {
      if (c == '[' && afterKey && !inArray) {
        inArray = true;
        arrayDepth = depth + 1;
        expectElement = true;
      }
      afterKey = false;
      ++depth;
      continue;
    }
    if (c == '}' || c == ']') {
      --depth;
      if (inArray && depth < arrayDepth)
        return out;
      continue;
    }
    if (c == ',' && inArray && depth == arrayDepth)
      expectElement = true;
    afterKey = false;
  }
  return out;
}

std::string at(const std::string &file, const std::string &text,
               const std::vector<size_t> &offsets, size_t index) {
  if (index < offsets.size())
    return fmt::format("{}:{}", file, lineOf(text, offsets[index]));
  return fmt::format("{} (element {})", file, index);
}

/// Whether obj[key] is the string `value` (false where it is another
/// type: json::value would throw).
bool isString(const json &obj, const char *key, const char *value) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && it->get<std::string>() == value;
}

Status parseJson(const std::string &text, const std::string &name, json *out) {
  if (int depth = jsonNestingDepth(text); depth > limits::kMaxJsonDepth)
    return invalidArgument(fmt::format(
        "{}: JSON nested {} deep, more than the limit of {}", name, depth,
        limits::kMaxJsonDepth));
  try {
    *out = json::parse(text);
  } catch (const json::parse_error &e) {
    // e.byte is 1-based: the byte where parsing stopped.
    size_t pos = e.byte > 0 ? size_t(e.byte - 1) : 0;
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line
    // 1, column 2: " prefix: we give the line ourselves.
    size_t colon = what.find(": ");
    if (colon != std::string::npos && what.find("parse error") < colon)
      what = what.substr(colon + 2);
    return invalidArgument(
        fmt::format("{}:{}: bad JSON: {}", name, lineOf(text, pos), what));
  }
  if (!out->is_object())
    return invalidArgument(fmt::format("{}:1: expected a JSON object", name));
  return Status::ok();
}

/// A byte size: a number, or a string such as "16K", "4MiB", "1G" (binary
/// units); null is unbounded.
bool parseBytes(const json &v, uint64_t *out) {
  if (v.is_null()) {
    *out = UINT64_MAX;
    return true;
  }
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0)
      return false;
    *out = uint64_t(v.get<int64_t>());
    return true;
  }
  if (!v.is_string())
    return false;
  std::string s = v.get<std::string>();
  // strtoull would take "-1" (and " 1") as a huge number.
  if (s.empty() || !isdigit(static_cast<unsigned char>(s[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long n = strtoull(s.c_str(), &end, 10);
  if (end == s.c_str() || errno)
    return false;
  std::string unit(end);
  static const std::map<std::string, int> shifts = {
      {"", 0},   {"B", 0},  {"K", 10},   {"KB", 10}, {"KiB", 10}, {"M", 20},
      {"MB", 20}, {"MiB", 20}, {"G", 30}, {"GB", 30}, {"GiB", 30}, {"T", 40},
      {"TB", 40}, {"TiB", 40}};
  auto it = shifts.find(unit);
  if (it == shifts.end() || (it->second && n > (UINT64_MAX >> it->second)))
    return false;
  *out = uint64_t(n) << it->second;
  return true;
}

/// A count of ranks or nodes: an integer in [1, limits::kMaxRanks] (a
/// node holds a rank at least; a larger count, read as int, would wrap).
bool parseCount(const json &v, int *out) {
  // Integers above INT64_MAX parse as unsigned: none is a count.
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(limits::kMaxRanks)))
    return false;
  int64_t n = v.get<int64_t>();
  if (n < 1 || n > limits::kMaxRanks)
    return false;
  *out = int(n);
  return true;
}

/// An int, or [min, max] inclusive, into [*lo, *hi], each in
/// [1, limits::kMaxRanks]; a null max is the limit.
bool parseRange(const json &v, int *lo, int *hi) {
  if (v.is_number_integer()) {
    if (!parseCount(v, lo))
      return false;
    *hi = *lo;
    return true;
  }
  if (v.is_array() && v.size() == 2 && parseCount(v[0], lo)) {
    *hi = limits::kMaxRanks;
    if (!v[1].is_null() && !parseCount(v[1], hi))
      return false;
    return *lo <= *hi;
  }
  return false;
}

bool parseArch(const std::string &s, int *out) {
  if (s.size() < 4 || s.compare(0, 3, "sm_") != 0)
    return false;
  char *end = nullptr;
  long v = strtol(s.c_str() + 3, &end, 10);
  if (*end || v <= 0)
    return false;
  *out = int(v);
  return true;
}

bool isKnownDtype(const std::string &d) { return dtypeSize(d) != 0; }

bool isKnownOp(const std::string &o) { return lookupRedOp(o).has_value(); }

Status parseStrings(const json &obj, const char *key, const std::string &where,
                    bool (*known)(const std::string &),
                    std::vector<std::string> *out) {
  if (!obj.contains(key))
    return Status::ok();
  const json &v = obj[key];
  if (!v.is_array())
    return invalidArgument(
        fmt::format("{}: '{}' must be an array of strings", where, key));
  for (const json &s : v) {
    if (!s.is_string())
      return invalidArgument(
          fmt::format("{}: '{}' must be an array of strings", where, key));
    std::string str = s.get<std::string>();
    if (known && !known(str))
      return invalidArgument(
          fmt::format("{}: '{}' names unknown '{}'", where, key, str));
    out->push_back(str);
  }
  return Status::ok();
}

Status checkKeys(const json &obj, const std::string &where,
                 std::initializer_list<const char *> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = std::any_of(allowed.begin(), allowed.end(),
                          [&](const char *k) { return it.key() == k; });
    if (!ok)
      return invalidArgument(
          fmt::format("{}: unknown key '{}'", where, it.key()));
  }
  return Status::ok();
}

Status intField(const json &obj, const char *key, const std::string &where,
                int lo, int hi, int *out) {
  if (!obj.contains(key))
    return Status::ok();
  const json &v = obj[key];
  // Integers above INT64_MAX parse as unsigned: in no range here.
  bool inRange =
      v.is_number_integer() &&
      !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) &&
      v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  if (!inRange)
    return invalidArgument(fmt::format(
        "{}: '{}' must be an integer in [{}, {}], not {}", where, key, lo, hi,
        v.dump()));
  *out = v.get<int>();
  return Status::ok();
}

Status parseAlgorithm(const json &a, const std::string &where,
                      AlgorithmInfo *out) {
  if (!a.is_object())
    return invalidArgument(fmt::format("{}: an algorithm must be an object", where));
  MSCCLC_TRY(checkKeys(a, where,
                       {"name", "collective", "ranks", "nodes", "inPlace",
                        "outOfPlace", "dtypes", "ops", "rootParam", "params",
                        "maxInstances", "countMultiple", "selectable",
                        "note"}));
  if (!a.contains("name") || !a["name"].is_string() ||
      a["name"].get<std::string>().empty())
    return invalidArgument(fmt::format("{}: 'name' (a string) is required", where));
  out->name = a["name"].get<std::string>();
  if (!a.contains("collective") || !a["collective"].is_string() ||
      !parseCollective(a["collective"].get<std::string>(), &out->collective))
    return invalidArgument(fmt::format(
        "{}: algorithm {}: 'collective' must name a collective", where,
        out->name));
  if (a.contains("ranks") &&
      !parseRange(a["ranks"], &out->minRanks, &out->maxRanks))
    return invalidArgument(fmt::format(
        "{}: 'ranks' must be n or [min, max] (max may be null)", where));
  if (a.contains("nodes")) {
    if (!parseRange(a["nodes"], &out->minNodes, &out->maxNodes))
      return invalidArgument(fmt::format(
          "{}: 'nodes' must be n or [min, max] (max may be null)", where));
    if (out->maxNodes == limits::kMaxRanks) // [min, null]: any
      out->maxNodes = 0;
  }
  for (auto [key, field] : {std::pair{"inPlace", &out->inPlace},
                            std::pair{"outOfPlace", &out->outOfPlace},
                            std::pair{"selectable", &out->selectable}}) {
    if (!a.contains(key))
      continue;
    if (!a[key].is_boolean())
      return invalidArgument(fmt::format("{}: '{}' must be true or false", where, key));
    *field = a[key].get<bool>();
  }
  MSCCLC_TRY(parseStrings(a, "dtypes", where, isKnownDtype, &out->dtypes));
  MSCCLC_TRY(parseStrings(a, "ops", where, isKnownOp, &out->ops));
  MSCCLC_TRY(parseStrings(a, "params", where, nullptr, &out->params));
  if (a.contains("rootParam")) {
    if (!a["rootParam"].is_string())
      return invalidArgument(fmt::format("{}: 'rootParam' must be a string", where));
    out->rootParam = a["rootParam"].get<std::string>();
  }
  if (collectiveRooted(out->collective) && out->rootParam.empty())
    return invalidArgument(fmt::format(
        "{}: algorithm {} of a rooted collective needs 'rootParam'", where,
        out->name));
  MSCCLC_TRY(intField(a, "maxInstances", where, 1, 1024, &out->maxInstances));
  int multiple = 1;
  MSCCLC_TRY(intField(a, "countMultiple", where, 1, 1 << 30, &multiple));
  out->countMultiple = uint64_t(multiple);
  return Status::ok();
}

} // namespace

int lineOf(const std::string &text, size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + int(std::count(text.begin(), text.begin() + long(pos), '\n'));
}

bool parseCollective(const std::string &name, Collective *out) {
  std::optional<Collective> c = lookupCollective(name);
  if (!c || !isStandardCollective(*c))
    return false;
  *out = *c;
  return true;
}

uint64_t selectionBytes(const SelectionQuery &q) {
  uint64_t elems = std::max(inputElements(q.collective, q.count, q.nranks),
                            outputElements(q.collective, q.count, q.nranks));
  return elems * std::max<uint64_t>(1, dtypeSize(q.dtype));
}

std::string AlgorithmInfo::whyNot(const SelectionQuery &q) const {
  if (q.collective != collective)
    return fmt::format("{} is an {}", name, collectiveName(collective));
  if (!selectable)
    return fmt::format("{} is not selectable", name);
  if (q.nranks < minRanks || q.nranks > maxRanks)
    return fmt::format("{} serves {} to {} ranks", name, minRanks, maxRanks);
  if (q.nnodes < minNodes || (maxNodes && q.nnodes > maxNodes))
    return maxNodes == 1
               ? fmt::format("{} needs all ranks on one node", name)
               : fmt::format("{} serves {} to {} nodes", name, minNodes,
                             maxNodes ? fmt::format("{}", maxNodes) : "any");
  if (q.inPlace ? !inPlace : !outOfPlace)
    return fmt::format("{} does not run {}", name,
                       q.inPlace ? "in place" : "out of place");
  if (!dtypes.empty() &&
      std::find(dtypes.begin(), dtypes.end(), q.dtype) == dtypes.end())
    return fmt::format("{} does not take {}", name, q.dtype);
  if (collectiveReduces(collective) && !ops.empty() &&
      std::find(ops.begin(), ops.end(), q.op) == ops.end())
    return fmt::format("{} does not reduce with {}", name, q.op);
  if (collectiveRooted(collective) && (q.root < 0 || q.root >= q.nranks))
    return fmt::format("root {} is not a rank of {}", q.root, q.nranks);
  if (q.count % countMultiple)
    return fmt::format("{} needs a count that is a multiple of {}", name,
                       countMultiple);
  return "";
}

std::string Selection::describe() const {
  std::string s = algorithm;
  if (builtinCopy())
    return s;
  s += fmt::format(" instances={}", instances);
  for (const auto &[k, v] : params)
    s += fmt::format(" {}={}", k, v);
  return s;
}

const AlgorithmInfo *SelectionTable::algorithm(const std::string &name) const {
  for (const AlgorithmInfo &a : *algorithms_)
    if (a.name == name)
      return &a;
  return nullptr;
}

Status SelectionTable::parse(const std::string &catalogText,
                             const std::string &catalogName,
                             const std::string &tableText,
                             const std::string &tableName,
                             SelectionTable *out) {
  SelectionTable t;
  json catalog, table;
  MSCCLC_TRY(parseJson(catalogText, catalogName, &catalog));
  MSCCLC_TRY(parseJson(tableText, tableName, &table));

  if (!isString(catalog, "format", "mscclc-algorithms") ||
      !catalog.contains("algorithms") || !catalog["algorithms"].is_array())
    return invalidArgument(fmt::format(
        "{}:1: expected {{\"format\": \"mscclc-algorithms\", \"algorithms\": "
        "[...]}}",
        catalogName));
  std::vector<size_t> algoAt = arrayElementOffsets(catalogText, "algorithms");
  for (size_t i = 0; i < catalog["algorithms"].size(); ++i) {
    std::string where = at(catalogName, catalogText, algoAt, i);
    AlgorithmInfo a;
    MSCCLC_TRY(parseAlgorithm(catalog["algorithms"][i], where, &a));
    a.location = where;
    if (t.algorithm(a.name))
      return invalidArgument(
          fmt::format("{}: algorithm {} is listed twice", where, a.name));
    t.algorithms_->push_back(std::move(a));
  }

  if (!isString(table, "format", "mscclc-selection") ||
      !table.contains("entries") || !table["entries"].is_array())
    return invalidArgument(fmt::format(
        "{}:1: expected {{\"format\": \"mscclc-selection\", \"entries\": "
        "[...]}}",
        tableName));
  std::vector<size_t> entryAt = arrayElementOffsets(tableText, "entries");
  for (size_t i = 0; i < table["entries"].size(); ++i) {
    const json &e = table["entries"][i];
    std::string where = at(tableName, tableText, entryAt, i);
    if (!e.is_object())
      return invalidArgument(fmt::format("{}: an entry must be an object", where));
    MSCCLC_TRY(checkKeys(e, where,
                         {"collective", "ranks", "nodes", "arch", "bytes",
                          "algorithm", "instances", "params", "source",
                          "note"}));
    TableEntry te;
    te.location = where;
    if (!e.contains("collective") || !e["collective"].is_string() ||
        !parseCollective(e["collective"].get<std::string>(), &te.collective))
      return invalidArgument(
          fmt::format("{}: 'collective' must name a collective", where));
    if (e.contains("ranks") && !parseRange(e["ranks"], &te.minRanks, &te.maxRanks))
      return invalidArgument(fmt::format(
          "{}: 'ranks' must be n or [min, max] (max may be null)", where));
    if (e.contains("nodes") && !parseRange(e["nodes"], &te.minNodes, &te.maxNodes))
      return invalidArgument(fmt::format(
          "{}: 'nodes' must be n or [min, max] (max may be null)", where));
    if (e.contains("arch")) {
      json archs = e["arch"].is_string() ? json::array({e["arch"]}) : e["arch"];
      if (!archs.is_array())
        return invalidArgument(fmt::format(
            "{}: 'arch' must be \"sm_NN\" or a list of them", where));
      for (const json &a : archs) {
        int arch = 0;
        if (!a.is_string() || !parseArch(a.get<std::string>(), &arch))
          return invalidArgument(fmt::format(
              "{}: 'arch' must be \"sm_NN\" or a list of them", where));
        te.archs.push_back(arch);
      }
    }
    if (e.contains("bytes")) {
      const json &b = e["bytes"];
      if (!b.is_array() || b.size() != 2 || !parseBytes(b[0], &te.minBytes) ||
          b[0].is_null() || !parseBytes(b[1], &te.maxBytes) ||
          te.minBytes >= te.maxBytes)
        return invalidArgument(fmt::format(
            "{}: 'bytes' must be [min, max) with min < max (numbers or "
            "\"16K\"-style strings; max null for no bound)",
            where));
    }
    if (!e.contains("algorithm") || !e["algorithm"].is_string())
      return invalidArgument(fmt::format("{}: 'algorithm' is required", where));
    std::string name = e["algorithm"].get<std::string>();
    te.algorithm = t.algorithm(name);
    if (!te.algorithm)
      return invalidArgument(fmt::format(
          "{}: algorithm '{}' is not in {}", where, name, catalogName));
    if (te.algorithm->collective != te.collective)
      return invalidArgument(fmt::format(
          "{}: algorithm {} computes {}, the entry is for {}", where, name,
          collectiveName(te.algorithm->collective),
          collectiveName(te.collective)));
    MSCCLC_TRY(intField(e, "instances", where, 1, te.algorithm->maxInstances,
                        &te.instances));
    if (e.contains("params")) {
      if (!e["params"].is_object())
        return invalidArgument(fmt::format(
            "{}: 'params' must be an object of integers", where));
      for (auto it = e["params"].begin(); it != e["params"].end(); ++it) {
        const auto &known = te.algorithm->params;
        if (std::find(known.begin(), known.end(), it.key()) == known.end())
          return invalidArgument(fmt::format(
              "{}: {} has no tunable param '{}'", where, name, it.key()));
        // Unsigned above INT64_MAX would read as negative.
        if (!it.value().is_number_integer() ||
            (it.value().is_number_unsigned() &&
             it.value().get<uint64_t>() > uint64_t(INT64_MAX)))
          return invalidArgument(fmt::format(
              "{}: param '{}' must be an integer in [{}, {}], not {}", where,
              it.key(), INT64_MIN, INT64_MAX, it.value().dump()));
        te.params.emplace_back(it.key(), it.value().get<long long>());
      }
    }
    if (!isString(e, "source", "measured") && !isString(e, "source", "estimated"))
      return invalidArgument(fmt::format(
          "{}: 'source' must be \"measured\" or \"estimated\"", where));
    te.source = e["source"].get<std::string>();
    t.entries_.push_back(std::move(te));
  }
  Sha256 h;
  h.field(catalogText);
  h.field(tableText);
  t.digest_ = h.hexDigest();
  *out = std::move(t);
  return Status::ok();
}

Status SelectionTable::load(const std::string &catalogPath,
                            const std::string &tablePath, SelectionTable *out) {
  std::string catalog, table;
  FileRules rules;
  rules.what = "algorithm catalog";
  rules.maxBytes = limits::kMaxTableBytes;
  MSCCLC_TRY(readRegularFile(catalogPath, rules, &catalog));
  rules.what = "selection table";
  MSCCLC_TRY(readRegularFile(tablePath, rules, &table));
  return parse(catalog, catalogPath, table, tablePath, out);
}

Status SelectionTable::select(const SelectionQuery &q, Selection *out) const {
  if (q.nranks < 1 || q.nnodes < 1 || q.nranks % q.nnodes)
    return invalidArgument(fmt::format(
        "selection: {} ranks cannot be spread over {} nodes", q.nranks,
        q.nnodes));
  if (collectiveRooted(q.collective) && (q.root < 0 || q.root >= q.nranks))
    return invalidArgument(
        fmt::format("root {} is not a rank of {}", q.root, q.nranks));
  if (q.nranks == 1 && q.op == "premulsum" && collectiveReduces(q.collective))
    return unsupported("premulsum on one rank scales the input: no stdlib "
                       "program serves one rank");
  if (q.nranks == 1) {
    // Every collective of one rank is a copy (in place: nothing); sum,
    // prod, min, max and avg of one value are that value.
    *out = Selection();
    out->algorithm = "copy";
    out->source = "builtin";
    return Status::ok();
  }
  uint64_t bytes = selectionBytes(q);
  std::vector<std::string> reasons;
  for (const TableEntry &e : entries_) {
    if (e.collective != q.collective || q.nranks < e.minRanks ||
        q.nranks > e.maxRanks || q.nnodes < e.minNodes ||
        q.nnodes > e.maxNodes || bytes < e.minBytes || bytes >= e.maxBytes ||
        (!e.archs.empty() &&
         std::find(e.archs.begin(), e.archs.end(), q.arch) == e.archs.end()))
      continue;
    std::string why = e.algorithm->whyNot(q);
    if (!why.empty()) {
      reasons.push_back(fmt::format("{}: {}", e.location, why));
      continue;
    }
    Selection s;
    s.algorithm = e.algorithm->name;
    s.instances = e.instances;
    s.params = e.params;
    if (!e.algorithm->rootParam.empty())
      s.params.emplace_back(e.algorithm->rootParam, q.root);
    std::sort(s.params.begin(), s.params.end());
    s.source = e.source;
    s.location = e.location;
    *out = std::move(s);
    return Status::ok();
  }
  std::string what = fmt::format(
      "no stdlib algorithm for {} of {} {} ({} bytes){}{} at {} ranks on {} "
      "node{}, sm_{}",
      collectiveName(q.collective), q.count, q.dtype, bytes,
      collectiveReduces(q.collective) ? " with " + q.op : "",
      q.inPlace ? " in place" : "", q.nranks, q.nnodes, q.nnodes == 1 ? "" : "s",
      q.arch);
  if (reasons.empty())
    return unsupported(what + ": no table entry matches");
  std::string msg = what + ": ";
  for (size_t i = 0; i < reasons.size(); ++i)
    msg += (i ? "; " : "") + reasons[i];
  return unsupported(msg);
}

} // namespace mscclc::rt
