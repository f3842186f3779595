//===- Bootstrap.h - TCP rendezvous among the ranks -----------*- C++ -*-===//
//
// A communicator starts from a 128-byte unique id naming a root address and
// port and holding a secret. Every rank connects to the root and tells it
// where it listens; the root answers with every rank's address and leaves;
// the ranks then form a TCP ring that carries all-gathers and barriers for
// setting up channels. Every connection opens with a handshake in which
// both sides prove that they know the secret without sending it: a rank
// talks only to a root and neighbours that know it, and the root and the
// ranks drop connections that do not (BootstrapWire.h).
//
// Two ways to get the id:
//  - createUniqueId(): starts the root in a thread of the calling process
//    (bound to MSCCLC_BOOTSTRAP_ADDR, else the interface that
//    MSCCLC_SOCKET_IFNAME or NCCL_SOCKET_IFNAME picks, else one that is
//    not lo or docker*: Interfaces.h) and encodes its address and a random
//    secret; pass the 128 bytes to the other ranks yourself (MPI_Bcast, a
//    file, torch.distributed).
//  - uniqueIdFromAddress("host:port"): every rank builds the same id from a
//    well-known address (torchrun's MASTER_ADDR, MSCCLC_COMM_ID); rank 0
//    hosts the root there during its init. The secret is derived from
//    MSCCLC_BOOTSTRAP_SECRET, which the launcher sets alike on every rank
//    (at least 128 random bits); without it such an id is refused unless
//    MSCCLC_BOOTSTRAP_ALLOW_NO_SECRET=1.
//
// Every wait has a deadline (MSCCLC_BOOTSTRAP_TIMEOUT seconds, 1 to 86400,
// default 120): a rank that never comes turns into an error, not a hang.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_BOOTSTRAP_H
#define MSCCLC_RUNTIME_BOOTSTRAP_H

#include "mscclc/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mscclc::rt {
namespace wire {
struct WireAddr;
} // namespace wire

constexpr size_t kUniqueIdBytes = 128;

struct UniqueId {
  char bytes[kUniqueIdBytes];
};

/// Starts a root thread and returns its id (honours MSCCLC_COMM_ID). At
/// most 256 such roots wait for their ranks at once in a process; more is
/// an error.
Status createUniqueId(UniqueId *id);
/// Builds the id for a root that rank 0 hosts at `hostPort` ("addr:port",
/// "[v6addr]:port" or "hostname:port").
Status uniqueIdFromAddress(const std::string &hostPort, UniqueId *id);
/// "ip:port" of the root an id names (for logs and tests).
std::string describeUniqueId(const UniqueId &id);

/// Seconds every bootstrap wait may take: MSCCLC_BOOTSTRAP_TIMEOUT, a
/// whole number from 1 to 86400 (Settings.def), read on every call.
/// Anything else is an error naming the variable, the value and the range,
/// never a silent default.
Status bootstrapTimeout(double *seconds);

/// Fills `size` bytes from the kernel's random source (getrandom, else
/// /dev/urandom where the kernel lacks it): secrets and tokens.
Status randomBytes(void *out, size_t size);

class Bootstrap {
public:
  /// Joins the rendezvous as `rank` of `nranks` (at most limits::kMaxRanks); blocks
  /// until all ranks came.
  static Status create(const UniqueId &id, int rank, int nranks,
                       std::unique_ptr<Bootstrap> *out);
  ~Bootstrap();
  Bootstrap(const Bootstrap &) = delete;
  Bootstrap &operator=(const Bootstrap &) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  /// `data` holds nranks slices of `bytesPerRank`; slice `rank()` is this
  /// rank's contribution, the others are filled in.
  Status allGather(void *data, size_t bytesPerRank);
  Status barrier();

  /// The communicator's secret and nonce: other connections among its
  /// ranks (the TCP transport's) open with a handshake under them too
  /// (BootstrapWire.h).
  const uint8_t *secret() const { return secret_.data(); }
  uint64_t nonce() const { return nonce_; }
  /// The address (port 0) this rank listens on for the ring: where its
  /// other listeners go, on the same interface.
  const wire::WireAddr &listenAddress() const;

private:
  Bootstrap(int rank, int nranks);
  int rank_;
  int nranks_;
  int next_ = -1; ///< Socket to rank+1.
  int prev_ = -1; ///< Socket from rank-1.
  uint64_t nonce_ = 0;
  std::array<uint8_t, 32> secret_{};
  std::unique_ptr<wire::WireAddr> listenAddr_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_BOOTSTRAP_H
