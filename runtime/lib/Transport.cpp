//===- Transport.cpp - Choosing a port channel's transport ----------------===//

#include "mscclc/runtime/Transport.h"
#include "mscclc/runtime/Log.h"

#include <cstdlib>
#include <cstring>

namespace mscclc::rt {

const char *transportName(TransportKind kind) {
  switch (kind) {
  case TransportKind::CopyEngine:
    return "copy engine";
  case TransportKind::Tcp:
    return "tcp";
  case TransportKind::Ib:
    return "ib verbs";
  case TransportKind::IbStaged:
    return "ib staged";
  }
  return "?";
}

namespace {
/// MSCCLC_TRANSPORT, "auto" when unset or empty.
const char *transportVariable() {
  const char *env = getenv("MSCCLC_TRANSPORT");
  return env && *env ? env : "auto";
}
} // namespace

Status checkTransportVariable() {
  const char *env = transportVariable();
  for (const char *choice : {"auto", "tcp", "ib"})
    if (strcmp(env, choice) == 0)
      return Status::ok();
  return invalidArgument(
      fmt::format("MSCCLC_TRANSPORT='{}': expected auto, tcp or ib", env));
}

Status chooseTransport(bool peerOnSameNode, bool ibAtBothEnds,
                       TransportKind *out) {
  MSCCLC_TRY(checkTransportVariable());
  const char *env = transportVariable();
  if (strcmp(env, "tcp") == 0) {
    *out = TransportKind::Tcp;
  } else if (strcmp(env, "ib") == 0) {
    if (!ibAtBothEnds)
      return unsupported("MSCCLC_TRANSPORT=ib, but an end of this port "
                         "channel has no IB verbs");
    *out = TransportKind::Ib;
  } else if (peerOnSameNode) {
    *out = TransportKind::CopyEngine;
  } else {
    *out = ibAtBothEnds ? TransportKind::Ib : TransportKind::Tcp;
  }
  return Status::ok();
}

bool transportMayUseIb(bool severalNodes) {
  const char *env = transportVariable();
  return strcmp(env, "ib") == 0 || (severalNodes && strcmp(env, "auto") == 0);
}

bool transportRequiresIb() { return strcmp(transportVariable(), "ib") == 0; }

} // namespace mscclc::rt
