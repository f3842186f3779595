//===- Plan.cpp - Parsing and validating execution plans ------------------===//

#include "mscclc/runtime/Plan.h"

#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Layout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

namespace mscclc::rt {

namespace {

using Json = nlohmann::json;

/// What a JSON value is, for messages ("a string", "an array", ...).
const char *describe(const Json &v) {
  switch (v.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return "a boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "an integer";
  case Json::value_t::number_float:
    return "a fractional number";
  case Json::value_t::string:
    return "a string";
  case Json::value_t::array:
    return "an array";
  case Json::value_t::object:
    return "an object";
  default:
    return "not a JSON value";
  }
}

/// Parses the whole text. nlohmann-json reports errors by exception; they
/// end here, as a Status naming the line and column.
Status parseJson(const std::string &text, Json *out) {
  try {
    *out = Json::parse(text);
  } catch (const Json::exception &e) {
    // what() reads "[json.exception.parse_error.101] parse error at line 3,
    // column 1: ..."; the bracketed id means nothing to a user.
    std::string what = e.what();
    size_t idEnd = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && idEnd != std::string::npos)
      what.erase(0, idEnd + 2);
    return invalidArgument(fmt::format("JSON {}", what));
  }
  return Status::ok();
}

/// Field readers: each reports "plan: <where>.<key> ..." on a bad value.
class Reader {
public:
  Reader(const Json &obj, std::string where)
      : obj_(obj), where_(std::move(where)) {}

  Status object() const {
    if (!obj_.is_object())
      return invalidArgument(fmt::format("plan: {} is not an object (it is {})",
                                         where_, describe(obj_)));
    return Status::ok();
  }
  Status integer(const char *key, int64_t *out, bool required = true,
                 int64_t min = INT64_MIN, int64_t max = INT64_MAX) const {
    const Json *v = find(key);
    if (!v)
      return required ? missing(key) : Status::ok();
    if (!v->is_number_integer())
      return wrongType(key, *v, "an integer");
    // Integers above INT64_MAX parse as unsigned; none is in range.
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX))
      return outOfRange(key, fmt::format("{}", v->get<uint64_t>()), min, max);
    int64_t value = v->get<int64_t>();
    if (value < min || value > max)
      return outOfRange(key, fmt::format("{}", value), min, max);
    *out = value;
    return Status::ok();
  }
  Status integer(const char *key, int *out, bool required = true,
                 int64_t min = INT32_MIN, int64_t max = INT32_MAX) const {
    int64_t v = *out;
    MSCCLC_TRY(integer(key, &v, required, min, max));
    *out = int(v);
    return Status::ok();
  }
  Status string(const char *key, std::string *out, bool required = true) const {
    const Json *v = find(key);
    if (!v)
      return required ? missing(key) : Status::ok();
    if (!v->is_string())
      return wrongType(key, *v, "a string");
    *out = v->get<std::string>();
    return Status::ok();
  }
  Status boolean(const char *key, bool *out, bool required = true) const {
    const Json *v = find(key);
    if (!v)
      return required ? missing(key) : Status::ok();
    if (!v->is_boolean())
      return wrongType(key, *v, "true or false");
    *out = v->get<bool>();
    return Status::ok();
  }
  Status array(const char *key, const Json::array_t **out,
               bool required = true) const {
    static const Json::array_t empty;
    *out = &empty;
    const Json *v = find(key);
    if (!v)
      return required ? missing(key) : Status::ok();
    if (!v->is_array())
      return wrongType(key, *v, "an array");
    *out = v->get_ptr<const Json::array_t *>();
    return Status::ok();
  }
  Status strings(const char *key, std::vector<std::string> *out,
                 bool required = true) const {
    const Json::array_t *items;
    MSCCLC_TRY(array(key, &items, required));
    for (size_t i = 0; i < items->size(); ++i) {
      const Json &item = (*items)[i];
      if (!item.is_string())
        return invalidArgument(
            fmt::format("plan: {}.{}[{}] must be a string, not {}", where_, key,
                        i, describe(item)));
      out->push_back(item.get<std::string>());
    }
    return Status::ok();
  }
  const std::string &where() const { return where_; }

private:
  /// The member `key`, or nullptr (also when obj_ is not an object).
  const Json *find(const char *key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  Status missing(const char *key) const {
    return invalidArgument(fmt::format("plan: {} has no '{}'", where_, key));
  }
  Status wrongType(const char *key, const Json &v, const char *want) const {
    return invalidArgument(fmt::format("plan: {}.{} must be {}, not {}", where_,
                                       key, want, describe(v)));
  }
  Status outOfRange(const char *key, const std::string &value, int64_t min,
                    int64_t max) const {
    return invalidArgument(
        fmt::format("plan: {}.{} = {} is out of range [{}, {}]", where_, key,
                    value, min, max));
  }
  const Json &obj_;
  std::string where_;
};

/// Reads `field`, a list of buffer names ("input", "output", "scratch"),
/// into three flags.
Status readBufferSet(Reader &r, const char *field, const std::string &where,
                     bool *input, bool *output, bool *scratch) {
  std::vector<std::string> names;
  MSCCLC_TRY(r.strings(field, &names, false));
  for (const std::string &b : names) {
    if (b == "input")
      *input = true;
    else if (b == "output")
      *output = true;
    else if (b == "scratch")
      *scratch = true;
    else
      return invalidArgument(
          fmt::format("plan: {}.{} has unknown '{}'", where, field, b));
  }
  return Status::ok();
}

Status parseChannel(const Json &j, const std::string &where, bool memory,
                    int ranks, int blocks, int waitSlots, PlanChannel *c) {
  Reader r(j, where);
  MSCCLC_TRY(r.object());
  MSCCLC_TRY(r.integer("index", &c->index, true, 0));
  MSCCLC_TRY(r.string("name", &c->name, false));
  MSCCLC_TRY(r.integer("peer", &c->peer, true, 0, ranks - 1));
  if (memory) {
    std::string protocol;
    MSCCLC_TRY(r.string("protocol", &protocol));
    if (protocol != "LL" && protocol != "HB")
      return invalidArgument(fmt::format(
          "plan: {}.protocol must be LL or HB, not '{}'", where, protocol));
    c->ll = protocol == "LL";
  }
  MSCCLC_TRY(r.integer("id", &c->id, false));
  MSCCLC_TRY(r.integer("peerIndex", &c->peerIndex, true, -1));
  MSCCLC_TRY(r.integer("block", &c->block, true, 0, blocks - 1));
  MSCCLC_TRY(r.integer("group", &c->group, false, 1, blocks));
  if (c->block + c->group > blocks)
    return invalidArgument(fmt::format("plan: {} uses blocks {}..{} of {}",
                                       where, c->block, c->block + c->group - 1,
                                       blocks));
  MSCCLC_TRY(r.integer("waitSlot", &c->waitSlot, false, -1));
  if (c->waitSlot >= 0 && c->waitSlot + c->group > waitSlots)
    return invalidArgument(
        fmt::format("plan: {}.waitSlot {} + group {} exceeds "
                    "waitSlots {}",
                    where, c->waitSlot, c->group, waitSlots));
  MSCCLC_TRY(r.boolean("signals", &c->signals, false));
  MSCCLC_TRY(r.boolean("waits", &c->waits, false));
  return readBufferSet(r, "peerBuffers", where, &c->peerInput,
                       &c->peerOutput, &c->peerScratch);
}

} // namespace

size_t dtypeSize(const std::string &d) {
  if (d == "f32" || d == "i32" || d == "u32") return 4;
  if (d == "f16" || d == "bf16") return 2;
  if (d == "f64" || d == "i64" || d == "u64") return 8;
  if (d == "i8" || d == "u8" || d == "f8e4m3" || d == "f8e5m2") return 1;
  return 0;
}

uint64_t Plan::inputElems(uint64_t count) const {
  return mscclc_chunk_begin(uint64_t(inputChunks), count, uint64_t(chunks));
}
uint64_t Plan::outputElems(uint64_t count) const {
  return mscclc_chunk_begin(uint64_t(outputChunks), count, uint64_t(chunks));
}

uint64_t Plan::scratchBytes(uint64_t count, uint64_t elemSize) const {
  std::vector<MscclcScratchDesc> descs;
  for (const PlanScratch &s : scratch)
    descs.push_back({uint64_t(s.chunks), s.packet ? 1 : 0});
  if (descs.empty())
    return 0;
  return mscclc_scratch_bytes(descs.data(), int(descs.size()), count,
                              uint64_t(chunks), elemSize);
}

bool Plan::needsPeerUserBuffers(int rank) const {
  const RankPlan &rp = rankPlans[size_t(rank)];
  for (const auto *list : {&rp.memoryChannels, &rp.portChannels})
    for (const PlanChannel &c : *list)
      if (c.peerInput || c.peerOutput)
        return true;
  return false;
}

bool Plan::stagedByStdlib() const {
  if (usesPortChannels)
    return true;
  for (int r = 0; r < ranks; ++r)
    if (needsPeerUserBuffers(r))
      return true;
  return false;
}

bool Plan::supportsDtype(const std::string &d) const {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}
bool Plan::supportsRedop(const std::string &r) const {
  return std::find(redops.begin(), redops.end(), r) != redops.end();
}

Status Plan::serves(const std::string &dtype, const std::string &redop) const {
  if (!dtypes.empty() && !supportsDtype(dtype))
    return invalidArgument(
        fmt::format("program {} does not support data type {}", name, dtype));
  if (!redops.empty() && !supportsRedop(redop))
    return invalidArgument(
        fmt::format("program {} does not support operator {}", name, redop));
  return Status::ok();
}

Status parsePlan(const std::string &text, Plan *plan) {
  Json root;
  MSCCLC_TRY(parseJson(text, &root).context("reading the plan"));
  Reader r(root, "plan");
  MSCCLC_TRY(r.object());
  std::string fmt;
  MSCCLC_TRY(r.string("format", &fmt));
  if (fmt != "mscclc-plan")
    return invalidArgument(
        fmt::format("plan: format is '{}', not 'mscclc-plan'", fmt));
  int version = 0;
  MSCCLC_TRY(r.integer("version", &version));
  if (version != 1)
    return unsupported(fmt::format("plan: version {} is not supported (this "
                                   "runtime reads version 1)",
                                   version));
  Plan p;
  MSCCLC_TRY(r.integer("abiVersion", &p.abiVersion));
  if (unsigned(p.abiVersion) != MSCCLC_ABI_VERSION)
    return unsupported(
        fmt::format("plan: kernels use ABI {}, this runtime has ABI "
                    "{}: recompile the program",
                    p.abiVersion, MSCCLC_ABI_VERSION));
  MSCCLC_TRY(r.string("name", &p.name));
  MSCCLC_TRY(r.string("collective", &p.collective));
  MSCCLC_TRY(r.integer("ranks", &p.ranks, true, 1, 65536));
  MSCCLC_TRY(r.integer("gpusPerNode", &p.gpusPerNode, false, 1, 65536));
  MSCCLC_TRY(r.integer("instances", &p.instances, false, 1));
  MSCCLC_TRY(r.integer("chunks", &p.chunks, true, 1, int64_t(1) << 32));
  MSCCLC_TRY(r.integer("inputChunks", &p.inputChunks, true, 1, int64_t(1) << 40));
  MSCCLC_TRY(r.integer("outputChunks", &p.outputChunks, true, 1, int64_t(1) << 40));
  MSCCLC_TRY(r.boolean("inPlace", &p.inPlace, false));
  MSCCLC_TRY(r.integer("root", &p.root, false, 0, p.ranks - 1));
  MSCCLC_TRY(r.integer("threadsPerBlock", &p.threadsPerBlock, true, 32, 1024));
  if (p.threadsPerBlock % 32 != 0)
    return invalidArgument(
        fmt::format("plan: threadsPerBlock {} is not a multiple "
                    "of 32",
                    p.threadsPerBlock));
  MSCCLC_TRY(r.strings("dtypes", &p.dtypes, false));
  MSCCLC_TRY(r.strings("redops", &p.redops, false));
  MSCCLC_TRY(r.string("premulKernel", &p.premulKernel, false));
  MSCCLC_TRY(r.boolean("usesPortChannels", &p.usesPortChannels, false));
  MSCCLC_TRY(r.boolean("usesSwitchChannels", &p.usesSwitchChannels, false));

  const Json::array_t *scratch;
  MSCCLC_TRY(r.array("scratch", &scratch, false));
  for (size_t i = 0; i < scratch->size(); ++i) {
    Reader s((*scratch)[i], fmt::format("scratch[{}]", i));
    MSCCLC_TRY(s.object());
    PlanScratch ps;
    int index = -1;
    MSCCLC_TRY(s.string("name", &ps.name, false));
    MSCCLC_TRY(s.integer("index", &index, false, 0));
    if (index >= 0 && size_t(index) != i)
      return invalidArgument(
          fmt::format("plan: scratch[{}] has index {}", i, index));
    MSCCLC_TRY(s.integer("chunks", &ps.chunks, true, 1, int64_t(1) << 32));
    MSCCLC_TRY(s.boolean("packet", &ps.packet, false));
    p.scratch.push_back(ps);
  }

  const Json::array_t *ranks;
  MSCCLC_TRY(r.array("rankPlans", &ranks));
  if (ranks->size() != size_t(p.ranks))
    return invalidArgument(
        fmt::format("plan: {} rankPlans for {} ranks", ranks->size(), p.ranks));
  p.rankPlans.resize(size_t(p.ranks));
  std::vector<bool> seen(size_t(p.ranks), false);
  for (size_t i = 0; i < ranks->size(); ++i) {
    Reader rr((*ranks)[i], fmt::format("rankPlans[{}]", i));
    MSCCLC_TRY(rr.object());
    int rank = -1;
    MSCCLC_TRY(rr.integer("rank", &rank, true, 0, p.ranks - 1));
    if (seen[size_t(rank)])
      return invalidArgument(fmt::format("plan: rank {} appears twice", rank));
    seen[size_t(rank)] = true;
    RankPlan &rp = p.rankPlans[size_t(rank)];
    rp.rank = rank;
    MSCCLC_TRY(rr.string("kernel", &rp.kernel));
    MSCCLC_TRY(rr.integer("blocks", &rp.blocks, true, 1, 65535));
    MSCCLC_TRY(rr.integer("waitSlots", &rp.waitSlots, false, 0, 1 << 24));
    for (int kind = 0; kind < 2; ++kind) {
      const char *key = kind == 0 ? "memoryChannels" : "portChannels";
      auto &list = kind == 0 ? rp.memoryChannels : rp.portChannels;
      const Json::array_t *chans;
      MSCCLC_TRY(rr.array(key, &chans, false));
      for (size_t c = 0; c < chans->size(); ++c) {
        PlanChannel pc;
        std::string where = fmt::format("rankPlans[{}].{}[{}]", rank, key, c);
        MSCCLC_TRY(parseChannel((*chans)[c], where, kind == 0, p.ranks,
                                rp.blocks, rp.waitSlots, &pc));
        if (pc.index != int(c))
          return invalidArgument(
              fmt::format("plan: {} has index {}", where, pc.index));
        if (pc.peer == rank)
          return invalidArgument(
              fmt::format("plan: {} connects rank {} to itself", where, rank));
        list.push_back(pc);
      }
    }
    if (rp.portChannels.size() > 65535)
      return invalidArgument("plan: more than 65535 port channels on a rank");
    const Json::array_t *sw;
    MSCCLC_TRY(rr.array("switchChannels", &sw, false));
    for (size_t c = 0; c < sw->size(); ++c) {
      Reader sr((*sw)[c],
                fmt::format("rankPlans[{}].switchChannels[{}]", rank, c));
      MSCCLC_TRY(sr.object());
      PlanSwitchChannel sc;
      MSCCLC_TRY(sr.integer("index", &sc.index, false, 0));
      MSCCLC_TRY(sr.string("name", &sc.name, false));
      MSCCLC_TRY(sr.integer("id", &sc.id, false));
      const Json::array_t *group;
      MSCCLC_TRY(sr.array("ranks", &group));
      for (size_t k = 0; k < group->size(); ++k) {
        const Json &g = (*group)[k];
        // Unsigned values above INT64_MAX read as negative: rejected too.
        if (!g.is_number_integer() || g.get<int64_t>() < 0 ||
            g.get<int64_t>() >= p.ranks)
          return invalidArgument(fmt::format(
              "plan: {}.ranks[{}] must be a rank in [0, {}), not {}",
              sr.where(), k, p.ranks, g.dump()));
        sc.ranks.push_back(int(g.get<int64_t>()));
      }
      MSCCLC_TRY(readBufferSet(sr, "buffers", sr.where(), &sc.input,
                               &sc.output, &sc.scratch));
      rp.switchChannels.push_back(sc);
    }
  }
  // Reverse channels must exist where the plan says they do, and lead back.
  for (const RankPlan &rp : p.rankPlans) {
    for (int kind = 0; kind < 2; ++kind) {
      const auto &list = kind == 0 ? rp.memoryChannels : rp.portChannels;
      for (const PlanChannel &c : list) {
        if (c.peerIndex < 0)
          continue;
        const RankPlan &peer = p.rankPlans[size_t(c.peer)];
        const auto &plist = kind == 0 ? peer.memoryChannels : peer.portChannels;
        if (size_t(c.peerIndex) >= plist.size() ||
            plist[size_t(c.peerIndex)].peer != rp.rank)
          return invalidArgument(fmt::format(
              "plan: rank {} {} channel {} names reverse channel {} on rank "
              "{}, which does not lead back",
              rp.rank, kind == 0 ? "memory" : "port", c.index, c.peerIndex,
              c.peer));
      }
    }
  }
  *plan = std::move(p);
  return Status::ok();
}

} // namespace mscclc::rt
