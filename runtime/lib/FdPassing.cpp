//===- FdPassing.cpp - File descriptors over abstract Unix sockets -------===//

#include "mscclc/runtime/FdPassing.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace mscclc::rt {

namespace {

/// The address of abstract socket `name`: a leading NUL, then the name.
Status abstractAddress(const std::string &name, sockaddr_un *addr,
                       socklen_t *len) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof(addr->sun_path))
    return invalidArgument(
        fmt::format("socket name '{}' is empty or too long", name));
  memcpy(addr->sun_path + 1, name.data(), name.size());
  *len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return Status::ok();
}

/// A one-byte message (a message may not be empty) with room for one
/// descriptor; fills in its own pointers, so it is not copied.
struct FdMessage {
  char byte = 'F';
  iovec iov = {&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};

  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage &) = delete;
  FdMessage &operator=(const FdMessage &) = delete;
};

Status errnoStatus(const char *what, const std::string &name) {
  return systemError(
      fmt::format("{} on socket '{}': {}", what, name, strerror(errno)));
}

static_assert(sizeof(FdToken::bytes) == wire::kSecretBytes,
              "tokens compare as bootstrap secrets");

/// Reads a token from a new connection, waiting at most `ms`: whether it
/// came whole and is `token`.
bool presentsToken(int conn, const FdToken &token, int ms) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  FdToken got;
  size_t have = 0;
  while (have < sizeof(got.bytes)) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                       deadline - std::chrono::steady_clock::now())
                       .count());
    pollfd p = {conn, POLLIN, 0};
    int ready = left > 0 ? ::poll(&p, 1, left) : 0;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return false;
    ssize_t n = ::recv(conn, got.bytes + have, sizeof(got.bytes) - have,
                       MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return false;
    have += size_t(n);
  }
  return wire::secretsEqual(got.bytes, token.bytes);
}

} // namespace

Status FdServer::listen(const std::string &name,
                        std::unique_ptr<FdServer> *out) {
  sockaddr_un addr;
  socklen_t len = 0;
  MSCCLC_TRY(abstractAddress(name, &addr, &len));
  std::unique_ptr<FdServer> server(new FdServer());
  server->name_ = name;
  server->socket_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server->socket_ < 0)
    return errnoStatus("socket", name);
  if (::bind(server->socket_, reinterpret_cast<sockaddr *>(&addr), len) != 0)
    return errnoStatus("bind", name);
  if (::listen(server->socket_, 64) != 0)
    return errnoStatus("listen", name);
  *out = std::move(server);
  return Status::ok();
}

FdServer::~FdServer() {
  if (socket_ >= 0)
    ::close(socket_);
}

Status FdServer::serve(int fd, int clients, const FdToken &token,
                       int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(timeoutMs);
  for (int served = 0; served < clients; ++served) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                       deadline - std::chrono::steady_clock::now())
                       .count());
    pollfd p = {socket_, POLLIN, 0};
    int ready = left > 0 ? ::poll(&p, 1, left) : 0;
    if (ready < 0 && errno == EINTR) {
      --served;
      continue;
    }
    if (ready <= 0)
      return systemError(
          fmt::format("socket '{}': {} of {} processes connected "
                      "within {} ms",
                      name_, served, clients, timeoutMs));
    int conn = ::accept4(socket_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0)
      return errnoStatus("accept", name_);
    // A client sends its token as soon as it connects: a second is plenty,
    // and bounds what a silent stranger costs.
    if (!presentsToken(conn, token, std::min(left, 1000))) {
      ucred peer{};
      socklen_t len = sizeof(peer);
      getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len);
      MSCCLC_LOG(Warn,
                 "socket '{}': dropped a connection from process {} (user "
                 "{}) without the token",
                 name_, int(peer.pid), unsigned(peer.uid));
      ::close(conn);
      --served;
      continue;
    }
    FdMessage m;
    cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    ssize_t sent = ::sendmsg(conn, &m.msg, MSG_NOSIGNAL);
    int err = errno;
    ::close(conn);
    if (sent != 1) {
      errno = err;
      return errnoStatus("sendmsg", name_);
    }
  }
  return Status::ok();
}

Status receiveFd(const std::string &name, const FdToken &token, int timeoutMs,
                 int *fd) {
  sockaddr_un addr;
  socklen_t len = 0;
  MSCCLC_TRY(abstractAddress(name, &addr, &len));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(timeoutMs);
  int sock = -1;
  for (;;) {
    sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
      return errnoStatus("socket", name);
    if (::connect(sock, reinterpret_cast<sockaddr *>(&addr), len) == 0)
      break;
    int err = errno;
    ::close(sock);
    // The server may not be listening yet.
    if ((err != ECONNREFUSED && err != ENOENT) ||
        std::chrono::steady_clock::now() >= deadline) {
      errno = err;
      return errnoStatus("connect", name);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (::send(sock, token.bytes, sizeof(token.bytes), MSG_NOSIGNAL) !=
      ssize_t(sizeof(token.bytes))) {
    Status s = errnoStatus("sending the token", name);
    ::close(sock);
    return s;
  }
  int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                     deadline - std::chrono::steady_clock::now())
                     .count());
  pollfd p = {sock, POLLIN, 0};
  if (::poll(&p, 1, left > 0 ? left : 1) <= 0) {
    ::close(sock);
    return systemError(fmt::format("socket '{}': no descriptor within {} ms",
                                   name, timeoutMs));
  }
  FdMessage m;
  ssize_t got = ::recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
  int err = errno;
  ::close(sock);
  if (got == 0)
    return systemError(fmt::format(
        "socket '{}': the server closed the connection without a descriptor "
        "(is the token wrong?)",
        name));
  cmsghdr *c = got == 1 ? CMSG_FIRSTHDR(&m.msg) : nullptr;
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int))) {
    errno = got < 0 ? err : EPROTO;
    return errnoStatus("recvmsg", name);
  }
  memcpy(fd, CMSG_DATA(c), sizeof(int));
  return Status::ok();
}

} // namespace mscclc::rt
