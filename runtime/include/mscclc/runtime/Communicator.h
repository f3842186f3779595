//===- Communicator.h - Ranks, devices and memory exchange ----*- C++ -*-===//
//
// A communicator is one rank of a group: its device, the TCP bootstrap to
// the other ranks, what it knows of them (host, process, device), the proxy
// thread serving its port channels, and the executors of the programs it
// ran. Two process models:
//  - one process per GPU: every process calls create() with the same
//    UniqueId (mpirun, torchrun or plain processes);
//  - one process, several GPUs: createAll() makes every communicator in one
//    call (it runs the rendezvous on threads of its own).
//
// Memory is exchanged through CUDA IPC handles of whole allocations (base +
// offset); peers in the same process use the pointer itself with peer access
// enabled. Opened mappings are shared and reference counted.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_COMMUNICATOR_H
#define MSCCLC_RUNTIME_COMMUNICATOR_H

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/IbVerbs.h"
#include "mscclc/runtime/Transport.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mscclc::rt {

class Executor;
class Proxy;
class IbNetwork;
class TcpNetwork;

struct PeerInfo {
  uint64_t hostHash = 0;
  int32_t pid = 0;
  int32_t device = -1;
  int32_t arch = 0;
  char busId[32] = {};
  /// Of MSCCLC_NODE_OF_RANK's value: every rank must place ranks alike.
  uint64_t nodeSpecHash = 0;
  /// Of MSCCLC_TRANSPORT's value: every rank must choose transports alike
  /// (which ranks take part in the TCP set-up follows from it).
  uint64_t transportHash = 0;
  /// The node the creator gave this rank (a split's parent node), -1 if
  /// none: then nodes come from MSCCLC_NODE_OF_RANK or the hosts.
  int32_t nodeLabel = -1;
};

/// A pointer a peer exchanged, as this rank sees it.
struct PeerPointer {
  void *ptr = nullptr;  ///< Usable on this rank's device; null if none.
  /// The pointer in its owner's address space (0 if none): what a network
  /// transport names, for peers on other nodes, whose memory is not mapped.
  uint64_t remote = 0;
  uint64_t extent = 0;  ///< Bytes from ptr to the end of its allocation.
  void *mapBase = nullptr; ///< The IPC mapping holding ptr (null: none).
};

/// Memory that peers map through CUDA IPC is allocated in multiples of this:
/// the driver packs smaller cudaMalloc allocations together, and a process
/// can map such a shared piece only once.
constexpr size_t kIpcGranularity = size_t(2) << 20;

class Communicator {
public:
  /// `nodeLabel` >= 0 places the rank on that node (the same number on
  /// every rank of a node, all ranks given one or none); -1 takes nodes
  /// from MSCCLC_NODE_OF_RANK or the hosts (Nodes.h).
  static Status create(const UniqueId &id, int rank, int nranks, int device,
                       std::unique_ptr<Communicator> *out, int nodeLabel = -1);
  /// One communicator per device of `devices`, rank i on devices[i].
  static Status createAll(const std::vector<int> &devices,
                          std::vector<std::unique_ptr<Communicator>> *out);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int device() const { return device_; }
  int arch() const { return peers_[size_t(rank_)].arch; }
  bool sameProcess(int r) const;
  bool sameHost(int r) const;
  /// Rank r's node (Nodes.h): its host, or its virtual node where
  /// MSCCLC_NODE_OF_RANK splits hosts. Channels inside a node map memory;
  /// between nodes they need a network transport.
  int node(int r) const { return nodeOf_[size_t(r)]; }
  bool sameNode(int r) const { return node(r) == node(rank_); }
  const std::vector<int> &nodes() const { return nodeOf_; }
  /// How a port channel between ranks a and b travels (chooseTransport,
  /// from whether they share a node and what each can do with IB verbs;
  /// the same answer on every rank). `*why`: what decided it, seen from a.
  Status transportBetween(int a, int b, TransportKind *out,
                          std::string *why = nullptr) const;
  /// Whether rank r runs on this rank's GPU (several ranks may share one).
  bool sameGpu(int r) const;
  /// Whether `other` belongs to the same communicator (made from the same
  /// unique id).
  bool sameWorld(const Communicator &other) const {
    return worldId_ == other.worldId_;
  }
  Bootstrap &bootstrap() { return *bootstrap_; }

  /// Collective: every rank passes `local.size()` device pointers (the same
  /// count on every rank; null allowed). Returns out[r][i] = rank r's i-th
  /// pointer mapped for this rank (our own for r == rank()). Every mapped
  /// pointer must be given back with release().
  /// `evictStale`, when given, releases mappings the caller no longer
  /// needs; it is called (locally, not collectively) when the driver reports
  /// an allocation as mapped already, and the open is retried once.
  Status exchange(const std::vector<void *> &local,
                  std::vector<std::vector<PeerPointer>> *out,
                  const std::function<void()> &evictStale = nullptr);
  /// Drops the mappings exchange() made for `pointers` (closes IPC mappings
  /// no longer used).
  void release(const std::vector<std::vector<PeerPointer>> &pointers);

  /// The proxy thread serving this rank's port channels (started lazily).
  Status proxy(Proxy **out);
  /// Collective the first time (every rank calls it, as Executor::init
  /// does for a program with TCP or ib staged port channels): connects to
  /// every rank transportBetween() sends over TCP (sockets) or ib staged
  /// (IB rings), with GPU memory staged through pinned host memory. Later
  /// calls return the same network.
  Status tcpNetwork(TcpNetwork **out);
  /// The same for the ranks transportBetween() sends over IB verbs.
  Status ibNetwork(IbNetwork **out);

  /// Ends every wait of this rank's kernels, running or future (they record
  /// "aborted"); the communicator then refuses new launches. Local: each
  /// rank whose kernels may wait aborts its own communicator.
  void abort();
  bool aborted() const { return *abortHost_ != 0; }
  /// The flag kernels poll (host memory mapped into the device).
  const volatile uint32_t *abortFlag() const { return abortDevice_; }

  /// Executors of programs run on this communicator, keyed by the program's
  /// id and variant (dtype, op).
  std::mutex &executorMutex() { return executorMutex_; }
  std::map<std::string, std::unique_ptr<Executor>> &executors() {
    return executors_;
  }
  /// Drops every executor of program `programId` (called when a program is
  /// destroyed).
  void dropExecutors(uint64_t programId);

  /// Every live communicator of this process (for dropExecutors).
  static std::vector<Communicator *> live();

private:
  Communicator() = default;
  Status init(const UniqueId &id, int rank, int nranks, int device,
              int nodeLabel);
  /// nodeOf_ from the peers' infos, alike on every rank.
  Status placeNodes();
  uint64_t worldId_ = 0; ///< hash of the unique id
  Status enablePeerAccess(int peerDevice);
  /// Collective (init): whether each rank can serve port channels over IB
  /// verbs (findIbReadiness), where MSCCLC_TRANSPORT and the nodes may
  /// want it.
  Status learnIbReadiness();
  /// Logs (INFO) which transport serves each peer, and why.
  Status logTransports() const;

  int rank_ = 0;
  int nranks_ = 0;
  int device_ = -1;
  std::unique_ptr<Bootstrap> bootstrap_;
  std::vector<PeerInfo> peers_;
  std::vector<int> nodeOf_;
  std::vector<IbAbility> ibAbility_; ///< per rank (learnIbReadiness)
  IbPort ibPort_;                    ///< this rank's, when it has one

  struct Mapping {
    void *base = nullptr;    ///< local address of the opened allocation
    uint64_t peerBase = 0;   ///< the same allocation in the peer's space
    int peer = -1;
    int refs = 0;
  };
  /// A pointer into a mapping already open for `peer` that covers
  /// [peerPtr, peerPtr + bytes), or null (see exchange()).
  void *findCovering(int peer, uint64_t peerPtr, uint64_t bytes,
                     void **mapBase);
  std::mutex mappingMutex_;
  /// Key: peer rank + the 64 bytes of the IPC handle.
  std::map<std::string, Mapping> mappings_;
  std::map<void *, std::string> mappingKeys_; ///< opened base -> key

  std::mutex executorMutex_;
  std::map<std::string, std::unique_ptr<Executor>> executors_;

  std::mutex proxyMutex_;
  std::unique_ptr<Proxy> proxy_;
  /// Destroyed before the proxy: its connections end first.
  std::mutex tcpMutex_;
  std::unique_ptr<TcpNetwork> tcp_;
  std::mutex ibMutex_;
  std::unique_ptr<IbNetwork> ib_;

  volatile uint32_t *abortHost_ = nullptr;
  const volatile uint32_t *abortDevice_ = nullptr;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_COMMUNICATOR_H
