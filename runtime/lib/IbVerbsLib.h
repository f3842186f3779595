//===- IbVerbsLib.h - The libibverbs entry points, opened at run time -*- C++ -*-===//
//
// libibverbs (rdma-core) is opened with dlopen, so hosts without rdma-core
// still run mscclc. This table holds every entry point the device probe
// and the data path (IbConnection.h) call. ibv_post_send and ibv_poll_cq
// need none: verbs.h defines them inline, calling the provider through the
// context. Only built with rdma-core's headers (MSCCLC_HAVE_IBVERBS).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_IBVERBSLIB_H
#define MSCCLC_RUNTIME_IBVERBSLIB_H

#if MSCCLC_HAVE_IBVERBS

#include "mscclc/runtime/Status.h"

#include <infiniband/verbs.h>

namespace mscclc::rt::ib {

struct VerbsLib {
  decltype(&::ibv_get_device_list) getDeviceList = nullptr;
  decltype(&::ibv_free_device_list) freeDeviceList = nullptr;
  decltype(&::ibv_get_device_name) getDeviceName = nullptr;
  decltype(&::ibv_open_device) openDevice = nullptr;
  decltype(&::ibv_close_device) closeDevice = nullptr;
  decltype(&::ibv_query_device) queryDevice = nullptr;
  // The exported symbols behind verbs.h's inline wrappers and macros of
  // the same names, with their own types: ibv_query_port fills the leading
  // fields of an ibv_port_attr passed as _compat_ibv_port_attr (queryPort()
  // below); ibv_reg_mr takes plain access flags.
  int (*queryPortSymbol)(ibv_context *, uint8_t, _compat_ibv_port_attr *) = nullptr;
  ibv_mr *(*regMr)(ibv_pd *, void *, size_t, int) = nullptr;
  decltype(&::ibv_query_gid) queryGid = nullptr;
  decltype(&::ibv_alloc_pd) allocPd = nullptr;
  decltype(&::ibv_dealloc_pd) deallocPd = nullptr;
  decltype(&::ibv_dereg_mr) deregMr = nullptr;
  decltype(&::ibv_create_cq) createCq = nullptr;
  decltype(&::ibv_destroy_cq) destroyCq = nullptr;
  decltype(&::ibv_create_qp) createQp = nullptr;
  decltype(&::ibv_modify_qp) modifyQp = nullptr;
  decltype(&::ibv_destroy_qp) destroyQp = nullptr;
  decltype(&::ibv_wc_status_str) wcStatusStr = nullptr;
  /// Null where rdma-core predates dma-buf (v34): device memory then
  /// registers through nvidia-peermem or not at all.
  decltype(&::ibv_reg_dmabuf_mr) regDmabufMr = nullptr;

  int queryPort(ibv_context *context, uint8_t port, ibv_port_attr *attr) const {
    return queryPortSymbol(context, port,
                           reinterpret_cast<_compat_ibv_port_attr *>(attr));
  }
};

/// MSCCLC_IBVERBS_LIBRARY if set, else libibverbs.so.1.
std::string verbsLibraryName();

/// Opens `library` (kept open for the process) and fills `out`; an
/// Unsupported error says why not (it does not load, or lacks an entry
/// point).
Status loadVerbsLib(const char *library, VerbsLib *out);

} // namespace mscclc::rt::ib

#endif // MSCCLC_HAVE_IBVERBS
#endif // MSCCLC_RUNTIME_IBVERBSLIB_H
