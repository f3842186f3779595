//===- BootstrapWire.h - Bootstrap messages, decoders ---------*- C++ -*-===//
//
// What the bootstrap (Bootstrap.h) sends over TCP and how a receiver reads
// it, apart from the sockets: every byte read from the network passes
// through one of these decoders before the bootstrap indexes, allocates or
// connects with it, so they can be tested and fuzzed on plain bytes.
//
// Wire protocol (all integers in host order: one machine type):
//   rank -> root : Hello {magic, rank, nonce, nranks, listen address, secret}
//   root -> rank : nranks listen addresses, in rank order
//   rank -> next : RingHello {magic, rank, nonce, secret}
// Every frame a connection opens with has a fixed size. The secret in the
// id (256 random bits, or derived from MSCCLC_BOOTSTRAP_SECRET for an id
// made from an address) is checked, in constant time, before anything else
// in a frame is used: a stray or stale process, which lacks it, is dropped
// without touching the communicator. It is sent in the clear: it keeps out
// processes that were never given the id, not eavesdroppers on the network.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_BOOTSTRAPWIRE_H
#define MSCCLC_RUNTIME_BOOTSTRAPWIRE_H

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mscclc::rt::wire {

constexpr uint32_t kMagic = 0x4d534343; // "MSCC"
// 2: the secret in the id and in both hellos.
constexpr uint32_t kVersion = 2;
constexpr uint32_t kFlagRank0HostsRoot = 1;
/// The most ranks a hello may announce (the compiler's --ranks limit): the
/// root allocates per announced rank.
constexpr uint32_t kMaxRanks = 65536;

constexpr size_t kSecretBytes = 32;

/// The address of a listening socket, as carried in ids and messages.
/// Zeroed by default: a port left unset is 0 (any free port), and the
/// bytes past an IPv4 address are 0 on the wire.
struct WireAddr {
  uint16_t family = 0; // AF_INET or AF_INET6
  uint16_t port = 0;   // network order
  uint8_t addr[16] = {};
};

struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint64_t nonce;
  uint32_t flags;
  WireAddr root;
  uint8_t secret[kSecretBytes];
};
// ncclUniqueId's 128 bytes hold it (72 now).
static_assert(sizeof(IdLayout) <= kUniqueIdBytes, "id too large");

struct Hello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint32_t nranks;
  WireAddr listen;
  uint8_t secret[kSecretBytes];
};
// No padding: every byte sent is a field the sender set.
static_assert(sizeof(Hello) == 72, "Hello has padding");

struct RingHello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint8_t secret[kSecretBytes];
};
static_assert(sizeof(RingHello) == 48, "RingHello has padding");

/// Whether two secrets are equal, in time independent of where they differ
/// (a peer timing the root's answers learns nothing of the secret).
bool secretsEqual(const uint8_t *a, const uint8_t *b);

/// Checks an address that came over the wire: IPv4 or IPv6, a port.
Status checkAddress(const WireAddr &addr);

/// Reads an id's fields; an error unless magic, version and root address
/// are an mscclc id's.
Status decodeUniqueId(const UniqueId &id, IdLayout *out);

/// The root's record of the ranks that said hello.
class RootRoster {
public:
  RootRoster(uint64_t nonce, const uint8_t secret[kSecretBytes]);

  /// Takes the `size` bytes a connection sent as its hello. A frame that
  /// is not for this communicator (wrong size, bad magic, secret or nonce)
  /// sets *stray to why: the root drops that connection and goes on
  /// waiting. A frame that is, but conflicts with the ranks seen so far
  /// (rank out of range, taken, another rank count, a bad address) is an
  /// error. Otherwise *stray is null and the rank is recorded and returned
  /// in *rank.
  Status add(const void *frame, size_t size, const char **stray, int *rank);

  /// Every announced rank said hello.
  bool complete() const { return nranks_ > 0 && arrived_ == nranks_; }
  int nranks() const { return nranks_; }
  /// Listening addresses by rank (valid once complete()).
  const std::vector<WireAddr> &addresses() const { return addrs_; }

private:
  uint64_t nonce_;
  uint8_t secret_[kSecretBytes];
  int nranks_ = -1;
  int arrived_ = 0;
  std::vector<WireAddr> addrs_;
  std::vector<bool> seen_;
};

/// Decodes the root's answer to a rank of an `nranks` communicator: one
/// valid address per rank, exactly.
Status decodeAddresses(const void *bytes, size_t size, int nranks,
                       std::vector<WireAddr> *out);

/// Null if the `size` bytes of a ring hello come from rank `expected` of
/// the communicator with `nonce` and `secret`, else why not.
const char *checkRingHello(const void *frame, size_t size, uint64_t nonce,
                           const uint8_t secret[kSecretBytes], int expected);

} // namespace mscclc::rt::wire

#endif // MSCCLC_RUNTIME_BOOTSTRAPWIRE_H
