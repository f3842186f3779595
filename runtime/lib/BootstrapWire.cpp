//===- BootstrapWire.cpp - Decoding the bootstrap's messages --------------===//
//
// Frames are copied out of the byte buffer with memcpy: the buffers (a
// UniqueId's char array, a receive buffer) carry no alignment, and the
// fields are read only after their size is known to be right.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/BootstrapWire.h"

#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>

namespace mscclc::rt::wire {

Status checkAddress(const WireAddr &addr) {
  if (addr.family != AF_INET && addr.family != AF_INET6)
    return invalidArgument(
        fmt::format("bootstrap: address family {} is neither IPv4 nor IPv6",
                    addr.family));
  if (addr.port == 0)
    return invalidArgument("bootstrap: an address without a port");
  return Status::ok();
}

Status decodeUniqueId(const UniqueId &id, IdLayout *out) {
  memcpy(out, id.bytes, sizeof(*out));
  if (out->magic != kMagic || out->version != kVersion)
    return invalidArgument("not an mscclc unique id (bad magic or version)");
  return checkAddress(out->root).context("the unique id's root address");
}

bool secretsEqual(const uint8_t *a, const uint8_t *b) {
  // Every byte is compared, whatever came before; volatile keeps the
  // compiler from turning the loop into one that stops at a difference.
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < kSecretBytes; ++i)
    diff = uint8_t(diff | (a[i] ^ b[i]));
  return diff == 0;
}

RootRoster::RootRoster(uint64_t nonce, const uint8_t secret[kSecretBytes])
    : nonce_(nonce) {
  memcpy(secret_, secret, kSecretBytes);
}

Status RootRoster::add(const void *frame, size_t size, const char **stray,
                       int *rank) {
  Hello hello;
  *stray = nullptr;
  if (size != sizeof(hello)) {
    *stray = "a frame of the wrong size";
    return Status::ok();
  }
  memcpy(&hello, frame, sizeof(hello));
  // The secret first: nothing else in the frame means anything without it.
  if (hello.magic != kMagic)
    *stray = "not an mscclc hello (bad magic)";
  else if (!secretsEqual(hello.secret, secret_))
    *stray = "a wrong secret (another communicator's process, a stale one, "
             "or a different MSCCLC_BOOTSTRAP_SECRET?)";
  else if (hello.nonce != nonce_)
    *stray = "another communicator's nonce";
  if (*stray)
    return Status::ok();
  auto conflict = [&](const char *why) {
    return invalidArgument(fmt::format(
        "bootstrap root: rank {} of {} conflicts with {} ranks seen so far "
        "({})",
        hello.rank, hello.nranks, nranks_, why));
  };
  if (hello.nranks == 0 || hello.nranks > kMaxRanks)
    return conflict("a rank count out of range");
  if (nranks_ < 0) {
    nranks_ = int(hello.nranks);
    addrs_.resize(size_t(nranks_));
    seen_.resize(size_t(nranks_));
  }
  // Unsigned compares: a rank of 2^32-1 must not pass as -1.
  if (hello.nranks != uint32_t(nranks_))
    return conflict("different rank counts");
  if (hello.rank >= hello.nranks)
    return conflict("a rank out of range");
  if (seen_[hello.rank])
    return conflict("a duplicate rank");
  MSCCLC_TRY(checkAddress(hello.listen).context(
      fmt::format("bootstrap root: the listening address of rank {}",
                  hello.rank)));
  seen_[hello.rank] = true;
  addrs_[hello.rank] = hello.listen;
  ++arrived_;
  *rank = int(hello.rank);
  return Status::ok();
}

Status decodeAddresses(const void *bytes, size_t size, int nranks,
                       std::vector<WireAddr> *out) {
  if (nranks < 1 || size != size_t(nranks) * sizeof(WireAddr))
    return invalidArgument(fmt::format(
        "bootstrap: the root's answer has {} bytes, not {} addresses", size,
        nranks));
  out->resize(size_t(nranks));
  memcpy(out->data(), bytes, size);
  for (int r = 0; r < nranks; ++r)
    MSCCLC_TRY(checkAddress((*out)[size_t(r)])
                   .context(fmt::format("the root's address of rank {}", r)));
  return Status::ok();
}

const char *checkRingHello(const void *frame, size_t size, uint64_t nonce,
                           const uint8_t secret[kSecretBytes], int expected) {
  RingHello hello;
  if (size != sizeof(hello))
    return "a frame of the wrong size";
  memcpy(&hello, frame, sizeof(hello));
  if (hello.magic != kMagic)
    return "not an mscclc ring hello (bad magic)";
  if (!secretsEqual(hello.secret, secret))
    return "a wrong secret (another communicator's process, or a stale one?)";
  if (hello.nonce != nonce)
    return "another communicator's nonce";
  if (expected < 0 || hello.rank != uint32_t(expected))
    return "a hello from another rank than the previous one";
  return nullptr;
}

} // namespace mscclc::rt::wire
