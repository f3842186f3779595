//===- Transport.cpp - Choosing a port channel's transport ----------------===//

#include "mscclc/runtime/Transport.h"
#include "mscclc/runtime/IbVerbs.h"
#include "mscclc/runtime/Log.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mscclc::rt {

const char *transportName(TransportKind kind) {
  switch (kind) {
  case TransportKind::CopyEngine:
    return "copy engine";
  case TransportKind::Tcp:
    return "tcp";
  case TransportKind::Ib:
    return "ib verbs";
  }
  return "?";
}

std::string ibUnusedReason(const IbProbe &probe) {
  if (probe.ports.empty())
    return probe.why;
  return fmt::format("found {}, but this mscclc's IB verbs data path "
                     "(IbConnection.h) is not wired into port channels yet",
                     describePorts(probe.ports));
}

namespace {
/// The probe's finding, once per process (devices do not come and go).
const std::string &ibReason() {
  static const std::string reason = ibUnusedReason(probeIbDevices());
  return reason;
}
} // namespace

Status chooseTransport(bool peerOnSameNode, TransportKind *out) {
  const char *env = getenv("MSCCLC_TRANSPORT");
  if (!env || !*env || strcmp(env, "auto") == 0) {
    *out = peerOnSameNode ? TransportKind::CopyEngine : TransportKind::Tcp;
    if (!peerOnSameNode) {
      // Said once: the choice is made per peer.
      static std::once_flag said;
      std::call_once(said, [] {
        MSCCLC_LOG(Info, "port channels between nodes: tcp (IB verbs: {})",
                   ibReason());
      });
    }
    return Status::ok();
  }
  if (strcmp(env, "tcp") == 0) {
    *out = TransportKind::Tcp;
    return Status::ok();
  }
  if (strcmp(env, "ib") == 0) {
    static std::once_flag said;
    std::call_once(said, [] {
      MSCCLC_LOG(Warn, "MSCCLC_TRANSPORT=ib: {}; using tcp", ibReason());
    });
    *out = TransportKind::Tcp;
    return Status::ok();
  }
  return invalidArgument(
      fmt::format("MSCCLC_TRANSPORT='{}': expected auto, tcp or ib", env));
}

} // namespace mscclc::rt
