//===- Transport.cpp - Choosing a port channel's transport ----------------===//

#include "mscclc/runtime/Transport.h"
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
  }
  return "?";
}

Status chooseTransport(bool peerOnSameHost, TransportKind *out) {
  const char *env = getenv("MSCCLC_TRANSPORT");
  if (!env || !*env || strcmp(env, "auto") == 0) {
    *out = peerOnSameHost ? TransportKind::CopyEngine : TransportKind::Tcp;
    return Status::ok();
  }
  if (strcmp(env, "tcp") == 0) {
    *out = TransportKind::Tcp;
    return Status::ok();
  }
  if (strcmp(env, "ib") == 0) {
    // Said once: the choice is made per peer.
    static std::once_flag said;
    std::call_once(said, [] {
      MSCCLC_LOG(Warn, "MSCCLC_TRANSPORT=ib: IB verbs are not built yet in "
                       "this mscclc; using tcp");
    });
    *out = TransportKind::Tcp;
    return Status::ok();
  }
  return invalidArgument(
      fmt::format("MSCCLC_TRANSPORT='{}': expected auto, tcp or ib", env));
}

} // namespace mscclc::rt
