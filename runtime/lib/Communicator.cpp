//===- Communicator.cpp - Ranks, devices and memory exchange --------------===//

#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Executor.h"
#include "mscclc/runtime/Nodes.h"
#include "mscclc/runtime/Proxy.h"
#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/IbConnection.h"
#include "mscclc/runtime/IbRing.h"
#include "mscclc/runtime/TcpStaging.h"
#include "mscclc/runtime/TcpTransport.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>
#include <thread>
#include <unistd.h>

namespace mscclc::rt {

namespace {

std::mutex liveMutex;
std::set<Communicator *> liveComms;

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

uint64_t hostHash() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string id = host;
  // The boot id tells apart containers that share a host name.
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string bootId;
  if (boot >> bootId)
    id += bootId;
  return fnv1a(id);
}

/// MSCCLC_NODE_OF_RANK as given ("" where unset): assignNodes parses it.
const char *nodeSpec() {
  std::optional<RawSetting> spec = get(setting::NodeOfRank);
  return spec ? spec->text : "";
}

/// MSCCLC_TRANSPORT as the table spells it (after checkTransportVariable):
/// "TCP" and "tcp" are one choice, so their hashes must agree.
std::string transportSpec() {
  return std::string(getOrDefault(setting::Transport));
}

/// What a rank publishes for one pointer in exchange().
struct WirePointer {
  cudaIpcMemHandle_t handle;
  uint64_t raw;    ///< the pointer itself (same-process peers use it)
  uint64_t offset; ///< from the allocation base
  uint64_t extent; ///< bytes from the pointer to the allocation end
  int32_t valid;
  int32_t noIpc; ///< valid, but CUDA IPC cannot share it (cuMem memory)
};

} // namespace

Status Communicator::create(const UniqueId &id, int rank, int nranks,
                            int device, std::unique_ptr<Communicator> *out,
                            int nodeLabel) {
  std::unique_ptr<Communicator> comm(new Communicator());
  MSCCLC_TRY(
      comm->init(id, rank, nranks, device, nodeLabel)
          .context(fmt::format("initialising rank {} of {}", rank, nranks)));
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    liveComms.insert(comm.get());
  }
  *out = std::move(comm);
  return Status::ok();
}

Status Communicator::createAll(const std::vector<int> &devices,
                               std::vector<std::unique_ptr<Communicator>> *out) {
  int n = int(devices.size());
  if (n < 1)
    return invalidArgument("createAll needs at least one device");
  // A device may be listed more than once: its ranks then share the GPU
  // (docs/runtime.md, "Several ranks on one GPU").
  // The rendezvous stays inside this process: a loopback root.
  UniqueId id;
  MSCCLC_TRY(createUniqueId(&id));
  std::vector<std::unique_ptr<Communicator>> comms(static_cast<size_t>(n));
  std::vector<Status> statuses(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      statuses[size_t(r)] = create(id, r, n, devices[size_t(r)], &comms[size_t(r)]);
    });
  for (auto &t : threads)
    t.join();
  for (const Status &s : statuses)
    if (!s.isOk())
      return s;
  *out = std::move(comms);
  return Status::ok();
}

Status Communicator::placeNodes() {
  // Every rank sees the same infos, so all refuse alike.
  std::vector<uint64_t> hostOf;
  std::vector<int> labels;
  for (const PeerInfo &p : peers_) {
    int r = int(hostOf.size());
    if (p.nodeSpecHash != peers_[0].nodeSpecHash)
      return invalidArgument(fmt::format(
          "rank {}'s MSCCLC_NODE_OF_RANK differs from rank 0's (this rank's "
          "is '{}'): every rank must be given the same",
          r, nodeSpec()));
    if (p.transportHash != peers_[0].transportHash)
      return invalidArgument(fmt::format(
          "rank {}'s MSCCLC_TRANSPORT differs from rank 0's (this rank's is "
          "'{}'): every rank must be given the same",
          r, transportSpec()));
    hostOf.push_back(p.hostHash);
    labels.push_back(p.nodeLabel);
  }
  // A split keeps its parent's nodes, whose ranks MSCCLC_NODE_OF_RANK
  // numbers: its list is not this communicator's.
  if (std::any_of(labels.begin(), labels.end(), [](int l) { return l >= 0; }))
    return assignNodesFromLabels(hostOf, labels,
                                 "the placement given at initialisation "
                                 "(mscclcCommInitRankOnNode)",
                                 &nodeOf_);
  return assignNodes(hostOf, nodeSpec(), &nodeOf_);
}

Status Communicator::init(const UniqueId &id, int rank, int nranks,
                          int device, int nodeLabel) {
  int count = 0;
  if (!cudaDeviceAvailable(&count))
    return Status(Code::CudaError, "no " MSCCLC_GPU_API " device is available");
  if (device < 0 || device >= count)
    return invalidArgument(
        fmt::format("device {} does not exist ({} devices)", device, count));
  rank_ = rank;
  nranks_ = nranks;
  device_ = device;
  worldId_ = std::hash<std::string_view>()(
      std::string_view(id.bytes, sizeof(id.bytes)));
  DeviceGuard guard(device);
  MSCCLC_CUDA_CHECK(cudaFree(nullptr)); // create the primary context
  void *flag = nullptr;
  MSCCLC_CUDA_CHECK(cudaHostAlloc(&flag, sizeof(uint32_t),
                                  cudaHostAllocMapped | cudaHostAllocPortable));
  abortHost_ = static_cast<volatile uint32_t *>(flag);
  *abortHost_ = 0;
  void *onDevice = nullptr;
  MSCCLC_CUDA_CHECK(cudaHostGetDevicePointer(&onDevice, flag, 0));
  abortDevice_ = static_cast<const volatile uint32_t *>(onDevice);

  PeerInfo mine;
  mine.hostHash = hostHash();
  mine.pid = int32_t(getpid());
  mine.device = device;
  MSCCLC_TRY(deviceArch(device, &mine.arch));
  MSCCLC_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.busId, sizeof(mine.busId), device));
  MSCCLC_TRY(checkTransportVariable());
  mine.nodeSpecHash = fnv1a(nodeSpec());
  mine.transportHash = fnv1a(transportSpec());
  mine.nodeLabel = nodeLabel;

  MSCCLC_TRY(Bootstrap::create(id, rank, nranks, &bootstrap_));
  peers_.assign(size_t(nranks), PeerInfo());
  peers_[size_t(rank)] = mine;
  MSCCLC_TRY(bootstrap_->allGather(peers_.data(), sizeof(PeerInfo)));
  MSCCLC_TRY(placeNodes());
  MSCCLC_TRY(learnIbReadiness());
  MSCCLC_TRY(logTransports());
  for (int r = 0; r < nranks; ++r) {
    if (r == rank || !sameHost(r))
      continue;
    // Processes share a GPU by time slicing: the kernels of two ranks in
    // different processes never run at once, and each spins until the
    // other's signals arrive. Ranks in one process share it for real.
    if (sameGpu(r) && !sameProcess(r))
      return unsupported(fmt::format(
          "ranks {} and {} use GPU {} from different processes: ranks that "
          "share a GPU must live in one process (mscclcCommInitAll with the "
          "device listed once per rank)",
          rank, r, mine.busId));
    if (sameProcess(r))
      MSCCLC_TRY(enablePeerAccess(peers_[size_t(r)].device));
  }
  MSCCLC_LOG(Info, "rank {}/{} on device {} ({}, {}), node {} of {}, ready",
             rank, nranks, device, mine.busId, archName(mine.arch), node(rank),
             describeNodes(nodeOf_));
  return Status::ok();
}

Communicator::~Communicator() {
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    liveComms.erase(this);
  }
  {
    std::lock_guard<std::mutex> lock(executorMutex_);
    executors_.clear();
  }
  tcp_.reset();
  ib_.reset();
  proxy_.reset();
  DeviceGuard guard(device_);
  for (auto &entry : mappings_)
    if (entry.second.base)
      MSCCLC_CUDA_WARN(cudaIpcCloseMemHandle(entry.second.base));
  if (abortHost_)
    MSCCLC_CUDA_WARN(cudaFreeHost(const_cast<uint32_t *>(abortHost_)));
}

void Communicator::abort() {
  *abortHost_ = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

std::vector<Communicator *> Communicator::live() {
  std::lock_guard<std::mutex> lock(liveMutex);
  return std::vector<Communicator *>(liveComms.begin(), liveComms.end());
}

void Communicator::dropExecutors(uint64_t programId) {
  std::string prefix =
      fmt::format("{}/", static_cast<unsigned long long>(programId));
  std::lock_guard<std::mutex> lock(executorMutex_);
  for (auto it = executors_.begin(); it != executors_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) == 0)
      it = executors_.erase(it);
    else
      ++it;
  }
}

bool Communicator::sameHost(int r) const {
  return peers_[size_t(r)].hostHash == peers_[size_t(rank_)].hostHash;
}

bool Communicator::sameGpu(int r) const {
  return sameHost(r) &&
         strcmp(peers_[size_t(r)].busId, peers_[size_t(rank_)].busId) == 0;
}

bool Communicator::sameProcess(int r) const {
  return sameHost(r) && peers_[size_t(r)].pid == peers_[size_t(rank_)].pid;
}

Status Communicator::enablePeerAccess(int peerDevice) {
  if (peerDevice == device_)
    return Status::ok();
  int can = 0;
  MSCCLC_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device_, peerDevice));
  if (!can)
    return unsupported(fmt::format(
        "device {} cannot access device {} as a peer", device_, peerDevice));
  DeviceGuard guard(device_);
  cudaError_t err = cudaDeviceEnablePeerAccess(peerDevice, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return Status::ok();
  }
  MSCCLC_CUDA_CHECK(err);
  return Status::ok();
}

Status Communicator::exchange(const std::vector<void *> &local,
                              std::vector<std::vector<PeerPointer>> *out,
                              const std::function<void()> &evictStale) {
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  DeviceGuard guard(device_);
  size_t n = local.size();
  std::vector<WirePointer> all(n * size_t(nranks_));
  memset(all.data(), 0, all.size() * sizeof(WirePointer));
  for (size_t i = 0; i < n; ++i) {
    WirePointer &w = all[size_t(rank_) * n + i];
    if (!local[i])
      continue;
    CUdeviceptr base = 0;
    size_t size = 0;
    MSCCLC_CUDA_CHECK(api->memGetAddressRange(
        &base, &size, reinterpret_cast<CUdeviceptr>(local[i])));
    // Peers in this process use the pointer itself; others need an IPC
    // handle, which cuMem allocations (mscclcMemAlloc) do not have. That is
    // reported after the allGather, on every rank, rather than here, where
    // returning would leave the others waiting.
    if (cudaIpcGetMemHandle(&w.handle, reinterpret_cast<void *>(base)) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      w.noIpc = 1;
    }
    w.raw = reinterpret_cast<uint64_t>(local[i]);
    w.offset = w.raw - uint64_t(base);
    w.extent = uint64_t(base) + size - w.raw;
    w.valid = 1;
  }
  MSCCLC_TRY(bootstrap_->allGather(all.data() + 0, n * sizeof(WirePointer)));

  out->assign(size_t(nranks_), std::vector<PeerPointer>(n));
  for (int r = 0; r < nranks_; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const WirePointer &w = all[size_t(r) * n + i];
      PeerPointer &p = (*out)[size_t(r)][i];
      if (!w.valid)
        continue;
      p.extent = w.extent;
      p.remote = w.raw;
      // Peers on other nodes are reached through a network transport,
      // which names their memory by its address there (p.remote).
      if (r != rank_ && !sameNode(r))
        continue;
      if (r == rank_ || sameProcess(r)) {
        p.ptr = reinterpret_cast<void *>(w.raw);
        continue;
      }
      if (w.noIpc)
        return unsupported(fmt::format(
            "rank {}'s buffer {} cannot be shared through CUDA IPC (memory "
            "from cuMemCreate or mscclcMemAlloc): across processes, channels "
            "reach peers' user buffers only in cudaMalloc memory",
            r, reinterpret_cast<void *>(w.raw)));
      std::string key = std::to_string(r) + "/" +
                        std::string(reinterpret_cast<const char *>(&w.handle),
                                    sizeof(w.handle));
      std::unique_lock<std::mutex> lock(mappingMutex_);
      auto found = mappings_.find(key);
      if (found == mappings_.end()) {
        void *base = nullptr;
        cudaError_t err = cudaIpcOpenMemHandle(&base, w.handle,
                                               cudaIpcMemLazyEnablePeerAccess);
        if (err == cudaErrorAlreadyMapped) {
          (void)cudaGetLastError();
          // The driver maps an allocation once per process. Either a
          // neighbour in the same driver allocation is mapped already (use
          // that mapping if it covers this buffer), or a stale mapping of a
          // buffer the peer freed is still open (drop unused mappings and
          // retry once).
          void *inside = findCovering(r, w.raw - w.offset, w.offset + w.extent,
                                      &p.mapBase);
          if (inside) {
            p.ptr = static_cast<char *>(inside) + w.offset;
            continue;
          }
          if (evictStale) {
            lock.unlock();
            evictStale();
            lock.lock();
            err = cudaIpcOpenMemHandle(&base, w.handle,
                                       cudaIpcMemLazyEnablePeerAccess);
          }
          if (err == cudaErrorAlreadyMapped) {
            (void)cudaGetLastError();
            return Status(
                Code::CudaError,
                fmt::format("cudaIpcOpenMemHandle: rank {}'s buffer at "
                            "{:#x} is part of a CUDA allocation this "
                            "process has mapped already for another "
                            "buffer (the driver packs allocations "
                            "under 2 MiB): allocate buffers that peers "
                            "access with at least 2 MiB each, or carve "
                            "them from one allocation",
                            r, static_cast<unsigned long long>(w.raw)));
          }
        }
        MSCCLC_CUDA_CHECK(err);
        Mapping m;
        m.base = base;
        m.peerBase = w.raw - w.offset;
        m.peer = r;
        found = mappings_.emplace(key, m).first;
        mappingKeys_[base] = key;
      }
      Mapping &m = found->second;
      ++m.refs;
      p.ptr = static_cast<char *>(m.base) + w.offset;
      p.mapBase = m.base;
    }
  }
  return Status::ok();
}

void *Communicator::findCovering(int peer, uint64_t peerPtr, uint64_t bytes,
                                 void **mapBase) {
  const DriverApi *api = nullptr;
  if (!driverApi(&api).isOk())
    return nullptr;
  for (auto &entry : mappings_) {
    Mapping &m = entry.second;
    if (m.peer != peer || !m.base)
      continue;
    CUdeviceptr localBase = 0;
    size_t localSize = 0;
    if (api->memGetAddressRange(&localBase, &localSize,
                                reinterpret_cast<CUdeviceptr>(m.base)) !=
        CUDA_SUCCESS)
      continue;
    // The local mapping mirrors the peer's allocation byte for byte.
    int64_t delta = int64_t(peerPtr - m.peerBase);
    uint64_t local = reinterpret_cast<uint64_t>(m.base) + uint64_t(delta);
    if (local >= uint64_t(localBase) &&
        local + bytes <= uint64_t(localBase) + localSize) {
      ++m.refs;
      *mapBase = m.base;
      return reinterpret_cast<void *>(local);
    }
  }
  return nullptr;
}

void Communicator::release(const std::vector<std::vector<PeerPointer>> &ptrs) {
  DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(mappingMutex_);
  for (const auto &row : ptrs) {
    for (const PeerPointer &p : row) {
      if (!p.mapBase)
        continue; // our own or a same-process pointer
      auto key = mappingKeys_.find(p.mapBase);
      if (key == mappingKeys_.end())
        continue;
      auto m = mappings_.find(key->second);
      if (m != mappings_.end() && --m->second.refs <= 0) {
        MSCCLC_CUDA_WARN(cudaIpcCloseMemHandle(m->second.base));
        mappings_.erase(m);
        mappingKeys_.erase(key);
      }
    }
  }
}

Status Communicator::proxy(Proxy **out) {
  std::lock_guard<std::mutex> lock(proxyMutex_);
  if (!proxy_) {
    proxy_ = std::make_unique<Proxy>(device_, rank_);
    MSCCLC_TRY(proxy_->start());
  }
  *out = proxy_.get();
  return Status::ok();
}

Status Communicator::transportBetween(int a, int b, TransportKind *out,
                                      std::string *why) const {
  return chooseTransport(node(a) == node(b), ibAbility_[size_t(a)],
                         ibAbility_[size_t(b)], out, why);
}

namespace {
/// "1, 2, 5"
std::string rankList(const std::vector<int> &ranks) {
  std::string list;
  for (int r : ranks)
    list += (list.empty() ? "" : ", ") + std::to_string(r);
  return list.empty() ? "none" : list;
}
} // namespace

Status Communicator::learnIbReadiness() {
  ibAbility_.assign(size_t(nranks_), IbAbility());
  bool severalNodes = false;
  for (int r = 0; r < nranks_; ++r)
    severalNodes |= node(r) != node(0);
  // Every rank sees the same nodes and MSCCLC_TRANSPORT: all gather or none.
  if (!transportMayUseIb(severalNodes))
    return Status::ok();
  IbOptions options;
  MSCCLC_TRY(ibOptionsFromEnv(&options));
  // Registration is what fails where the HCA cannot reach GPU memory: try
  // it on memory allocated as the executors allocate theirs.
  void *memory = nullptr;
  MSCCLC_CUDA_CHECK(cudaMalloc(&memory, kIpcGranularity));
  IbReadiness mine = findIbReadiness(probeIbDevices(), options, memory,
                                     kIpcGranularity, cudaDmaBufExporter());
  MSCCLC_CUDA_CHECK(cudaFree(memory));
  ibPort_ = mine.port;
  ibAbility_[size_t(rank_)] = mine.ability();
  MSCCLC_TRY(bootstrap_->allGather(ibAbility_.data(), sizeof(IbAbility)));
  if (mine.ready)
    MSCCLC_LOG(Info, "rank {}: IB verbs ready on {}", rank_, mine.detail);
  else if (mine.hasPort)
    MSCCLC_LOG(Info, "rank {}: IB port {}, but its GPU memory does not "
               "register ({}); its port channels over IB stage through "
               "pinned host memory (ib staged)",
               rank_, describePorts({mine.port}), mine.detail);
  else
    MSCCLC_LOG(Info, "rank {}: no IB verbs ({}); its port channels to other "
               "nodes use tcp", rank_, mine.detail);
  std::vector<int> noPort;
  for (int r = 0; r < nranks_; ++r)
    if (!ibAbility_[size_t(r)].port)
      noPort.push_back(r);
  // Every rank gathered the same abilities: all refuse alike. A port is
  // enough: GPU memory that does not register is staged.
  if (transportRequiresIb() && !noPort.empty())
    return unsupported(fmt::format(
        "MSCCLC_TRANSPORT=ib, but rank(s) {} have no IB port (each one's "
        "log says why{}); unset it to let those ranks use tcp",
        rankList(noPort), mine.hasPort ? "" : "; this rank's: " + mine.detail));
  return Status::ok();
}

Status Communicator::logTransports() const {
  // Peers grouped by transport and reason: one line each.
  std::map<std::pair<TransportKind, std::string>, std::vector<int>> groups;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_)
      continue;
    TransportKind k;
    std::string why;
    MSCCLC_TRY(transportBetween(rank_, r, &k, &why));
    if (k != TransportKind::CopyEngine)
      groups[{k, why}].push_back(r);
  }
  for (const auto &[key, peers] : groups)
    MSCCLC_LOG(Info, "rank {}: port channels to rank{} {} over {} ({})", rank_,
               peers.size() == 1 ? "" : "s", rankList(peers),
               transportName(key.first), key.second);
  return Status::ok();
}

Status Communicator::ibNetwork(IbNetwork **out) {
  std::lock_guard<std::mutex> lock(ibMutex_);
  if (ib_) {
    *out = ib_.get();
    return Status::ok();
  }
  std::vector<int> peers;
  for (int r = 0; r < nranks_; ++r) {
    TransportKind k;
    MSCCLC_TRY(transportBetween(rank_, r, &k));
    if (r != rank_ && k == TransportKind::Ib)
      peers.push_back(r);
  }
  IbOptions options;
  MSCCLC_TRY(ibOptionsFromEnv(&options));
  MSCCLC_TRY(IbNetwork::connect(*bootstrap_, peers, ibPort_, options, &ib_)
                 .context(fmt::format("rank {}: connecting IB verbs", rank_)));
  MSCCLC_LOG(Info, "rank {}: IB verbs on {} to rank{} {}", rank_,
             describePorts({ibPort_}), peers.size() == 1 ? "" : "s",
             rankList(peers));
  *out = ib_.get();
  return Status::ok();
}

Status Communicator::tcpNetwork(TcpNetwork **out) {
  std::lock_guard<std::mutex> lock(tcpMutex_);
  if (tcp_) {
    *out = tcp_.get();
    return Status::ok();
  }
  // Every rank chooses alike (init compared MSCCLC_TRANSPORT), so the
  // peer lists match, and all or none set up rings.
  std::vector<int> sockets, rings;
  bool anyRings = false;
  for (int a = 0; a < nranks_; ++a)
    for (int b = a + 1; b < nranks_; ++b) {
      TransportKind k;
      MSCCLC_TRY(transportBetween(a, b, &k));
      if (k == TransportKind::IbStaged)
        anyRings = true;
      if (a != rank_ && b != rank_)
        continue;
      int peer = a == rank_ ? b : a;
      if (k == TransportKind::Tcp)
        sockets.push_back(peer);
      else if (k == TransportKind::IbStaged)
        rings.push_back(peer);
    }
  TcpOptions options;
  MSCCLC_TRY(tcpOptionsFromEnv(&options));
  options.staging = cudaStagingBackend(device_);
  IbOptions ibOptions;
  MSCCLC_TRY(ibOptionsFromEnv(&ibOptions));
  DeviceGuard guard(device_);
  FrameStreams streams;
  MSCCLC_TRY(connectSocketStreams(*bootstrap_, sockets, options.timeoutSeconds,
                                  &streams)
                 .context(fmt::format("rank {}: connecting the tcp transport",
                                      rank_)));
  if (anyRings)
    MSCCLC_TRY(connectIbRingStreams(*bootstrap_, rings, ibPort_, ibOptions,
                                    &streams)
                   .context(fmt::format("rank {}: connecting ib staged rings",
                                        rank_)));
  MSCCLC_TRY(TcpNetwork::over(rank_, std::move(streams), options, &tcp_));
  MSCCLC_LOG(Info,
             "rank {}: staged frames to rank{} {} over tcp and to rank{} {} "
             "over ib staged rings of {} bytes (GPU memory staged through "
             "pinned host memory, {} slices of {} bytes in flight per "
             "direction)",
             rank_, sockets.size() == 1 ? "" : "s", rankList(sockets),
             rings.size() == 1 ? "" : "s", rankList(rings),
             static_cast<unsigned long long>(ibOptions.ringBytes),
             options.stagingSlots,
             static_cast<unsigned long long>(options.sliceBytes));
  *out = tcp_.get();
  return Status::ok();
}

} // namespace mscclc::rt
