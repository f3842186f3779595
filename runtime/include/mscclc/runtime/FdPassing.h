//===- FdPassing.h - File descriptors between processes of one host -*- C++ -*-===//
//
// Shareable CUDA handles (multicast objects) travel between processes as
// POSIX file descriptors, which only the kernel can copy into another
// process: over a Unix socket with SCM_RIGHTS. The server listens on an
// abstract socket name (no file in the file system, gone when closed);
// every client connects and receives one copy of the descriptor.
//
// Any process of the host's network namespace can connect to an abstract
// socket (they have no permissions, and /proc/net/unix lists them), so a
// client first presents a random token that reached it over the
// (authenticated) bootstrap: a stranger gets no descriptor, and does not
// use up a client's turn.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_RUNTIME_FDPASSING_H
#define MSCCLC_RUNTIME_FDPASSING_H

#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mscclc::rt {

/// What a client presents to get the descriptor (randomBytes fills it).
struct FdToken {
  uint8_t bytes[32];
};

class FdServer {
public:
  /// Listens on the abstract Unix socket `name` (at most 100 bytes).
  static Status listen(const std::string &name, std::unique_ptr<FdServer> *out);
  ~FdServer();
  FdServer(const FdServer &) = delete;
  FdServer &operator=(const FdServer &) = delete;

  /// Sends `fd` to each of the next `clients` connections that present
  /// `token`; fails when they have not all come within `timeoutMs`. A
  /// connection with another token, or none within a second, is closed
  /// (and logged) without the descriptor.
  Status serve(int fd, int clients, const FdToken &token, int timeoutMs);

private:
  FdServer() = default;
  int socket_ = -1;
  std::string name_;
};

/// Connects to the server `name` (retrying until `timeoutMs`), presents
/// `token` and receives its descriptor into *fd (the caller closes it).
Status receiveFd(const std::string &name, const FdToken &token, int timeoutMs,
                 int *fd);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_FDPASSING_H
