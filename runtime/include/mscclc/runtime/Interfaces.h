//===- Interfaces.h - Where the bootstrap listens --------------*- C++ -*-===//
//
// MSCCLC_SOCKET_IFNAME (else NCCL_SOCKET_IFNAME, so a job set up for NCCL
// needs nothing new) picks the interface whose address the bootstrap root
// and the ranks listen on, with NCCL's syntax:
//   eth,ib      names starting with any of the prefixes
//   =eth0       exactly these names
//   ^docker,lo  any name but those starting with the prefixes
//   ^=docker0   any name but exactly these
// Unset, any interface but lo and docker*, else docker*, else lo. Only
// interfaces that are up count; IPv4 addresses come before IPv6 ones, and
// IPv6 link-local ones are left out (they need a scope the id cannot
// carry).
//
// The choice is a pure function of the interface list, tested apart from
// getifaddrs.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_INTERFACES_H
#define MSCCLC_RUNTIME_INTERFACES_H

#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Status.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mscclc::rt {

/// A parsed NCCL_SOCKET_IFNAME-style list.
struct InterfaceFilter {
  bool exclude = false; ///< `^`: the names are the ones not to use
  bool exact = false;   ///< `=`: whole names, not prefixes
  std::vector<std::string> names;

  static InterfaceFilter parse(std::string_view spec);
  bool matches(std::string_view ifname) const;
};

/// One address of one interface, as getifaddrs lists it.
struct InterfaceAddress {
  std::string name;
  wire::WireAddr addr; // port 0
  bool up = false;
  bool loopback = false;
};

/// The index in `list` of the address to listen on: the first IPv4, else
/// IPv6, address of an up interface that `spec` (null: the default rule)
/// accepts. None if there is none.
std::optional<size_t> chooseInterface(const std::vector<InterfaceAddress> &list,
                                      const char *spec);

/// MSCCLC_SOCKET_IFNAME, else NCCL_SOCKET_IFNAME, else null; *variable
/// names the one used.
const char *socketIfnameSpec(const char **variable);

/// The IPv4 and IPv6 addresses of this host's interfaces (getifaddrs).
Status listInterfaces(std::vector<InterfaceAddress> *out);

/// The address the bootstrap listens on under `spec` (null: the default
/// rule); an error naming `variable` and the interfaces there are when
/// nothing matches.
Status chooseListenAddress(const char *spec, const char *variable,
                           wire::WireAddr *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_INTERFACES_H
