//===- Memory.cpp - ncclMemAlloc and buffer and window registration -------===//
//
// ncclMemAlloc gives cudaMalloc memory rounded up to 2 MiB: a whole
// allocation, which CUDA IPC maps for peers in other processes (the
// cuMem memory of mscclcMemAlloc cannot be mapped there). Windows are
// recorded with their allocation's id: calls on symmetric ones run on the
// caller's buffers, not staged (Registrations.h). ncclCommRegister records
// the buffer and registers it with the fallback NCCL (zero copy there);
// mscclc's own calls on it stay staged, since its registration is local.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Exports.h"
#include "SelfCalls.h"

#include "mscclc/runtime/Communicator.h"

using namespace mscclc::nccl;

extern "C" {

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  MSCCLC_REAL_SELF_CALL(MemAlloc, ptr, size);
  if (!ptr)
    return fail(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0)
    return fail(ncclInvalidArgument, "ncclMemAlloc: size is 0");
  size_t granule = mscclc::rt::kIpcGranularity;
  if (size > SIZE_MAX - granule)
    return fail(ncclInvalidArgument,
                fmt::format("ncclMemAlloc: size {} overflows", size));
  size_t rounded = (size + granule - 1) / granule * granule;
  return report(fromCuda(cudaMalloc(ptr, rounded),
                         fmt::format("ncclMemAlloc: cudaMalloc({})", rounded)));
}

ncclResult_t ncclMemFree(void *ptr) {
  MSCCLC_REAL_SELF_CALL(MemFree, ptr);
  if (!ptr)
    return ncclSuccess;
  return report(fromCuda(cudaFree(ptr), "ncclMemFree: cudaFree"));
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size,
                           void **handle) {
  MSCCLC_REAL_SELF_CALL(CommRegister, comm, buff, size, handle);
  const char *fn = "ncclCommRegister";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!buff || !handle || size == 0)
    return fail(ncclInvalidArgument,
                fmt::format("{}: buff and handle must not be NULL and size "
                         "not 0", fn));
  void *realHandle = nullptr;
  if (c->real) {
    ncclResult_t r = c->realLib->CommRegister(c->real, buff, size, &realHandle);
    if (r != ncclSuccess)
      return failOnFallback(c, fn, r);
  }
  auto reg = std::make_unique<std::pair<void *, size_t>>(realHandle, size);
  *handle = reg.get();
  std::lock_guard<std::mutex> lock(c->mutex);
  c->registrations.emplace(*handle, std::move(reg));
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  MSCCLC_REAL_SELF_CALL(CommDeregister, comm, handle);
  const char *fn = "ncclCommDeregister";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  std::unique_ptr<std::pair<void *, size_t>> reg;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    auto it = c->registrations.find(handle);
    if (it == c->registrations.end())
      return fail(ncclInvalidArgument,
                  fmt::format("{}: handle {} was not made by ncclCommRegister "
                           "on this communicator",
                           fn, handle));
    reg = std::move(it->second);
    c->registrations.erase(it);
  }
  if (c->real && reg->first) {
    ncclResult_t r = c->realLib->CommDeregister(c->real, reg->first);
    if (r != ncclSuccess)
      return failOnFallback(c, fn, r);
  }
  return ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                 ncclWindow_t *win, int winFlags) {
  MSCCLC_REAL_SELF_CALL(CommWindowRegister, comm, buff, size, win,
                        winFlags);
  const char *fn = "ncclCommWindowRegister";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!buff || !win || size == 0)
    return fail(ncclInvalidArgument,
                fmt::format("{}: buff and win must not be NULL and size not 0",
                         fn));
  if (winFlags & ~NCCL_WIN_COLL_SYMMETRIC)
    return fail(ncclInvalidArgument,
                fmt::format("{}: unknown window flags {:#x}", fn, winFlags));
  auto w = std::make_unique<ncclWindow_vidmem>();
  w->comm = c;
  w->buff = buff;
  w->size = size;
  {
    // Keyed by the allocation's id, checked at every use.
    std::lock_guard<std::mutex> lock(c->mutex);
    o = c->windowRanges.addWindow(w.get(), buff, size,
                                  (winFlags & NCCL_WIN_COLL_SYMMETRIC) != 0);
  }
  if (!o.ok())
    return fail(o.result, fmt::format("{}: {}", fn, o.message));
  // Collective on the fallback, as on NCCL: every rank registers.
  if (c->real && c->realLib->CommWindowRegister) {
    ncclResult_t r =
        c->realLib->CommWindowRegister(c->real, buff, size, &w->real, winFlags);
    if (r != ncclSuccess) {
      std::lock_guard<std::mutex> lock(c->mutex);
      c->windowRanges.remove(w.get());
      return failOnFallback(c, fn, r);
    }
  }
  *win = w.get();
  std::lock_guard<std::mutex> lock(c->mutex);
  c->windows.emplace(*win, std::move(w));
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  MSCCLC_REAL_SELF_CALL(CommWindowDeregister, comm, win);
  const char *fn = "ncclCommWindowDeregister";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  std::unique_ptr<ncclWindow_vidmem> w;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    auto it = c->windows.find(win);
    if (it == c->windows.end())
      return fail(ncclInvalidArgument,
                  fmt::format("{}: window {} was not registered on this "
                           "communicator",
                           fn, static_cast<const void *>(win)));
    w = std::move(it->second);
    c->windows.erase(it);
    c->windowRanges.remove(win);
  }
  if (w->real && c->real && c->realLib->CommWindowDeregister) {
    ncclResult_t r = c->realLib->CommWindowDeregister(c->real, w->real);
    if (r != ncclSuccess)
      return failOnFallback(c, fn, r);
  }
  return ncclSuccess;
}

NCCL_ALIAS(ncclMemAlloc);
NCCL_ALIAS(ncclMemFree);
NCCL_ALIAS(ncclCommRegister);
NCCL_ALIAS(ncclCommDeregister);
NCCL_ALIAS(ncclCommWindowRegister);
NCCL_ALIAS(ncclCommWindowDeregister);

} // extern "C"
