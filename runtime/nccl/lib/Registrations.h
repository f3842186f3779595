//===- Registrations.h - Windows the native path may use in place ---------===//
//
// ncclCommWindowRegister is collective in NCCL, and a window registered with
// NCCL_WIN_COLL_SYMMETRIC promises that every rank passes buffers at the
// same offsets of its window at the same calls. That is the contract of
// mscclc's direct runs (mscclcRunCollectiveDirect: the ranks map each
// other's buffers at a collective set-up step whenever a new pair
// appears), so a call whose buffers lie in symmetric windows runs on them
// with no staging copy.
//
// A window is keyed by the CUDA allocation it was registered on
// (CU_POINTER_ATTRIBUTE_BUFFER_ID) and checked against it at every use: a
// window whose memory was freed, and maybe handed out again at the same
// address, no longer counts, and the call is staged as if it had never
// been registered.
//
// ncclCommRegister is local in NCCL (no rank learns of another's
// registrations), so nothing tells every rank alike that a call's buffers
// moved together: such buffers stay staged (and reach the fallback's own
// registration).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_REGISTRATIONS_H
#define MSCCLC_NCCL_REGISTRATIONS_H

#include "Errors.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace mscclc::nccl {

/// The id of the CUDA allocation holding `p`, unique for the process's
/// lifetime (a new allocation at a freed one's address gets a new id); 0
/// when `p` is not device memory.
using BufferIdOf = uint64_t (*)(const void *p);
/// CU_POINTER_ATTRIBUTE_BUFFER_ID through the driver API.
uint64_t cudaBufferId(const void *p);

struct Window {
  const char *base = nullptr;
  size_t size = 0;
  uint64_t bufferId = 0; ///< the allocation's id when registered
  bool symmetric = false;
};

class Registrations {
public:
  /// Windows smaller than this are staged: CUDA IPC maps whole allocations
  /// of at least 2 MiB, and smaller cudaMalloc ones share theirs.
  static constexpr size_t kMinDirectBytes = size_t(2) << 20;

  explicit Registrations(BufferIdOf idOf = cudaBufferId) : idOf_(idOf) {}

  /// Records the window [base, base + size) under `handle`;
  /// ncclInvalidArgument when `base` is not device memory.
  Outcome addWindow(const void *handle, const void *base, size_t size,
                    bool symmetric);
  /// Forgets `handle`; false when it was not recorded.
  bool remove(const void *handle);
  size_t size() const { return windows_.size(); }

  /// Whether [p, p + bytes) lies inside one symmetric window of at least
  /// kMinDirectBytes whose memory is still the allocation registered;
  /// otherwise `why` says why not.
  bool inSymmetricWindow(const void *p, size_t bytes, std::string *why) const;

private:
  BufferIdOf idOf_;
  std::map<const void *, Window> windows_;
};

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_REGISTRATIONS_H
