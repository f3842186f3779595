//===- Route.h - Where a call runs: mscclc, the real NCCL, or nowhere -----===//
//
// Pure decisions, unit-tested without a GPU:
//  - MSCCLC_NCCL_FALLBACK: "all" sends every call to the real NCCL, "none"
//    never does, a comma list ("allreduce,send,...") always sends those
//    collectives there; unset, a call falls back only when mscclc's
//    stdlib does not cover it;
//  - the route of one call given whether the stdlib covers it and whether
//    the communicator has a fallback, with the message of a refusal.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_ROUTE_H
#define MSCCLC_NCCL_ROUTE_H

#include "Errors.h"

#include "mscclc/floor/Tables.h"

#include <optional>
#include <set>
#include <string>

namespace mscclc::nccl {

/// The calls of the library: the floor's standard collectives, with their
/// enumerators and values (mscclc/floor/Collectives.def), then the
/// point-to-point Send and Recv.
enum class Collective : int {
#define MSCCLC_COLLECTIVE(Id, ...) Id,
#define MSCCLC_PROGRAM_COLLECTIVE(...)
#include "mscclc/floor/Collectives.def"
  Send,
  Recv,
};
static_assert(int(Collective::Send) == kNumStandardCollectives);

/// The floor's collective of a call; none for Send and Recv.
std::optional<mscclc::Collective> floorCollective(Collective c);
/// "AllReduce", as in the NCCL function name after "nccl".
const char *collectiveName(Collective c);
/// Parses a name of MSCCLC_NCCL_FALLBACK's list (case-insensitive;
/// "allreduce", "bcast" and "broadcast", "alltoall", ...).
std::optional<Collective> parseCollective(std::string_view name);
/// The mscclcCollective_t of a collective that has one (not Send/Recv).
std::optional<int> mscclcCollective(Collective c);

struct FallbackPolicy {
  enum class Mode { Auto, All, None, Listed } mode = Mode::Auto;
  std::set<Collective> listed; ///< Mode::Listed: these always fall back.
};

/// Parses MSCCLC_NCCL_FALLBACK's value (null or "": Auto).
Outcome parseFallbackPolicy(const char *value, FallbackPolicy *out);
/// The process's policy, parsed once; a bad value is reported by every
/// ncclCommInit* (so a typo never silently changes where calls run).
const Outcome &fallbackPolicy(FallbackPolicy *out);

enum class Route { Native, Fallback, Refuse };

struct RouteInputs {
  Collective collective;
  std::string call;          ///< "ncclAllReduce of 1024 float32 (sum)"
  bool nativeSupported = false;
  std::string nativeMissing; ///< why not native, when known
  bool hasFallback = false;  ///< the communicator has a real NCCL one
  std::string noFallback;    ///< why it has none
};

struct RouteDecision {
  Route route = Route::Refuse;
  std::string message; ///< the refusal's text (ncclInvalidUsage)
};

RouteDecision decideRoute(const FallbackPolicy &policy, const RouteInputs &in);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_ROUTE_H
