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
#include <memory>
#include <vector>

namespace mscclc::rt {

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

/// One rank's binding to a multicast object: `mcPtr` is the multimem
/// address of the buffer it bound. Unbinds and unmaps when destroyed.
class MulticastRegion {
public:
  ~MulticastRegion();
  MulticastRegion(const MulticastRegion &) = delete;
  MulticastRegion &operator=(const MulticastRegion &) = delete;
  void *mcPtr() const { return mcPtr_; }

private:
  friend Status bindMulticast(Communicator &, const std::vector<int> &,
                              const void *, std::unique_ptr<MulticastRegion> *);
  MulticastRegion() = default;
  unsigned long long handle_ = 0; ///< CUmemGenericAllocationHandle
  bool haveHandle_ = false;
  int device_ = -1;
  bool bound_ = false;
  unsigned long long va_ = 0; ///< CUdeviceptr of the multicast mapping
  size_t size_ = 0;
  bool mapped_ = false;
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

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_MULTICAST_H
