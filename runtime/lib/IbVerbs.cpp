//===- IbVerbs.cpp - RDMA devices, found through libibverbs ---------------===//

#include "mscclc/runtime/IbVerbs.h"
#include "mscclc/runtime/Settings.h"

#include "IbVerbsLib.h"

#include <cstdlib>
#include <dlfcn.h>

namespace mscclc::rt {

bool HcaFilter::matches(const std::string &device, int port) const {
  if (entries.empty())
    return true;
  bool listed = false;
  for (const Entry &e : entries) {
    bool name = exact ? device == e.name
                      : device.compare(0, e.name.size(), e.name) == 0;
    listed |= name && (e.port < 0 || e.port == port);
  }
  return listed != exclude;
}

Status parseHcaFilter(const std::string &spec, const char *variable,
                      HcaFilter *out) {
  HcaFilter f;
  size_t at = 0;
  if (at < spec.size() && spec[at] == '^') {
    f.exclude = true;
    ++at;
  }
  if (at < spec.size() && spec[at] == '=') {
    f.exact = true;
    ++at;
  }
  while (at < spec.size()) {
    size_t comma = spec.find(',', at);
    std::string item =
        spec.substr(at, comma == std::string::npos ? std::string::npos
                                                   : comma - at);
    at = comma == std::string::npos ? spec.size() : comma + 1;
    if (item.empty())
      continue;
    HcaFilter::Entry e;
    size_t colon = item.find(':');
    e.name = item.substr(0, colon);
    if (colon != std::string::npos) {
      char *end = nullptr;
      long port = strtol(item.c_str() + colon + 1, &end, 10);
      if (*end || port < 1 || port > 255 || colon + 1 == item.size())
        return invalidArgument(fmt::format(
            "{}='{}': '{}' has no port number after ':' (expected e.g. "
            "mlx5_0:1)",
            variable, spec, item));
      e.port = int(port);
    }
    if (e.name.empty())
      return invalidArgument(
          fmt::format("{}='{}': '{}' names no device", variable, spec, item));
    f.entries.push_back(e);
  }
  *out = f;
  return Status::ok();
}

std::string describePorts(const std::vector<IbPort> &ports) {
  std::string out;
  for (const IbPort &p : ports)
    out += fmt::format("{}{}:{} ({})", out.empty() ? "" : ", ", p.device,
                       p.port, p.ethernet ? "RoCE" : "InfiniBand");
  return out;
}

namespace {

/// The filter's variable and value: MSCCLC_IB_HCA, else its fallback
/// NCCL_IB_HCA; MSCCLC_IB_HCA and "" where neither is set.
const char *hcaVariable(const char **value) {
  std::optional<RawSetting> spec = get(setting::IbHca);
  *value = spec ? spec->text : "";
  return spec ? spec->name() : setting::IbHca.name();
}


} // namespace

IbProbe probeIbDevices() {
  IbProbe out;
  const char *spec = nullptr;
  const char *variable = hcaVariable(&spec);
  HcaFilter filter;
  if (Status s = parseHcaFilter(spec, variable, &filter); !s.isOk()) {
    out.why = s.message();
    return out;
  }
#if !MSCCLC_HAVE_IBVERBS
  out.why = "this mscclc was built without rdma-core's headers "
            "(libibverbs-dev)";
  return out;
#else
  ib::VerbsLib v;
  if (Status s = ib::loadVerbsLib(ib::verbsLibraryName().c_str(), &v);
      !s.isOk()) {
    out.why = s.message();
    return out;
  }
  int n = 0;
  ibv_device **devices = v.getDeviceList(&n);
  if (!devices || n == 0) {
    if (devices)
      v.freeDeviceList(devices);
    out.why = "no RDMA device (ibv_get_device_list found none)";
    return out;
  }
  std::vector<std::string> seen;
  for (int i = 0; i < n; ++i) {
    std::string name = v.getDeviceName(devices[i]);
    ibv_context *ctx = v.openDevice(devices[i]);
    if (!ctx) {
      seen.push_back(name + " (does not open)");
      continue;
    }
    ibv_device_attr attr{};
    int ports = v.queryDevice(ctx, &attr) == 0 ? attr.phys_port_cnt : 0;
    for (int p = 1; p <= ports; ++p) {
      ibv_port_attr pa{};
      if (v.queryPort(ctx, uint8_t(p), &pa) != 0)
        continue;
      std::string at = fmt::format("{}:{}", name, p);
      if (pa.state != IBV_PORT_ACTIVE) {
        seen.push_back(at + " (not active)");
        continue;
      }
      if (!filter.matches(name, p)) {
        seen.push_back(at + fmt::format(" (left out by {})", variable));
        continue;
      }
      out.ports.push_back({name, p, pa.link_layer == IBV_LINK_LAYER_ETHERNET});
    }
    v.closeDevice(ctx);
  }
  v.freeDeviceList(devices);
  if (out.ports.empty()) {
    std::string list;
    for (const std::string &s : seen)
      list += (list.empty() ? "" : ", ") + s;
    out.why = fmt::format("no usable RDMA port ({})", list);
  }
  return out;
#endif
}

#if MSCCLC_HAVE_IBVERBS
namespace ib {

std::string verbsLibraryName() { return get(setting::IbverbsLibrary); }

Status loadVerbsLib(const char *library, VerbsLib *v) {
  void *h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return Status(Code::Unsupported, fmt::format("{} did not load ({})",
                                                 library, dlerror()));
  auto sym = [&](const char *name, auto *fn) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(h, name));
    return *fn != nullptr;
  };
  for (bool ok :
       {sym("ibv_get_device_list", &v->getDeviceList),
        sym("ibv_free_device_list", &v->freeDeviceList),
        sym("ibv_get_device_name", &v->getDeviceName),
        sym("ibv_open_device", &v->openDevice),
        sym("ibv_close_device", &v->closeDevice),
        sym("ibv_query_device", &v->queryDevice),
        sym("ibv_query_port", &v->queryPortSymbol), sym("ibv_reg_mr", &v->regMr),
        sym("ibv_query_gid", &v->queryGid), sym("ibv_alloc_pd", &v->allocPd),
        sym("ibv_dealloc_pd", &v->deallocPd), sym("ibv_dereg_mr", &v->deregMr),
        sym("ibv_create_cq", &v->createCq), sym("ibv_destroy_cq", &v->destroyCq),
        sym("ibv_create_qp", &v->createQp), sym("ibv_modify_qp", &v->modifyQp),
        sym("ibv_destroy_qp", &v->destroyQp),
        sym("ibv_wc_status_str", &v->wcStatusStr)})
    if (!ok)
      return Status(Code::Unsupported,
                    fmt::format("{} is not libibverbs (it lacks the verbs "
                                "entry points)",
                                library));
  (void)sym("ibv_reg_dmabuf_mr", &v->regDmabufMr); // optional
  return Status::ok(); // kept open: the handle lives as long as the process
}

} // namespace ib
#endif

} // namespace mscclc::rt
