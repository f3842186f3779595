//===- Transport.cpp - Choosing a port channel's transport ----------------===//

#include "mscclc/runtime/Transport.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Settings.h"


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

Status checkTransportVariable() {
  std::string_view choice;
  return get(setting::Transport, &choice);
}

namespace {
/// Why a pair with a port at both ends stages: whose GPU memory does not
/// register.
std::string whyStaged(IbAbility mine, IbAbility theirs) {
  const char *what =
      !mine.gpuMemory && !theirs.gpuMemory
          ? "neither end's GPU memory registers with it"
      : !mine.gpuMemory ? "this rank's GPU memory does not register with it"
                        : "the peer's GPU memory does not register with it";
  return fmt::format("both ends have an IB port, but {}: staged through "
                     "pinned host memory",
                     what);
}
} // namespace

Status chooseTransport(bool peerOnSameNode, IbAbility mine, IbAbility theirs,
                       TransportKind *out, std::string *why) {
  std::string_view choice;
  MSCCLC_TRY(get(setting::Transport, &choice));
  const bool ports = mine.port && theirs.port;
  const bool gpuMemory = ports && mine.gpuMemory && theirs.gpuMemory;
  std::string reason;
  if (choice == "tcp") {
    *out = TransportKind::Tcp;
    reason = "MSCCLC_TRANSPORT=tcp";
  } else if (choice == "ib") {
    if (!ports)
      return unsupported("MSCCLC_TRANSPORT=ib, but an end of this port "
                         "channel has no IB verbs (no active port)");
    *out = gpuMemory ? TransportKind::Ib : TransportKind::IbStaged;
    reason = "MSCCLC_TRANSPORT=ib; " +
             (gpuMemory ? std::string("both ends register GPU memory")
                        : whyStaged(mine, theirs));
  } else if (peerOnSameNode) {
    *out = TransportKind::CopyEngine;
    reason = "same node";
  } else if (gpuMemory) {
    *out = TransportKind::Ib;
    reason = "both ends register GPU memory with their IB port";
  } else if (ports) {
    *out = TransportKind::IbStaged;
    reason = whyStaged(mine, theirs);
  } else {
    *out = TransportKind::Tcp;
    reason = !mine.port ? "no IB port at this rank" : "no IB port at the peer";
  }
  if (why)
    *why = std::move(reason);
  return Status::ok();
}

// Both run after Communicator::init's checkTransportVariable(): a bad value
// has been refused by then.
bool transportMayUseIb(bool severalNodes) {
  std::string_view choice = getOrDefault(setting::Transport);
  return choice == "ib" || (severalNodes && choice == "auto");
}

bool transportRequiresIb() { return getOrDefault(setting::Transport) == "ib"; }

} // namespace mscclc::rt
