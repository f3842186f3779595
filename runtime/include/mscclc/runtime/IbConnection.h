//===- IbConnection.h - Port channels over IB verbs ------------*- C++ -*-===//
//
// The IB verbs data path of port channels between nodes:
//   - an IbDevice is an active port that probeIbDevices() found
//     (IbVerbs.h), opened, with one protection domain: memory registered
//     on it serves every connection on the port;
//   - an IbConnection is one reliable-connected queue pair to one peer on
//     a device. The two ends exchange IbEndpoints (IbNetwork: over the
//     bootstrap) and connect(), which takes the queue pair through INIT,
//     RTR and RTS;
//   - a put is an RDMA write from a registered local region into the
//     peer's registered region, cut into messages of at most
//     IbOptions::maxMessageBytes;
//   - a signal is an 8-byte inline RDMA write of the semaphore's new value
//     into the peer's semaphore, on the same queue pair: a reliable
//     connection executes writes in order, so the peer sees the value only
//     after the data queued before it;
//   - a flush waits for the completion of the last write queued: then
//     every earlier write is done and its sources may be overwritten.
// Writes are sequence-numbered per connection. Most are unsignaled; one in
// every sendDepth/2 asks for a completion, so the send queue never fills
// with work whose end the connection cannot see. A failed completion, or
// none within IbOptions::timeoutSeconds, is the connection's error from
// then on, naming the peer.
//
// The channels over a connection are used by one thread (the rank's
// proxy); the connection locks its calls, so a reset may quiesce it from
// another.
//
// GPU memory registers as a dma-buf (cudaDmaBufExporter, DmaBuf.cpp), else
// through nvidia-peermem, else not, and says which. A pair of ranks with a
// port each where an end's GPU memory does not register is "ib staged":
// the TCP transport's frames over a ring of host memory on one of these
// connections (IbRing.h).
//
// The executor (Executor.cpp) puts port channels between nodes on IB verbs
// where both ends are ready (findIbReadiness): it registers its GPU memory
// through the network's cache (one registration per allocation, shared by
// every executor of the communicator), learns the peers' keys with
// IbNetwork::exchange, and makes each channel with makeIbChannel.
// This path is tested against a fake libibverbs that executes writes in
// process (test/Runtime/unit/FakeIbVerbs.cpp); it has not run on an HCA.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_IBCONNECTION_H
#define MSCCLC_RUNTIME_IBCONNECTION_H

#include "mscclc/runtime/IbVerbs.h"
#include "mscclc/runtime/Transport.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <mutex>
#include <vector>

namespace mscclc::rt {

class Bootstrap;

/// What a peer needs to connect its queue pair to ours (the wire format of
/// the exchange: fixed size, no pointers).
struct IbEndpoint {
  uint32_t qpn = 0;
  uint32_t psn = 0;     ///< first packet sequence number (24 bits)
  uint16_t lid = 0;     ///< InfiniBand: the port's LID
  uint8_t port = 0;
  uint8_t mtu = 0;      ///< the port's active MTU (enum ibv_mtu)
  uint8_t ethernet = 0; ///< RoCE: addressed by GID
  uint8_t gidIndex = 0;
  uint8_t reserved[2] = {};
  uint8_t gid[16] = {};
};
static_assert(sizeof(IbEndpoint) == 32, "IbEndpoint is a wire format");

/// Registered memory: a local write reads it with `lkey`, a peer's write
/// targets it with `rkey`.
struct IbRegion {
  uint64_t address = 0, bytes = 0;
  uint32_t lkey = 0, rkey = 0;
  void *handle = nullptr; ///< the ibv_mr
};

/// Memory of the peer that a write may target.
struct IbRemote {
  uint64_t address = 0, bytes = 0;
  uint32_t rkey = 0;
};

struct IbOptions {
  unsigned sendDepth = 256;              ///< send queue entries
  uint64_t maxMessageBytes = 1ull << 30; ///< longer writes are cut
  double timeoutSeconds = 120;           ///< for a completion
  int gidIndex = 0;                      ///< RoCE
  uint8_t ackTimeout = 20;  ///< 4.096 us * 2^ackTimeout before a retry
  uint8_t retryCount = 7;
  /// Ib staged (IbRing.h): the bytes of each receive ring.
  uint64_t ringBytes = 4ull << 20;
};

/// MSCCLC_IB_GID_INDEX (else NCCL_IB_GID_INDEX), MSCCLC_IB_TIMEOUT (else
/// NCCL_IB_TIMEOUT), MSCCLC_TRANSPORT_TIMEOUT and MSCCLC_IB_RING_BYTES
/// (docs/settings.md); an error names the variable whose value is bad.
/// An unset one sets its field to the table's default, which is IbOptions'
/// (runtime-SettingsTest checks that they agree).
Status ibOptionsFromEnv(IbOptions *out);

class IbConnection;

/// Whether this rank can carry port channels over IB verbs.
struct IbReadiness {
  bool ready = false;   ///< a port, and GPU memory registers on it
  bool hasPort = false; ///< a port that opens (ib staged needs no more)
  IbPort port;          ///< the port it would use (when it has one)
  /// Ready: the port and how GPU memory registers ("mlx5_0:1 (InfiniBand),
  /// GPU memory through dma-buf"); else why not.
  std::string detail;
  IbAbility ability() const { return {hasPort, ready}; }
};

class IbDevice;
using DmaBufExporter = std::function<Status(void *base, uint64_t bytes, int *fd)>;

/// The first port of `probe` (MSCCLC_IB_HCA picks it), opened, with
/// `memory` (`bytes` of the rank's GPU memory) registered on it and
/// deregistered again: ready only if all of that works; hasPort once the
/// port opens.
IbReadiness findIbReadiness(const IbProbe &probe, const IbOptions &options,
                            void *memory, uint64_t bytes,
                            const DmaBufExporter &exportDmaBuf);

/// Exports [base, base + bytes) of GPU memory as a dma-buf file descriptor,
/// which the caller closes (cudaDmaBufExporter() is CUDA's).
/// cuMemGetHandleForAddressRange, where the driver has it.
DmaBufExporter cudaDmaBufExporter();

/// An opened port and its protection domain.
class IbDevice {
public:
  static Status open(const IbPort &port, const IbOptions &options,
                     std::unique_ptr<IbDevice> *out);
  ~IbDevice();
  IbDevice(const IbDevice &) = delete;
  IbDevice &operator=(const IbDevice &) = delete;

  /// Registers host memory for local reads and remote writes, on every
  /// connection of this device.
  Status registerHost(void *base, uint64_t bytes, IbRegion *out);
  /// Registers GPU memory, the first way that works: a dma-buf of the
  /// range from `exportDmaBuf` (given a page-aligned range that covers
  /// it) with ibv_reg_dmabuf_mr; else ibv_reg_mr on the device pointer,
  /// which nvidia-peermem serves. `*how` names the way ("dma-buf",
  /// "nvidia-peermem"). With neither, an Unsupported error gives both
  /// reasons: the caller stages the memory through pinned host memory.
  Status registerDevice(void *base, uint64_t bytes,
                        const DmaBufExporter &exportDmaBuf, IbRegion *out,
                        std::string *how);
  void deregister(const IbRegion &region);

  struct Impl;

private:
  friend class IbConnection;
  explicit IbDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class IbConnection {
public:
  /// Makes a queue pair for `peer` on `device`, which must outlive it.
  static Status open(IbDevice &device, int peer,
                     std::unique_ptr<IbConnection> *out);
  ~IbConnection();
  IbConnection(const IbConnection &) = delete;
  IbConnection &operator=(const IbConnection &) = delete;

  /// What the peer passes to its connect().
  const IbEndpoint &local() const;
  /// Takes the queue pair to ready-to-send against the peer's endpoint.
  Status connect(const IbEndpoint &remote);

  /// Queues a write of `bytes` at `srcOffset` of `src` to `dstOffset` of
  /// `dst` (both ranges checked); *seq is the last message's number.
  Status write(const IbRegion &src, uint64_t srcOffset, const IbRemote &dst,
               uint64_t dstOffset, uint64_t bytes, uint64_t *seq);
  /// Queues a write of the `bytes` (at most 8) at `data`, copied before
  /// the call returns, to the start of `dst`.
  Status writeInline(const void *data, uint32_t bytes, const IbRemote &dst,
                     uint64_t *seq);
  /// The number of the last write queued (0: none yet).
  uint64_t lastQueued() const;
  /// Waits until write `seq` and every earlier one completed.
  Status wait(uint64_t seq);
  /// The connection's error (ok while there is none).
  Status error() const;
  /// Takes the completions that came, without waiting: a failed write
  /// becomes the connection's error, returned here.
  Status progress();
  int peer() const;

  struct Impl;

private:
  explicit IbConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What an IB port channel reads and where it writes: buffers named as in
/// a trigger (0 input, 1 output, 2 scratch).
struct IbChannelSpec {
  IbRegion src[3];
  IbRemote dst[3];
  IbRemote semaphore; ///< the peer's semaphore its signals raise
  /// Signals sent on this channel so far, shared by every link of one plan
  /// channel; null: the link's own.
  uint64_t *counter = nullptr;
  int planIndex = 0; ///< names the channel in errors
};

/// A port channel over `connection`, which must outlive it.
Status makeIbChannel(IbConnection *connection, const IbChannelSpec &spec,
                     std::unique_ptr<Transport> *out);

/// One connection per peer a rank reaches over IB verbs, all on `port`.
class IbNetwork {
public:
  /// Collective: every rank of `bootstrap` calls it, with the peers it
  /// reaches over IB (if a lists b, b lists a). The endpoints travel in one
  /// all-gather, the outcome in a second, which is also the barrier after
  /// which writes may leave. A rank that fails still takes part in both,
  /// so every rank returns: the one that failed with its reason, the
  /// others with an error naming it.
  static Status connect(Bootstrap &bootstrap, const std::vector<int> &peers,
                        const IbPort &port, const IbOptions &options,
                        std::unique_ptr<IbNetwork> *out);
  ~IbNetwork();
  /// The connection to `peer`, or null.
  IbConnection *connection(int peer) const;
  std::vector<int> peers() const;
  /// Where memory the peers write is registered (null without peers).
  IbDevice *device() const { return device_.get(); }

  /// The registration of GPU allocation `id` (the driver's buffer id: an
  /// allocation freed and made again at the same address is another one),
  /// [base, base + bytes): registered at the first acquire, kept until the
  /// last release. Registration pins memory and takes the HCA's time, so
  /// the executors of the communicator share one per allocation.
  Status acquire(void *base, uint64_t bytes, uint64_t id,
                 const DmaBufExporter &exportDmaBuf, IbRegion *out);
  /// Gives back one acquire of `region` (a slice of it will do).
  void release(const IbRegion &region);
  /// Registrations held now (for tests and logs).
  size_t registrations() const;

  /// Collective over `bootstrap`: every rank passes as many regions (an
  /// empty one where it has none) and gets out[r][i], rank r's i-th
  /// region as a peer's write names it.
  static Status exchange(Bootstrap &bootstrap, const std::vector<IbRegion> &mine,
                         std::vector<std::vector<IbRemote>> *out);
  /// Waits until every write queued so far on every connection completed
  /// (then it has landed at the peer): a reset quiesces before it zeroes
  /// what late writes would hit.
  Status quiesce();

private:
  IbNetwork() = default;
  std::unique_ptr<IbDevice> device_; // outlives the connections
  std::map<int, std::unique_ptr<IbConnection>> connections_;
  struct Registration {
    IbRegion region;
    int refs = 0;
  };
  mutable std::mutex registryMutex_;
  std::map<std::pair<uint64_t, uint64_t>, Registration> byAllocation_;
};

/// Collective over `bootstrap`, after a set-up that each rank tried
/// (`mine`: how it went): `mine` where it failed; else an error naming a
/// rank that failed ("rank 2 could not set up its `what`"); else ok, once
/// every rank got this far (a barrier).
Status agreeOnSetUp(Bootstrap &bootstrap, const Status &mine, const char *what);

/// A registered range (IbRegion or IbRemote: an address and a byte count
/// besides its keys) from `offset` on, at most `bytes` of it, clamped to
/// the range.
template <class Range>
Range sliceOf(const Range &range, uint64_t offset,
              uint64_t bytes = UINT64_MAX) {
  Range r = range;
  offset = std::min(offset, range.bytes);
  r.address += offset;
  r.bytes = std::min(bytes, range.bytes - offset);
  return r;
}

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_IBCONNECTION_H
