//===- FdPassing.h - File descriptors between processes of one host -*- C++ -*-===//
//
// Shareable CUDA handles (multicast objects) travel between processes as
// POSIX file descriptors, which only the kernel can copy into another
// process: over a Unix socket with SCM_RIGHTS. The server listens on an
// abstract socket name (no file in the file system, gone when closed);
// every client connects and receives one copy of the descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_RUNTIME_FDPASSING_H
#define MSCCLC_RUNTIME_FDPASSING_H

#include "mscclc/runtime/Status.h"

#include <memory>
#include <string>

namespace mscclc::rt {

class FdServer {
public:
  /// Listens on the abstract Unix socket `name` (at most 100 bytes).
  static Status listen(const std::string &name, std::unique_ptr<FdServer> *out);
  ~FdServer();
  FdServer(const FdServer &) = delete;
  FdServer &operator=(const FdServer &) = delete;

  /// Sends `fd` to each of the next `clients` connections; fails when they
  /// have not all connected within `timeoutMs`.
  Status serve(int fd, int clients, int timeoutMs);

private:
  FdServer() = default;
  int socket_ = -1;
  std::string name_;
};

/// Connects to the server `name` (retrying until `timeoutMs`) and receives
/// its descriptor into *fd (the caller closes it).
Status receiveFd(const std::string &name, int timeoutMs, int *fd);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_FDPASSING_H
