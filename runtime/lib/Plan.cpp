//===- Plan.cpp - Parsing and validating execution plans ------------------===//

#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/JsonDepth.h"

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
  // Printing a document recurses once per level (bundleJson does): one
  // nested 50,000 deep would overflow the stack there.
  if (int depth = jsonNestingDepth(text); depth > limits::kMaxJsonDepth)
    return invalidArgument(fmt::format(
        "JSON nested {} deep, more than the limit of {}", depth,
        limits::kMaxJsonDepth));
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

/// The limits of a plan's values that no program the compiler writes
/// exceeds (docs/plan.md): channel and switch ids (the compiler's
/// kMaxChannelId), instances, scratch buffers.
constexpr int64_t kMaxChannelId = (int64_t(1) << 16) - 1;
constexpr int64_t kMaxInstances = 65535;
constexpr int64_t kMaxScratchBuffers = 65536;
constexpr int64_t kMaxChunks = int64_t(1) << 32;

/// The names of a floor table's rows, in its order.
template <class Rows> std::vector<std::string> namesOf(const Rows &rows) {
  std::vector<std::string> names;
  for (const auto &row : rows)
    names.push_back(row.name);
  return names;
}

/// The values of `collective` (docs/plan.md): the floor's collectives.
const std::vector<std::string> &knownCollectives() {
  static const std::vector<std::string> names = namesOf(kCollectives);
  return names;
}

/// The values of `redops` (MSCCLC_REDOP, with avg and premulsum).
const std::vector<std::string> &knownRedops() {
  static const std::vector<std::string> names = namesOf(kRedOps);
  return names;
}

/// The values of `dtypes`.
const std::vector<std::string> &knownDtypes() {
  static const std::vector<std::string> names = namesOf(kDataTypes);
  return names;
}

/// "a, b or c", for messages naming what is accepted.
std::string oneOf(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

/// "a, b, c", for messages listing what is accepted.
std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : ", ") + names[i];
  return out;
}

bool isIn(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// A C identifier: kernels are looked up by name in the compiled module.
bool isIdentifier(const std::string &s) {
  if (s.empty() || s.size() > 1024 || isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Status checkIdentifier(const std::string &where, const std::string &value) {
  if (!isIdentifier(value))
    return invalidArgument(fmt::format(
        "plan: {} = '{}' is not a C identifier (letters, digits and _, not "
        "starting with a digit, at most 1024 characters)",
        where, value.substr(0, 80)));
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
  MSCCLC_TRY(r.integer("id", &c->id, false, 0, kMaxChannelId));
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

/// The top-level fields: every enum, range and the relations between them.
Status parseHeader(Reader &r, Plan *p) {
  MSCCLC_TRY(r.string("name", &p->name));
  MSCCLC_TRY(checkIdentifier("plan.name", p->name));
  std::string collective;
  MSCCLC_TRY(r.string("collective", &collective));
  std::optional<Collective> known = lookupCollective(collective);
  if (!known)
    return invalidArgument(
        fmt::format("plan: collective '{}' is not one of {}",
                    collective.substr(0, 80), oneOf(knownCollectives())));
  p->collective = *known;
  MSCCLC_TRY(r.integer("ranks", &p->ranks, true, 1, limits::kMaxRanks));
  MSCCLC_TRY(r.integer("gpusPerNode", &p->gpusPerNode, false, 1, p->ranks));
  if (p->gpusPerNode > 0 && p->ranks % p->gpusPerNode != 0)
    return invalidArgument(fmt::format(
        "plan: gpusPerNode {} does not divide ranks {} (every node holds the "
        "same number of ranks)",
        p->gpusPerNode, p->ranks));
  MSCCLC_TRY(r.integer("instances", &p->instances, false, 1, kMaxInstances));
  MSCCLC_TRY(r.integer("chunks", &p->chunks, true, 1, kMaxChunks));
  // A rank's buffers hold at most ranks * count elements (all-to-all).
  int64_t most = p->chunks * p->ranks;
  MSCCLC_TRY(r.integer("inputChunks", &p->inputChunks, true, 1, most));
  MSCCLC_TRY(r.integer("outputChunks", &p->outputChunks, true, 1, most));
  if (isStandardCollective(p->collective)) {
    // NCCL's buffer sizes (docs/plan.md); custom programs choose their own.
    int64_t in = int64_t(inputElements(p->collective, p->chunks, p->ranks));
    int64_t out = int64_t(outputElements(p->collective, p->chunks, p->ranks));
    if (p->inputChunks != in || p->outputChunks != out)
      return invalidArgument(fmt::format(
          "plan: inputChunks {} and outputChunks {} are not those of {} over "
          "{} ranks in {} chunks ({} and {})",
          p->inputChunks, p->outputChunks, collectiveName(p->collective),
          p->ranks, p->chunks, in, out));
  }
  MSCCLC_TRY(r.boolean("inPlace", &p->inPlace, false));
  MSCCLC_TRY(r.integer("root", &p->root, false, 0, p->ranks - 1));
  if (!collectiveRooted(p->collective) && p->root != 0)
    return invalidArgument(fmt::format(
        "plan: root {} given for {}, which has no root (0 is accepted)",
        p->root, collectiveName(p->collective)));
  MSCCLC_TRY(r.integer("threadsPerBlock", &p->threadsPerBlock, true, 32, 1024));
  if (p->threadsPerBlock % 32 != 0)
    return invalidArgument(
        fmt::format("plan: threadsPerBlock {} is not a multiple "
                    "of 32",
                    p->threadsPerBlock));
  MSCCLC_TRY(r.strings("dtypes", &p->dtypes, false));
  for (const std::string &d : p->dtypes)
    if (!lookupDataType(d))
      return invalidArgument(
          fmt::format("plan: dtypes names unknown '{}' (accepted: {})",
                      d.substr(0, 80), joined(knownDtypes())));
  MSCCLC_TRY(r.strings("redops", &p->redops, false));
  for (const std::string &op : p->redops)
    if (!isIn(knownRedops(), op))
      return invalidArgument(
          fmt::format("plan: redops names unknown '{}' (accepted: {})",
                      op.substr(0, 80), oneOf(knownRedops())));
  MSCCLC_TRY(r.string("premulKernel", &p->premulKernel, false));
  if (!p->premulKernel.empty())
    MSCCLC_TRY(checkIdentifier("plan.premulKernel", p->premulKernel));
  if (p->supportsRedop("premulsum") && p->premulKernel.empty())
    return invalidArgument(
        "plan: redops lists premulsum but premulKernel is missing or empty");
  MSCCLC_TRY(r.boolean("usesPortChannels", &p->usesPortChannels, false));
  MSCCLC_TRY(r.boolean("usesSwitchChannels", &p->usesSwitchChannels, false));
  return Status::ok();
}

Status parseScratch(Reader &r, Plan *p) {
  const Json::array_t *scratch;
  MSCCLC_TRY(r.array("scratch", &scratch, false));
  if (scratch->size() > size_t(kMaxScratchBuffers))
    return invalidArgument(
        fmt::format("plan: {} scratch buffers, more than the limit of {}",
                    scratch->size(), kMaxScratchBuffers));
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
    MSCCLC_TRY(s.integer("chunks", &ps.chunks, true, 1, kMaxChunks));
    MSCCLC_TRY(s.boolean("packet", &ps.packet, false));
    p->scratch.push_back(ps);
  }
  return Status::ok();
}

Status parseSwitchChannel(const Json &j, const std::string &where,
                          size_t position, int rank, const Plan &p,
                          PlanSwitchChannel *sc) {
  Reader sr(j, where);
  MSCCLC_TRY(sr.object());
  int index = int(position);
  MSCCLC_TRY(sr.integer("index", &index, false, 0));
  if (size_t(index) != position)
    return invalidArgument(fmt::format("plan: {} has index {}", where, index));
  sc->index = index;
  MSCCLC_TRY(sr.string("name", &sc->name, false));
  MSCCLC_TRY(sr.integer("id", &sc->id, false, 0, kMaxChannelId));
  const Json::array_t *group;
  MSCCLC_TRY(sr.array("ranks", &group));
  std::vector<bool> member(size_t(p.ranks), false);
  for (size_t k = 0; k < group->size(); ++k) {
    const Json &g = (*group)[k];
    // Unsigned values above INT64_MAX read as negative: rejected too.
    if (!g.is_number_integer() || g.get<int64_t>() < 0 ||
        g.get<int64_t>() >= p.ranks)
      return invalidArgument(fmt::format(
          "plan: {}.ranks[{}] must be a rank in [0, {}), not {}", where, k,
          p.ranks, g.dump()));
    int member_rank = int(g.get<int64_t>());
    if (member[size_t(member_rank)])
      return invalidArgument(fmt::format("plan: {}.ranks lists rank {} twice",
                                         where, member_rank));
    member[size_t(member_rank)] = true;
    sc->ranks.push_back(member_rank);
  }
  if (sc->ranks.size() < 2 || !member[size_t(rank)])
    return invalidArgument(fmt::format(
        "plan: {}.ranks must list at least 2 ranks, rank {} among them", where,
        rank));
  return readBufferSet(sr, "buffers", where, &sc->input, &sc->output,
                       &sc->scratch);
}

Status parseRankPlan(const Json &j, size_t position, Plan &p,
                     std::vector<bool> &seen) {
  Reader rr(j, fmt::format("rankPlans[{}]", position));
  MSCCLC_TRY(rr.object());
  int rank = -1;
  MSCCLC_TRY(rr.integer("rank", &rank, true, 0, p.ranks - 1));
  if (seen[size_t(rank)])
    return invalidArgument(fmt::format("plan: rank {} appears twice", rank));
  seen[size_t(rank)] = true;
  RankPlan &rp = p.rankPlans[size_t(rank)];
  rp.rank = rank;
  MSCCLC_TRY(rr.string("kernel", &rp.kernel));
  MSCCLC_TRY(checkIdentifier(fmt::format("rankPlans[{}].kernel", rank),
                             rp.kernel));
  MSCCLC_TRY(rr.integer("blocks", &rp.blocks, true, 1, 65535));
  MSCCLC_TRY(rr.integer("waitSlots", &rp.waitSlots, false, 0, 1 << 24));
  for (int kind = 0; kind < 2; ++kind) {
    const char *key = kind == 0 ? "memoryChannels" : "portChannels";
    auto &list = kind == 0 ? rp.memoryChannels : rp.portChannels;
    const Json::array_t *chans;
    MSCCLC_TRY(rr.array(key, &chans, false));
    if (chans->size() > 65535)
      return invalidArgument(fmt::format(
          "plan: rankPlans[{}].{} has {} channels, more than the limit of "
          "65535",
          rank, key, chans->size()));
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
      if (pc.peerScratch && p.scratch.empty())
        return invalidArgument(fmt::format(
            "plan: {}.peerBuffers names scratch, but the plan has no scratch "
            "buffer",
            where));
      list.push_back(pc);
    }
  }
  const Json::array_t *sw;
  MSCCLC_TRY(rr.array("switchChannels", &sw, false));
  for (size_t c = 0; c < sw->size(); ++c) {
    PlanSwitchChannel sc;
    std::string where = fmt::format("rankPlans[{}].switchChannels[{}]", rank, c);
    MSCCLC_TRY(parseSwitchChannel((*sw)[c], where, c, rank, p, &sc));
    if (sc.scratch && p.scratch.empty())
      return invalidArgument(fmt::format(
          "plan: {}.buffers names scratch, but the plan has no scratch "
          "buffer",
          where));
    rp.switchChannels.push_back(sc);
  }
  return Status::ok();
}

/// Reverse channels must exist where the plan says they do, and lead back
/// on a channel of the same kind, protocol and id.
Status checkReverseChannels(const Plan &p) {
  for (const RankPlan &rp : p.rankPlans) {
    for (int kind = 0; kind < 2; ++kind) {
      const auto &list = kind == 0 ? rp.memoryChannels : rp.portChannels;
      for (const PlanChannel &c : list) {
        if (c.peerIndex < 0)
          continue;
        const RankPlan &peer = p.rankPlans[size_t(c.peer)];
        const auto &plist = kind == 0 ? peer.memoryChannels : peer.portChannels;
        const char *kindName = kind == 0 ? "memory" : "port";
        if (size_t(c.peerIndex) >= plist.size() ||
            plist[size_t(c.peerIndex)].peer != rp.rank)
          return invalidArgument(fmt::format(
              "plan: rank {} {} channel {} names reverse channel {} on rank "
              "{}, which does not lead back",
              rp.rank, kindName, c.index, c.peerIndex, c.peer));
        const PlanChannel &back = plist[size_t(c.peerIndex)];
        if (back.ll != c.ll || back.id != c.id)
          return invalidArgument(fmt::format(
              "plan: rank {} {} channel {} (id {}, {}) and its reverse "
              "channel {} on rank {} (id {}, {}) differ in id or protocol",
              rp.rank, kindName, c.index, c.id, c.ll ? "LL" : "HB",
              c.peerIndex, c.peer, back.id, back.ll ? "LL" : "HB"));
      }
    }
  }
  return Status::ok();
}

/// usesPortChannels and usesSwitchChannels say what the runtime sets up (a
/// proxy, multicast): they must match the channels the ranks have.
Status checkChannelFlags(const Plan &p) {
  bool port = false, sw = false;
  for (const RankPlan &rp : p.rankPlans) {
    port |= !rp.portChannels.empty();
    sw |= !rp.switchChannels.empty();
  }
  if (port != p.usesPortChannels)
    return invalidArgument(fmt::format(
        "plan: usesPortChannels is {}, but the ranks have {} port channels",
        p.usesPortChannels, port ? "some" : "no"));
  if (sw != p.usesSwitchChannels)
    return invalidArgument(fmt::format(
        "plan: usesSwitchChannels is {}, but the ranks have {} switch "
        "channels",
        p.usesSwitchChannels, sw ? "some" : "no"));
  return Status::ok();
}

/// `a * b` where it fits 64 bits; UINT64_MAX where it does not.
using Wide = unsigned __int128;
uint64_t saturate(Wide v) { return v > UINT64_MAX ? UINT64_MAX : uint64_t(v); }

} // namespace

Status checkKernelsDefined(const Plan &plan, const std::string &source) {
  // A kernel is defined where its name is followed by its parameter list:
  // "mscclc_x_rank0(const __grid_constant__ ...". A name that is not found
  // would fail at launch, after every other rank has started.
  auto defined = [&](const std::string &name) {
    for (size_t at = source.find(name); at != std::string::npos;
         at = source.find(name, at + 1)) {
      bool startsWord = at == 0 || !(isalnum(static_cast<unsigned char>(
                                         source[at - 1])) ||
                                     source[at - 1] == '_');
      size_t next = source.find_first_not_of(" \t\r\n", at + name.size());
      if (startsWord && next != std::string::npos && source[next] == '(')
        return true;
    }
    return false;
  };
  for (const RankPlan &rp : plan.rankPlans)
    if (!defined(rp.kernel))
      return invalidArgument(fmt::format(
          "plan: rankPlans[{}].kernel '{}' is not defined in the program's "
          "source",
          rp.rank, rp.kernel));
  if (!plan.premulKernel.empty() && !defined(plan.premulKernel))
    return invalidArgument(fmt::format(
        "plan: premulKernel '{}' is not defined in the program's source",
        plan.premulKernel));
  return Status::ok();
}

size_t dtypeSize(const std::string &d) {
  std::optional<DataType> t = lookupDataType(d);
  return t ? dataTypeSize(*t) : 0;
}

/// mscclc_chunk_begin in 128 bits: its products overflow 64 for large
/// chunk counts.
static uint64_t chunkBegin(int64_t j, uint64_t count, int64_t k) {
  Wide wj = Wide(uint64_t(j)), wk = Wide(uint64_t(k));
  return saturate(wj * (count / wk) + (wj * (count % wk)) / wk);
}

uint64_t Plan::inputElems(uint64_t count) const {
  return chunkBegin(inputChunks, count, chunks);
}
uint64_t Plan::outputElems(uint64_t count) const {
  return chunkBegin(outputChunks, count, chunks);
}

uint64_t Plan::scratchBytes(uint64_t count, uint64_t elemSize) const {
  if (scratch.empty())
    return 0;
  // Layout.h's sum, in 128 bits: where it would wrap (to 0 at 2^32 chunks
  // of a large count), the size is "more than any memory" instead.
  const Wide align = MSCCLC_SCRATCH_ALIGN;
  const Wide k = Wide(uint64_t(chunks));
  const Wide chunkBytes = (Wide(count) + k - 1) / k * elemSize;
  const Wide packets = (chunkBytes + MSCCLC_LL_DATA_BYTES - 1) /
                       MSCCLC_LL_DATA_BYTES;
  Wide total = 0;
  for (const PlanScratch &s : scratch) {
    Wide bytes = s.packet ? 2 * Wide(uint64_t(s.chunks)) * packets *
                                MSCCLC_LL_PACKET_BYTES
                          : Wide(uint64_t(s.chunks)) * chunkBytes;
    total = (total + bytes + align - 1) / align * align;
    if (total > UINT64_MAX)
      return UINT64_MAX;
  }
  std::vector<MscclcScratchDesc> descs;
  for (const PlanScratch &s : scratch)
    descs.push_back({uint64_t(s.chunks), s.packet ? 1 : 0});
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
  MSCCLC_TRY(parseHeader(r, &p));
  MSCCLC_TRY(parseScratch(r, &p));

  const Json::array_t *ranks;
  MSCCLC_TRY(r.array("rankPlans", &ranks));
  if (ranks->size() != size_t(p.ranks))
    return invalidArgument(
        fmt::format("plan: {} rankPlans for {} ranks", ranks->size(), p.ranks));
  p.rankPlans.resize(size_t(p.ranks));
  std::vector<bool> seen(size_t(p.ranks), false);
  for (size_t i = 0; i < ranks->size(); ++i)
    MSCCLC_TRY(parseRankPlan((*ranks)[i], i, p, seen));
  MSCCLC_TRY(checkReverseChannels(p));
  MSCCLC_TRY(checkChannelFlags(p));
  *plan = std::move(p);
  return Status::ok();
}

} // namespace mscclc::rt
