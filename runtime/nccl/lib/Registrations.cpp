//===- Registrations.cpp - Windows the native path may use in place -------===//

#include "Registrations.h"

#include "mscclc/runtime/Cuda.h"

namespace mscclc::nccl {

uint64_t cudaBufferId(const void *p) {
  const rt::DriverApi *api = nullptr;
  unsigned long long id = 0;
  if (p && rt::driverApi(&api).isOk() &&
      api->pointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                               rt::toDevicePtr(p)) ==
          CUDA_SUCCESS)
    return id;
  return 0;
}

Outcome Registrations::addWindow(const void *handle, const void *base,
                                 size_t size, bool symmetric) {
  uint64_t id = idOf_(base);
  if (!id)
    return {ncclInvalidArgument,
            fmt::format("buffer {} is not device memory", base)};
  Window w;
  w.base = static_cast<const char *>(base);
  w.size = size;
  w.bufferId = id;
  w.symmetric = symmetric;
  windows_[handle] = w;
  return Outcome::success();
}

bool Registrations::remove(const void *handle) {
  return windows_.erase(handle) > 0;
}

bool Registrations::inSymmetricWindow(const void *p, size_t bytes,
                                      std::string *why) const {
  const char *q = static_cast<const char *>(p);
  std::string found;
  for (const auto &[handle, w] : windows_) {
    if (!q || q < w.base || size_t(q - w.base) > w.size ||
        bytes > w.size - size_t(q - w.base))
      continue;
    if (!w.symmetric) {
      found = fmt::format("the window at {} is not symmetric "
                          "(NCCL_WIN_COLL_SYMMETRIC)",
                          static_cast<const void *>(w.base));
      continue;
    }
    if (w.size < kMinDirectBytes) {
      found = fmt::format("the window at {} has {} bytes, less than the {} "
                          "that CUDA IPC maps on their own",
                          static_cast<const void *>(w.base), w.size,
                          kMinDirectBytes);
      continue;
    }
    if (idOf_(p) != w.bufferId) {
      found = fmt::format("the memory of the window at {} was freed after "
                          "it was registered",
                          static_cast<const void *>(w.base));
      continue;
    }
    return true;
  }
  *why = found.empty()
             ? fmt::format("{} is in no registered window", p)
             : found;
  return false;
}

} // namespace mscclc::nccl
