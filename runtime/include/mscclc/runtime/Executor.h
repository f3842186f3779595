//===- Executor.h - One program variant on one communicator ---*- C++ -*-===//
//
// An Executor holds everything a program needs on one rank for one
// (dtype, op): the loaded kernel, scratch, semaphores, persistent state
// (LL epochs, wait counters), the error record, the proxy FIFO, and one
// "buffer context" per pair of user buffers (the channel tables with the
// peers' mappings). Setting these up is collective (all ranks exchange
// handles); launching is not, and allocates, copies and synchronises
// nothing, so it can be captured in a CUDA graph.
//
// Collective steps happen on the first run, when the scratch must grow (a
// larger count) and when a plan whose channels touch the peers' user buffers
// meets a new pair of buffers. All ranks reach them together as long as
// they call with the same counts and change buffers at the same calls.
//
// CUDA graphs: set-up may run while the caller's stream is being captured
// (its copies go through a stream of the executor's own, and it never
// synchronises the device then). A graph keeps the scratch and channel
// tables of the launches it captured, so those are never freed before the
// executor: a larger scratch or an evicted buffer context leaves captured
// ones in place, and frees the others only once no kernel can use them.
//
// Staged runs (the stdlib's, for programs whose channels reach the peers'
// input or output, or that have port channels: Plan::stagedByStdlib): the
// kernel works on staging regions of the executor's scratch allocation
// instead of the caller's buffers (the one the peers reach; both with port
// channels), with a copy in before it and out after it, on the caller's
// stream. The peers' staging
// is part of their scratch, which is exchanged once per growth, so new
// caller buffers never need the peers: ranks may change buffers at
// different calls, as framework allocators do.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_EXECUTOR_H
#define MSCCLC_RUNTIME_EXECUTOR_H

#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/Proxy.h"
#include "mscclc/runtime/IbConnection.h"
#include "mscclc/runtime/TcpTransport.h"

#include "mscclc/device/KernelArgs.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mscclc::rt {

/// The kernel's error record, decoded.
struct DeviceError {
  MscclcErrorRecord record{};
  std::string message; ///< "" when record.code == 0 and the proxy is clean
};

/// Spin time-out of the kernels in ns (MSCCLC_TIMEOUT_MS, default 30000;
/// 0 = none); an error names a bad value (docs/settings.md).
Status kernelTimeoutNs(uint64_t *out);
/// The LL epoch every block starts from: 0, or MSCCLC_TEST_EPOCH_START (for
/// tests that run across the epoch's wrap-around).
Status firstEpoch(uint32_t *out);
/// Buffer pairs whose peer mappings an executor keeps
/// (MSCCLC_MAX_BUFFER_CONTEXTS, default 8); more evict the older ones.
Status maxContexts(size_t *out);

/// A PreMulSum call's scalar: one element of the call's type in device
/// memory (read when the kernels run), or, with `device` null, the value's
/// bytes (little-endian, zero-padded).
struct PreMulScalar {
  const void *device = nullptr;
  uint64_t hostBits = 0;
};

class Executor {
public:
  Executor(Communicator &comm, Program &program, std::string dtype,
           std::string redop, bool stageUserBuffers = false);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Collective: loads the kernel, allocates and exchanges semaphores.
  Status init();
  /// True when prepare() for these arguments would talk to the peers.
  bool needsCollectiveSetup(const void *input, void *output,
                            uint64_t count) const;
  /// May be collective (see the file comment); never enqueues work.
  Status prepare(const void *input, void *output, uint64_t count,
                 cudaStream_t stream);
  /// Enqueues the kernel (which also does avg's scaling), after the
  /// premulsum scaling of the input (`scalar` is needed then). prepare()
  /// must have run for these arguments, stream included.
  Status launch(const void *input, void *output, uint64_t count,
                cudaStream_t stream, const PreMulScalar *scalar = nullptr);
  /// Waits for `stream`, reads the error record and the proxy's errors.
  Status check(cudaStream_t stream, DeviceError *out);
  /// The error record's message ("" when clean) without waiting for the
  /// caller's streams: a copy on a stream of the executor's own, so a
  /// kernel that still waits does not hold it up.
  Status peekError(std::string *message);
  /// Collective: zeroes semaphores, counters, epochs, scratch, FIFO and the
  /// error record on every rank (after a device error).
  Status reset();

private:
  /// What tells a user buffer from one allocated later at the same address:
  /// the allocation's id, and the bytes from the pointer to the
  /// allocation's end (a port channel's puts are checked against them).
  struct BufferIdentity {
    uint64_t id = 0, extent = 0;
    bool operator==(const BufferIdentity &o) const {
      return id == o.id && extent == o.extent;
    }
  };
  struct Context {
    const void *input = nullptr;
    void *output = nullptr;
    BufferIdentity inputIdentity, outputIdentity; ///< reuse check
    void *tables = nullptr;             ///< device memory
    MscclcMemoryChannel *memoryChannels = nullptr;
    MscclcPortChannel *portChannels = nullptr;
    MscclcSwitchChannel *switchChannels = nullptr;
    std::vector<std::vector<PeerPointer>> peerUser; ///< [rank][0 in, 1 out]
    std::vector<std::unique_ptr<ProxyChannel>> proxyChannels;
    /// Port channels over a network: their links (TCP and IB verbs), and
    /// the TCP links' staging copiers (links go first: frames still queued
    /// name their copier).
    std::vector<std::unique_ptr<StagingCopier>> copiers;
    std::vector<std::unique_ptr<Transport>> links;
    /// The user buffers registered as TCP windows (peers on other nodes
    /// put into them).
    std::vector<uint32_t> windows;
    /// IB verbs: the user buffers' registrations here (input, output; an
    /// empty region where there is none) and, where peers reach them, the
    /// peers' ([rank][0 in, 1 out]).
    std::vector<IbRegion> ibRegions;
    std::vector<std::vector<IbRemote>> peerIbUser;
    /// This rank's multicast bindings of the context's buffers.
    std::vector<std::unique_ptr<MulticastRegion>> multicast;
    int index = 0;
    bool captured = false; ///< a CUDA graph holds a launch that uses it
  };
  /// A scratch allocation and the contexts built on it.
  struct ScratchGeneration {
    void *scratch = nullptr;
    uint64_t bytes = 0;
    std::vector<std::vector<PeerPointer>> peerScratch;
    uint32_t window = 0; ///< its TCP window (0: none)
    IbRegion ibRegion;   ///< its IB registration (empty: none)
    std::vector<std::unique_ptr<Context>> contexts;
    bool captured = false; ///< a CUDA graph holds a launch that uses it
  };

  /// Bytes of each part of the scratch allocation: the plan's scratch,
  /// then (staged runs) the staged input and output.
  struct ScratchLayout {
    uint64_t plan = 0, input = 0, output = 0;
    uint64_t total() const { return plan + input + output; }
  };
  ScratchLayout scratchNeed(uint64_t count) const;
  bool scratchFits(uint64_t count) const;
  /// The largest count whose plan scratch fits in `bytes`: the count the
  /// scratch is laid out for, so that every count up to it finds each
  /// chunk in the same bytes (docs/runtime.md, "Scratch").
  uint64_t layoutCountFor(uint64_t bytes, uint64_t atLeast) const;
  /// The buffers the kernel works on for the caller's (staging or not).
  const void *kernelInput(const void *input) const;
  void *kernelOutput(void *output) const;
  Status ensureScratch(uint64_t count);
  /// Collective: moves the scratch and its contexts aside for a larger one;
  /// frees what no graph holds once every rank's kernels are done with it.
  Status retireScratch();
  void freeGeneration(ScratchGeneration &g);
  /// Removes the contexts whose `captured` is as given from contexts_.
  std::vector<std::unique_ptr<Context>> takeContexts(bool captured);
  /// Drops buffer contexts no graph holds (after our kernels are done), so
  /// the peers' freed buffers can be mapped anew.
  void evictContexts();
  /// Synchronous set-up copies on the executor's own stream: a copy on the
  /// legacy stream would join a capture in progress on a blocking stream.
  Status zeroDevice(void *ptr, size_t bytes);
  Status copyToDevice(void *dst, const void *src, size_t bytes);
  /// Copies `bytes` of device memory into `slot` of readback_ on `stream`
  /// and waits for it (Readback says why the slot is pinned).
  Status readBack(void *slot, const void *device, size_t bytes,
                  cudaStream_t stream);
  /// Sets every block's LL epoch to firstEpoch().
  Status startEpochs();
  /// Collective: refuses, on every rank alike, a program that does not fit
  /// a GPU with every rank that shares it: thread blocks that cannot all be
  /// resident at once, or more streams than the GPU's hardware work queues
  /// (work behind a waiting kernel never starts). Either would hang.
  Status checkDeviceFit();
  /// Whether another rank runs on this rank's GPU.
  bool sharesGpu() const;
  /// The streams the proxy copies and signals on.
  size_t proxyStreamCount() const;
  /// The context for these buffers, built if there is none (`*built` is
  /// then set).
  Status contextFor(const void *input, void *output, Context **out,
                    bool *built = nullptr);
  /// Makes port channel `pc` (plan channel `c`) a link of `ctx` over the
  /// staged frames (TcpNetwork: sockets or ib staged rings).
  Status tcpLink(const PlanChannel &c, ProxyChannel *pc, uint64_t *counter,
                 const PeerPointer dst[3], Context *ctx);
  /// Makes port channel `pc` (plan channel `c`) an IB verbs link of `ctx`.
  Status ibLink(const PlanChannel &c, ProxyChannel *pc, uint64_t *counter,
                const PeerPointer dst[3], Context *ctx);
  /// Registers each of `local` (GPU memory; null or unknown: an empty
  /// region) from the pointer to its allocation's end, for IB verbs.
  Status ibRegister(const std::vector<void *> &local, std::vector<IbRegion> *out);
  void ibRelease(const std::vector<IbRegion> &regions);
  /// Collective: registers `local` (ibRegister) and learns every rank's
  /// region of the same kind ([rank]); `what` names it in errors.
  Status ibShare(void *local, IbRegion *mine, std::vector<IbRemote> *peers,
                 const char *what);
  /// The registered region, of ours or of `peer`'s that a channel of `ctx`
  /// may use, holding [address, address + bytes); empty: none.
  IbRegion ibLocal(const void *address, uint64_t bytes, const Context &ctx) const;
  IbRemote ibPeer(int peer, uint64_t address, uint64_t bytes,
                  const Context &ctx) const;
  Status buildContext(const void *input, void *output, Context *ctx);
  Status bindSwitchChannels(const void *input, void *output, Context *ctx,
                            std::vector<MscclcSwitchChannel> *table);
  /// Withdraws the contexts' proxy channels and frees them.
  void freeContexts(std::vector<std::unique_ptr<Context>> &contexts);
  Status drainLocal();
  /// Waits until the proxy has served the FIFO up to `head` and its copies
  /// are done.
  Status drainProxy(uint64_t head, double seconds);
  /// After a device error: waits until the proxy has served every trigger
  /// this rank's kernels pushed and its copies are done.
  Status drainAfterError(cudaStream_t stream);
  uint64_t allocationId(const void *ptr) const;
  BufferIdentity identify(const void *ptr) const;
  /// The buffer contexts are told apart by their buffers (peer mappings,
  /// or port channels that put from them); else one context serves all.
  bool contextsKeyedByBuffers() const;
  /// The key of the context for these buffers, and their identities.
  std::string contextKey(const void *input, const void *output,
                         BufferIdentity *in, BufferIdentity *out) const;
  /// The context built last is the one for these buffers.
  bool lastContextServes(const void *input, const void *output,
                         const BufferIdentity &in,
                         const BufferIdentity &out) const;

  Communicator &comm_;
  Program &program_;
  const Plan &plan_;
  const RankPlan &rankPlan_;
  std::string dtype_, redop_;
  size_t elemSize_ = 0;
  bool needPeerUser_ = false;
  bool peerInput_ = false, peerOutput_ = false; ///< some channel reaches them
  bool staged_ = false;
  /// premulsum: the input is always staged, scaled on the way in.
  bool premul_ = false;
  bool stageIn_ = false, stageOut_ = false; ///< staged runs: which buffers

  Module module_;
  CUfunction kernel_ = nullptr;
  CUfunction premulKernel_ = nullptr;

  uint64_t *semaphores_ = nullptr; ///< nMem + nPort inbound semaphores
  std::vector<std::vector<PeerPointer>> peerSemaphores_;
  mscclc_u32 *blockEpoch_ = nullptr;
  mscclc_u64 *waitCounters_ = nullptr;
  MscclcErrorRecord *error_ = nullptr;
  /// Pinned host memory that the device's error record and FIFO head are
  /// read back into. A copy to pageable memory would be synchronous: it
  /// blocks inside the driver until the caller's stream (a spinning
  /// kernel) is done, holding a lock that the proxy's CUDA calls need.
  /// One slot per reader: check() and drainAfterError() on the caller's
  /// thread, peekError() on a watchdog's.
  struct Readback {
    MscclcErrorRecord checked, peeked;
    uint64_t head;
  };
  Readback *readback_ = nullptr;

  void *scratch_ = nullptr;
  ScratchLayout layout_; ///< capacities of scratch_'s parts (total: its size)
  /// The count the plan's scratch part is laid out for (kernel argument
  /// scratchCount): every launch at a count up to it uses that layout.
  uint64_t scratchCount_ = 0;
  std::vector<std::vector<PeerPointer>> peerScratch_;

  // Port channels.
  MscclcTrigger *triggers_ = nullptr; ///< pinned host, mapped
  volatile uint64_t *tail_ = nullptr; ///< pinned host, mapped
  uint64_t *head_ = nullptr;          ///< device
  MscclcTrigger *devTriggers_ = nullptr; ///< device view of triggers_
  uint64_t *devTail_ = nullptr;          ///< device view of tail_
  uint32_t fifoCapacity_ = 0;
  std::unique_ptr<ProxyFifo> proxyFifo_;
  Proxy *proxy_ = nullptr;
  std::vector<cudaStream_t> portStreams_;
  bool fresh_ = true; ///< no prepare() since init()
  std::vector<uint64_t> signalCounters_;

  // Port channels to other nodes (or all, MSCCLC_TRANSPORT=tcp).
  TcpNetwork *tcp_ = nullptr; ///< the communicator's; null: none used
  /// The ranks this one's plan reaches over staged frames (tcp, ib staged).
  std::vector<int> tcpPeers_;
  uint32_t semaphoreWindow_ = 0, scratchWindow_ = 0;

  // Port channels over IB verbs (to other nodes, or all: MSCCLC_TRANSPORT=ib).
  IbNetwork *ib_ = nullptr; ///< the communicator's; null: none used
  /// Our semaphores' and scratch's registrations (empty: none), and every
  /// rank's as its writes name them ([rank]).
  IbRegion ibSemaphores_, ibScratch_;
  std::vector<IbRemote> peerIbSemaphores_, peerIbScratch_;

  std::map<std::string, std::unique_ptr<Context>> contexts_;
  /// Older scratch (and its contexts) kept while a graph may still use it.
  /// Captured contexts stay in contexts_ (eviction leaves them).
  std::vector<ScratchGeneration> keptScratch_;
  bool scratchCaptured_ = false;
  bool capturing_ = false; ///< prepare()'s stream is being captured
  Context *last_ = nullptr;
  int nextContext_ = 0;
  std::vector<int> freeContextIndices_; ///< of freed contexts: proxy ids to reuse
  uint64_t timeoutNs_ = 0;
  cudaStream_t peekStream_ = nullptr;  ///< peekError's (non-blocking)
  cudaStream_t setupStream_ = nullptr; ///< set-up copies (non-blocking)
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_EXECUTOR_H
