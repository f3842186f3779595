//===- Route.cpp - Where a call runs: mscclc, the real NCCL, or nowhere ---===//

#include "Route.h"

#include "mscclc/runtime/Settings.h"

#include <strings.h>

namespace mscclc::nccl {
namespace {

/// Names the fallback list takes besides the floor's: NCCL's short name
/// of broadcast, and the point-to-point calls.
struct Named {
  const char *name;
  Collective collective;
};
const Named kExtraNames[] = {
    {"bcast", Collective::Broadcast},
    {"send", Collective::Send},
    {"recv", Collective::Recv},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool equalsNoCase(std::string_view a, const char *b) {
  return a.size() == strlen(b) && !strncasecmp(a.data(), b, a.size());
}

} // namespace

std::optional<mscclc::Collective> floorCollective(Collective c) {
  if (int(c) < 0 || int(c) >= kNumStandardCollectives)
    return std::nullopt;
  return mscclc::Collective(int(c));
}

const char *collectiveName(Collective c) {
  if (std::optional<mscclc::Collective> f = floorCollective(c))
    return collectiveInfo(*f).ncclName;
  return c == Collective::Send ? "Send" : c == Collective::Recv ? "Recv" : "?";
}

std::optional<Collective> parseCollective(std::string_view name) {
  name = trim(name);
  if (name.size() > 4 && !strncasecmp(name.data(), "nccl", 4))
    name.remove_prefix(4);
  for (int i = 0; i < kNumStandardCollectives; ++i)
    if (equalsNoCase(name, kCollectives[i].name))
      return Collective(i);
  for (const Named &n : kExtraNames)
    if (equalsNoCase(name, n.name))
      return n.collective;
  return std::nullopt;
}

std::optional<int> mscclcCollective(Collective c) {
  if (std::optional<mscclc::Collective> f = floorCollective(c))
    return collectiveInfo(*f).mscclc;
  return std::nullopt;
}

Outcome parseFallbackPolicy(const char *value, FallbackPolicy *out) {
  *out = FallbackPolicy();
  std::string_view v = trim(value ? value : "");
  if (v.empty() || equalsNoCase(v, "auto"))
    return Outcome::success();
  if (equalsNoCase(v, "all")) {
    out->mode = FallbackPolicy::Mode::All;
    return Outcome::success();
  }
  if (equalsNoCase(v, "none")) {
    out->mode = FallbackPolicy::Mode::None;
    return Outcome::success();
  }
  out->mode = FallbackPolicy::Mode::Listed;
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = trim(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    if (item.empty())
      continue;
    std::optional<Collective> c = parseCollective(item);
    if (!c) {
      *out = FallbackPolicy();
      return invalidUsage(fmt::format(
          "MSCCLC_NCCL_FALLBACK={}: '{}' is not a collective (use all, none "
          "or a comma list of allreduce, allgather, reducescatter, "
          "broadcast, reduce, alltoall, gather, scatter, send, recv)",
          value, item));
    }
    out->listed.insert(*c);
  }
  return Outcome::success();
}

const Outcome &fallbackPolicy(FallbackPolicy *out) {
  static FallbackPolicy policy;
  static const Outcome parsed = [] {
    std::optional<rt::RawSetting> value = rt::get(rt::setting::NcclFallback);
    return parseFallbackPolicy(value ? value->text : nullptr, &policy);
  }();
  *out = policy;
  return parsed;
}

RouteDecision decideRoute(const FallbackPolicy &policy, const RouteInputs &in) {
  using Mode = FallbackPolicy::Mode;
  bool forced = policy.mode == Mode::All ||
                (policy.mode == Mode::Listed && policy.listed.count(in.collective));
  if (!forced && in.nativeSupported)
    return {Route::Native, ""};
  std::string why =
      forced ? fmt::format("MSCCLC_NCCL_FALLBACK sends {} to the real NCCL",
                           collectiveName(in.collective))
             : fmt::format("mscclc's stdlib does not cover it{}{}",
                           in.nativeMissing.empty() ? "" : ": ",
                           in.nativeMissing);
  if (policy.mode == Mode::None)
    return {Route::Refuse,
            fmt::format("{}: {}, and MSCCLC_NCCL_FALLBACK=none forbids the "
                        "fallback to the real NCCL",
                        in.call, why)};
  if (!in.hasFallback)
    return {Route::Refuse, fmt::format("{}: {}, and there is no fallback NCCL: {}",
                                       in.call, why, in.noFallback)};
  return {Route::Fallback, ""};
}

} // namespace mscclc::nccl
