//===- Interfaces.cpp - The network interface the bootstrap listens on ----===//

#include "mscclc/runtime/Interfaces.h"
#include "mscclc/runtime/Settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace mscclc::rt {

InterfaceFilter InterfaceFilter::parse(std::string_view spec) {
  InterfaceFilter f;
  if (!spec.empty() && spec.front() == '^') {
    f.exclude = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    f.exact = true;
    spec.remove_prefix(1);
  }
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view name = spec.substr(0, comma);
    if (!name.empty())
      f.names.emplace_back(name);
    if (comma == std::string_view::npos)
      break;
    spec.remove_prefix(comma + 1);
  }
  return f;
}

bool InterfaceFilter::matches(std::string_view ifname) const {
  bool listed = false;
  for (const std::string &n : names)
    listed |= exact ? ifname == n : ifname.substr(0, n.size()) == n;
  return listed != exclude;
}

namespace {

bool isLinkLocalV6(const wire::WireAddr &a) {
  return a.family == AF_INET6 && a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80;
}

/// The first usable address `accept` takes: IPv4 first, then IPv6.
template <typename Accept>
std::optional<size_t> firstMatch(const std::vector<InterfaceAddress> &list,
                                 Accept accept) {
  for (uint16_t family : {uint16_t(AF_INET), uint16_t(AF_INET6)})
    for (size_t i = 0; i < list.size(); ++i) {
      const InterfaceAddress &a = list[i];
      if (a.up && a.addr.family == family && !isLinkLocalV6(a.addr) &&
          accept(a))
        return i;
    }
  return std::nullopt;
}

} // namespace

std::optional<size_t> chooseInterface(const std::vector<InterfaceAddress> &list,
                                      const char *spec) {
  if (spec) {
    InterfaceFilter f = InterfaceFilter::parse(spec);
    return firstMatch(list, [&](const InterfaceAddress &a) {
      return f.matches(a.name);
    });
  }
  // As NCCL: the loopback and docker bridges reach no other host, so they
  // are the last resort (docker's first: it at least leaves the host's
  // namespace).
  auto docker = [](const InterfaceAddress &a) {
    return a.name.compare(0, 6, "docker") == 0;
  };
  if (auto i = firstMatch(list, [&](const InterfaceAddress &a) {
        return !a.loopback && !docker(a);
      }))
    return i;
  if (auto i = firstMatch(list, docker))
    return i;
  return firstMatch(list, [](const InterfaceAddress &) { return true; });
}

const char *socketIfnameSpec(const char **variable) {
  // NCCL_SOCKET_IFNAME is MSCCLC_SOCKET_IFNAME's fallback in the table.
  std::optional<RawSetting> spec = get(setting::SocketIfname);
  *variable = spec ? spec->name() : nullptr;
  return spec ? spec->text : nullptr;
}

Status listInterfaces(std::vector<InterfaceAddress> *out) {
  out->clear();
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0)
    return systemError(fmt::format("getifaddrs: {}", strerror(errno)));
  for (ifaddrs *i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
                         i->ifa_addr->sa_family != AF_INET6))
      continue;
    InterfaceAddress a;
    a.name = i->ifa_name ? i->ifa_name : "";
    a.up = (i->ifa_flags & IFF_UP) != 0;
    a.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    a.addr.family = i->ifa_addr->sa_family;
    if (a.addr.family == AF_INET)
      memcpy(a.addr.addr,
             &reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr, 4);
    else
      memcpy(a.addr.addr,
             &reinterpret_cast<sockaddr_in6 *>(i->ifa_addr)->sin6_addr, 16);
    out->push_back(std::move(a));
  }
  freeifaddrs(list);
  return Status::ok();
}

Status chooseListenAddress(const char *spec, const char *variable,
                           wire::WireAddr *out) {
  std::vector<InterfaceAddress> list;
  MSCCLC_TRY(listInterfaces(&list));
  if (auto i = chooseInterface(list, spec)) {
    *out = list[*i].addr;
    return Status::ok();
  }
  // Each interface once (getifaddrs lists one entry per address).
  std::vector<std::string> seen;
  std::string names;
  for (const InterfaceAddress &a : list) {
    std::string name = a.name + (a.up ? "" : " (down)");
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      continue;
    seen.push_back(name);
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!spec)
    return systemError(fmt::format(
        "bootstrap: no network interface is up with an address to listen on "
        "(interfaces: {})",
        names.empty() ? "none" : names));
  return invalidArgument(fmt::format(
      "{}='{}' matches no interface that is up with an IPv4 or IPv6 address "
      "(interfaces: {})",
      variable, spec, names.empty() ? "none" : names));
}

} // namespace mscclc::rt
