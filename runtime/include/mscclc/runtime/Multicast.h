//===- Multicast.h - SwitchChannel (NVLS) setup and its guard ---*- C++ -*-===//
//
// SwitchChannels need NVLink multicast objects (cuMulticastCreate ...).
// Multicast can put shared machines out of service, so setup is refused,
// before any multicast call, whenever NCCL_NVLS_ENABLE=0 or
// MSCCLC_DISABLE_MULTICAST is set to anything but 0.
//
// A multicast object only binds memory of the CUDA virtual memory API
// (cuMemCreate), not cudaMalloc memory: buffers a SwitchChannel reaches
// come from mscclcMemAlloc (allocateCuMem below).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_RUNTIME_MULTICAST_H
#define MSCCLC_RUNTIME_MULTICAST_H

#include "mscclc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mscclc::rt {

class Bootstrap;
class Communicator;

/// Ok when multicast may be used; else an Unsupported status that names
/// the variable that forbids it.
Status multicastAllowed();

/// Allocates `bytes` (rounded up to the allocation granularity, at least
/// 2 MiB so that multicast objects can bind it) of device memory on
/// `device` with cuMemCreate, exportable as a POSIX file descriptor and
/// accessible from every device that can access `device` as a peer.
Status allocateCuMem(int device, size_t bytes, void **ptr);
/// Frees memory of allocateCuMem (the pointer it returned).
Status freeCuMem(void *ptr);

/// The driver operations of a multicast binding, as a table: the binding
/// protocol below runs on the real one (cuMulticast*, cuMem*), and its
/// tests on a stand-in, since no machine available to the project may use
/// NVLink multicast.
struct MulticastDriver {
  /// Base and size of the cuMem allocation holding `local`; fails for
  /// memory of any other kind.
  std::function<Status(const void *local, uint64_t *base, uint64_t *size)>
      allocationOf;
  /// The granule of a multicast object of `bytes` over `devices` devices.
  std::function<Status(unsigned devices, uint64_t bytes, uint64_t *granule)>
      granularity;
  std::function<Status(unsigned devices, uint64_t bytes, uint64_t *handle)>
      create;
  std::function<Status(uint64_t handle, int *fd)> exportFd;
  std::function<Status(int fd, uint64_t *handle)> importFd;
  std::function<Status(uint64_t handle, int device)> addDevice;
  /// Binds device memory [start, start + bytes) to the object and maps the
  /// object at *va. `*stage` counts the steps done, for release.
  std::function<Status(uint64_t handle, int device, uint64_t start,
                       uint64_t bytes, uint64_t granule, uint64_t *va,
                       int *stage)>
      bindAndMap;
  /// Undoes `stage` steps of bindAndMap, then drops the handle.
  std::function<void(uint64_t handle, int device, uint64_t va, uint64_t bytes,
                     int stage)>
      release;
};

/// One rank's binding to a multicast object: `mcPtr` is the multimem
/// address of the buffer it bound. Unbinds and unmaps when destroyed.
class MulticastRegion {
public:
  ~MulticastRegion();
  MulticastRegion(const MulticastRegion &) = delete;
  MulticastRegion &operator=(const MulticastRegion &) = delete;
  void *mcPtr() const { return mcPtr_; }

private:
  friend Status bindMulticast(Bootstrap &, int, const MulticastDriver &,
                              const std::vector<int> &, const void *,
                              std::unique_ptr<MulticastRegion> *);
  explicit MulticastRegion(const MulticastDriver &driver) : driver_(driver) {}
  const MulticastDriver &driver_;
  uint64_t handle_ = 0;
  bool haveHandle_ = false;
  int device_ = -1;
  uint64_t va_ = 0; ///< where the object is mapped
  uint64_t size_ = 0;
  int stage_ = 0; ///< steps of bindAndMap done
  void *mcPtr_ = nullptr;
};

/// Collective over every rank of `comm` (ranks outside `group` take part
/// with `local` null and get no region): binds each group rank's buffer
/// `local`, from there to the end of its cuMem allocation, to one new
/// multicast object over the group. Works with one process per GPU
/// (the object travels as a file descriptor) and with one process for all.
/// Refused where multicast is disabled; every rank fails when one does.
Status bindMulticast(Communicator &comm, const std::vector<int> &group,
                     const void *local, std::unique_ptr<MulticastRegion> *out);

/// The protocol of bindMulticast over any driver (`driver` must outlive
/// the region). It checks no guard: only the overload above uses the CUDA
/// driver.
Status bindMulticast(Bootstrap &bootstrap, int device,
                     const MulticastDriver &driver,
                     const std::vector<int> &group, const void *local,
                     std::unique_ptr<MulticastRegion> *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_MULTICAST_H
