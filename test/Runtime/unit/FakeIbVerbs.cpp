//===- FakeIbVerbs.cpp - A libibverbs with two made-up HCAs ---------------===//
//
// Loaded by IbVerbsTest through MSCCLC_IBVERBS_LIBRARY: mlx5_0 (InfiniBand)
// and mlx5_1 (RoCE), two ports each, port 1 active and port 2 down; with
// FAKE_IBVERBS_NONE set, no device at all.
//
//===----------------------------------------------------------------------===//

#include <infiniband/verbs.h>

#include <cstdlib>
#include <cstring>

namespace {
ibv_device devices[2];
ibv_device *list[3] = {&devices[0], &devices[1], nullptr};
ibv_context contexts[2];
} // namespace

extern "C" {

ibv_device **ibv_get_device_list(int *n) {
  if (getenv("FAKE_IBVERBS_NONE")) {
    *n = 0;
    return nullptr;
  }
  strcpy(devices[0].name, "mlx5_0");
  strcpy(devices[1].name, "mlx5_1");
  *n = 2;
  return list;
}

void ibv_free_device_list(ibv_device **) {}

const char *ibv_get_device_name(ibv_device *d) { return d->name; }

ibv_context *ibv_open_device(ibv_device *d) {
  ibv_context *c = &contexts[d == &devices[0] ? 0 : 1];
  c->device = d;
  return c;
}

int ibv_close_device(ibv_context *) { return 0; }

int ibv_query_device(ibv_context *, ibv_device_attr *attr) {
  memset(attr, 0, sizeof(*attr));
  attr->phys_port_cnt = 2;
  return 0;
}

// The exported symbol, not the header's inline wrapper of the same name.
#undef ibv_query_port
int ibv_query_port(ibv_context *c, uint8_t port,
                   _compat_ibv_port_attr *compat) {
  // Callers pass a whole ibv_port_attr, whose leading fields these are.
  auto *attr = reinterpret_cast<ibv_port_attr *>(compat);
  memset(attr, 0, sizeof(*attr));
  attr->state = port == 1 ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  attr->link_layer = c == &contexts[0] ? IBV_LINK_LAYER_INFINIBAND
                                       : IBV_LINK_LAYER_ETHERNET;
  return 0;
}

} // extern "C"
