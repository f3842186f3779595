//===- Route.cpp - Where a call runs: mscclc, the real NCCL, or nowhere ---===//

#include "Route.h"

#include "mscclc/runtime/Settings.h"

#include <strings.h>

namespace mscclc::nccl {
namespace {

struct Named {
  const char *name;
  Collective collective;
};
const Named kNames[] = {
    {"allreduce", Collective::AllReduce},
    {"allgather", Collective::AllGather},
    {"reducescatter", Collective::ReduceScatter},
    {"broadcast", Collective::Broadcast},
    {"bcast", Collective::Broadcast},
    {"reduce", Collective::Reduce},
    {"alltoall", Collective::AllToAll},
    {"gather", Collective::Gather},
    {"scatter", Collective::Scatter},
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

const char *collectiveName(Collective c) {
  switch (c) {
  case Collective::AllReduce: return "AllReduce";
  case Collective::AllGather: return "AllGather";
  case Collective::ReduceScatter: return "ReduceScatter";
  case Collective::Broadcast: return "Broadcast";
  case Collective::Reduce: return "Reduce";
  case Collective::AllToAll: return "AlltoAll";
  case Collective::Gather: return "Gather";
  case Collective::Scatter: return "Scatter";
  case Collective::Send: return "Send";
  case Collective::Recv: return "Recv";
  }
  return "?";
}

std::optional<Collective> parseCollective(std::string_view name) {
  name = trim(name);
  if (name.size() > 4 && !strncasecmp(name.data(), "nccl", 4))
    name.remove_prefix(4);
  for (const Named &n : kNames)
    if (equalsNoCase(name, n.name))
      return n.collective;
  return std::nullopt;
}

std::optional<int> mscclcCollective(Collective c) {
  // The values of mscclcCollective_t (mscclc.h).
  switch (c) {
  case Collective::AllReduce: return 0;
  case Collective::AllGather: return 1;
  case Collective::ReduceScatter: return 2;
  case Collective::Broadcast: return 3;
  case Collective::Reduce: return 4;
  case Collective::AllToAll: return 5;
  case Collective::Gather: return 6;
  case Collective::Scatter: return 7;
  case Collective::Send:
  case Collective::Recv: return std::nullopt;
  }
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
