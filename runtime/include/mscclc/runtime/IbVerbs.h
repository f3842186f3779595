//===- IbVerbs.h - RDMA devices, found through libibverbs -----*- C++ -*-===//
//
// What the IB verbs transport starts from: the HCAs and ports of this host.
// libibverbs (rdma-core) is opened with dlopen, so hosts without rdma-core
// run, and the runtime says why it has no RDMA device instead of failing to
// load. The build uses rdma-core's headers (Debian libibverbs-dev) when it
// finds them; without them the probe reports that.
//
// Which HCAs: MSCCLC_IB_HCA, else NCCL_IB_HCA, in NCCL's syntax: a comma
// list of device names with an optional ":port", prefixes unless the list
// starts with '=' (exact names), all but those if it starts with '^'
// ("^=mlx5_2" excludes exactly mlx5_2).
//
// The verbs data path (RC queue pairs, RDMA writes) is IbConnection.h;
// Transport.h says when port channels use it.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_IBVERBS_H
#define MSCCLC_RUNTIME_IBVERBS_H

#include "mscclc/runtime/Status.h"

#include <string>
#include <vector>

namespace mscclc::rt {

/// A parsed NCCL_IB_HCA-style list.
struct HcaFilter {
  struct Entry {
    std::string name;
    int port = -1; ///< -1: every port
  };
  bool exclude = false; ///< '^': every HCA but these
  bool exact = false;   ///< '=': whole names, not prefixes
  std::vector<Entry> entries;
  /// Whether port `port` of device `device` may be used.
  bool matches(const std::string &device, int port) const;
};

/// Parses `spec` ("" matches everything); an error names `variable`.
Status parseHcaFilter(const std::string &spec, const char *variable,
                      HcaFilter *out);

/// An active port of an RDMA device.
struct IbPort {
  std::string device;
  int port = 0;
  bool ethernet = false; ///< RoCE (else InfiniBand)
};

/// This host's usable ports, in device order, filtered by MSCCLC_IB_HCA /
/// NCCL_IB_HCA; with none, `why` says why (no library, no device, no
/// active port, all filtered out). The library is MSCCLC_IBVERBS_LIBRARY
/// if set, else libibverbs.so.1.
struct IbProbe {
  std::vector<IbPort> ports;
  std::string why;
};
IbProbe probeIbDevices();

/// "mlx5_0:1 (InfiniBand), mlx5_1:1 (RoCE)".
std::string describePorts(const std::vector<IbPort> &ports);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_IBVERBS_H
