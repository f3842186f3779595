//===- Executor.cpp - One program variant on one communicator -------------===//

#include "mscclc/runtime/Executor.h"
#include "mscclc/runtime/DeviceErrorText.h"
#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Nodes.h"
#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/TcpTransport.h"

#include "mscclc/device/Layout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

namespace mscclc::rt {

namespace {

constexpr uint32_t kFifoCapacity = 1024;
constexpr int kMaxProxyIds = 1 << 16; // 16-bit proxyId in triggers

uint64_t roundScratch(uint64_t need) {
  // Powers of two while small (few regrowths in a size sweep), 2 MiB steps
  // for large counts (no doubling of a GiB buffer).
  if (need <= (uint64_t(64) << 20)) {
    uint64_t r = kIpcGranularity; // peers map it: an allocation of its own
    while (r < need)
      r <<= 1;
    return r;
  }
  uint64_t step = uint64_t(2) << 20;
  return (need + step - 1) / step * step;
}

/// Blocks of 512 threads for a grid-stride loop over n elements (the premul
/// kernel): enough to fill the GPU, at least one.
unsigned gridFor(unsigned long long n) {
  return unsigned(std::clamp<unsigned long long>((n + 511) / 512, 1, 1024));
}

} // namespace

Status maxContexts(size_t *out) {
  int64_t contexts = 0;
  MSCCLC_TRY(get(setting::MaxBufferContexts, &contexts));
  *out = size_t(contexts);
  return Status::ok();
}

Status firstEpoch(uint32_t *out) {
  // Tests start the LL epochs near their wrap-around and run past it.
  int64_t epoch = 0;
  MSCCLC_TRY(get(setting::TestEpochStart, &epoch));
  *out = uint32_t(epoch); // the table's range is that of uint32_t
  return Status::ok();
}

Status kernelTimeoutNs(uint64_t *out) {
  Seconds timeout;
  MSCCLC_TRY(get(setting::KernelTimeout, &timeout));
  *out = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout)
                      .count());
  return Status::ok();
}

Executor::Executor(Communicator &comm, Program &program, std::string dtype,
                   std::string redop, bool stageUserBuffers)
    : comm_(comm), program_(program), plan_(program.plan()),
      rankPlan_(program.plan().rankPlans[size_t(comm.rank())]),
      dtype_(std::move(dtype)), redop_(std::move(redop)) {
  elemSize_ = dtypeSize(dtype_);
  for (const RankPlan &rp : plan_.rankPlans)
    for (const auto *list : {&rp.memoryChannels, &rp.portChannels})
      for (const PlanChannel &c : *list) {
        peerInput_ |= c.peerInput;
        peerOutput_ |= c.peerOutput;
      }
  needPeerUser_ = peerInput_ || peerOutput_;
  premul_ = redop_ == "premulsum";
  staged_ = stageUserBuffers && (plan_.stagedByStdlib() || premul_);
  // With port channels both are staged: the proxy's copies then always
  // read and write the same buffers, so one context serves every call.
  stageIn_ = staged_ && (peerInput_ || plan_.usesPortChannels || premul_);
  stageOut_ = staged_ && (peerOutput_ || plan_.usesPortChannels);
}

Executor::ScratchLayout Executor::scratchNeed(uint64_t count) const {
  ScratchLayout need;
  need.plan = plan_.scratchBytes(count, elemSize_);
  need.input = stageIn_ ? plan_.inputElems(count) * elemSize_ : 0;
  need.output = stageOut_ ? plan_.outputElems(count) * elemSize_ : 0;
  return need;
}

bool Executor::scratchFits(uint64_t count) const {
  ScratchLayout need = scratchNeed(count);
  // The plan's part: its layout must hold the count's chunks, not only
  // its bytes (a layout for a smaller count has shorter chunks).
  bool planFits = need.plan == 0 || (scratch_ && count <= scratchCount_);
  return planFits && need.input <= layout_.input &&
         need.output <= layout_.output;
}

uint64_t Executor::layoutCountFor(uint64_t bytes, uint64_t atLeast) const {
  // scratchBytes grows with the count, and `atLeast` fits: double until a
  // count does not, then bisect.
  auto fits = [&](uint64_t count) {
    return plan_.scratchBytes(count, elemSize_) <= bytes;
  };
  // A count past this needs more than `bytes` for one scratch chunk's
  // elements of all of its K (and keeps scratchBytes from overflowing).
  const uint64_t top = (bytes / elemSize_ + 1) * uint64_t(plan_.chunks) + 1;
  uint64_t lo = std::max<uint64_t>(atLeast, 1), hi = lo * 2;
  while (hi < top && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

const void *Executor::kernelInput(const void *input) const {
  if (!stageIn_)
    return input;
  return static_cast<char *>(scratch_) + layout_.plan;
}

void *Executor::kernelOutput(void *output) const {
  if (!stageOut_)
    return output;
  return static_cast<char *>(scratch_) + layout_.plan + layout_.input;
}

Status Executor::init() {
  MSCCLC_TRY(kernelTimeoutNs(&timeoutNs_));
  if (plan_.ranks != comm_.nranks())
    return invalidArgument(
        fmt::format("program {} was compiled for {} ranks, the "
                    "communicator has {}",
                    plan_.name, plan_.ranks, comm_.nranks()));
  MSCCLC_TRY(checkNodeShape(plan_.name, plan_.gpusPerNode, comm_.nodes()));
  // Memory and switch channels map the peer's memory: inside a node only.
  for (const PlanChannel &c : rankPlan_.memoryChannels)
    if (!comm_.sameNode(c.peer))
      return unsupported(fmt::format(
          "program {}: rank {}'s memory channel {} reaches rank {}, which is "
          "on another node: between nodes only port channels work",
          plan_.name, comm_.rank(), c.name, c.peer));
  for (const PlanSwitchChannel &c : rankPlan_.switchChannels)
    for (int r : c.ranks)
      if (!comm_.sameNode(r))
        return unsupported(fmt::format(
            "program {}: switch channel {} spans rank {} on another node",
            plan_.name, c.name, r));
  if (!elemSize_)
    return invalidArgument(fmt::format("unknown data type '{}'", dtype_));
  MSCCLC_TRY(plan_.serves(dtype_, redop_));
  if (staged_ && plan_.inPlace)
    return internalError(fmt::format(
        "program {}: staged runs take the out-of-place variant", plan_.name));
  if (plan_.usesSwitchChannels)
    MSCCLC_TRY(multicastAllowed().context(
        fmt::format("program {} uses SwitchChannels", plan_.name)));

  DeviceGuard guard(comm_.device());
  std::string cubin;
  if (premul_ && !staged_)
    return invalidArgument(fmt::format(
        "program {}: premulsum runs through mscclcRunCollectivePreMulSum",
        plan_.name));
  const std::string compiledOp = Program::kernelRedop(redop_);
  CompileStats stats;
  MSCCLC_TRY(program_.cubin(comm_.arch(), dtype_, compiledOp, comm_.rank(),
                            &cubin, &stats));
  Status loaded = module_.load(comm_.device(), cubin);
  if (!loaded.isOk() && stats.origin == KernelOrigin::AheadOfTime) {
    // A shipped cubin this driver cannot load (older than the build's
    // NVRTC): JIT-compile it here instead.
    MSCCLC_LOG(Warn,
               "program {} rank {}: the ahead-of-time cubin (key {:.12}) did "
               "not load ({}); compiling it with NVRTC instead",
               plan_.name, comm_.rank(), stats.key, loaded.message());
    MSCCLC_TRY(program_.cubin(comm_.arch(), dtype_, compiledOp, comm_.rank(),
                              &cubin, &stats, /*allowAheadOfTime=*/false));
    loaded = module_.load(comm_.device(), cubin);
  }
  MSCCLC_TRY(loaded);
  MSCCLC_TRY(module_.function(rankPlan_.kernel, &kernel_));
  if (premul_) {
    if (plan_.premulKernel.empty())
      return invalidArgument(fmt::format(
          "program {} has no premul kernel (compiled by an older mscclc)",
          plan_.name));
    MSCCLC_TRY(module_.function(plan_.premulKernel, &premulKernel_));
  }
  // The networks are set up collectively: every rank decides from the
  // whole plan, so all call each or none.
  bool usesTcp = false, usesIb = false;
  for (const RankPlan &rp : plan_.rankPlans)
    for (const PlanChannel &c : rp.portChannels) {
      TransportKind k;
      MSCCLC_TRY(comm_.transportBetween(rp.rank, c.peer, &k));
      usesIb |= k == TransportKind::Ib;
      // Staged frames, over sockets or IB rings.
      if (k != TransportKind::Tcp && k != TransportKind::IbStaged)
        continue;
      usesTcp = true;
      // Either end's channel makes the pair's frames ours to drain.
      if (rp.rank == comm_.rank() || c.peer == comm_.rank())
        tcpPeers_.push_back(rp.rank == comm_.rank() ? c.peer : rp.rank);
    }
  std::sort(tcpPeers_.begin(), tcpPeers_.end());
  tcpPeers_.erase(std::unique(tcpPeers_.begin(), tcpPeers_.end()),
                  tcpPeers_.end());
  if (usesTcp)
    MSCCLC_TRY(comm_.tcpNetwork(&tcp_));
  if (usesIb)
    MSCCLC_TRY(comm_.ibNetwork(&ib_));
  MSCCLC_TRY(checkDeviceFit());

  size_t nMem = rankPlan_.memoryChannels.size();
  size_t nPort = rankPlan_.portChannels.size();
  size_t nSem = nMem + nPort > 0 ? nMem + nPort : 1;
  // Peers map the semaphores: an allocation of its own (kIpcGranularity).
  size_t semBytes = (nSem * sizeof(uint64_t) + kIpcGranularity - 1) /
                    kIpcGranularity * kIpcGranularity;
  MSCCLC_CUDA_CHECK(cudaStreamCreateWithFlags(&setupStream_, cudaStreamNonBlocking));
  MSCCLC_CUDA_CHECK(mallocPeerVisible(&semaphores_, semBytes));
  MSCCLC_TRY(zeroDevice(semaphores_, nSem * sizeof(uint64_t)));
  // Before the exchange: peers signal only once they know the address.
  if (tcp_)
    MSCCLC_TRY(tcp_->registerSemaphores(semaphores_, nSem, MemoryKind::Device,
                                        &semaphoreWindow_));
  if (ib_)
    MSCCLC_TRY(ibShare(semaphores_, &ibSemaphores_, &peerIbSemaphores_,
                       "semaphores"));
  MSCCLC_CUDA_CHECK(
      cudaMalloc(&blockEpoch_, size_t(rankPlan_.blocks) * sizeof(mscclc_u32)));
  MSCCLC_TRY(startEpochs());
  size_t slots = rankPlan_.waitSlots > 0 ? size_t(rankPlan_.waitSlots) : 1;
  MSCCLC_CUDA_CHECK(cudaMalloc(&waitCounters_, slots * sizeof(mscclc_u64)));
  MSCCLC_TRY(zeroDevice(waitCounters_, slots * sizeof(mscclc_u64)));
  MSCCLC_CUDA_CHECK(cudaMalloc(&error_, sizeof(MscclcErrorRecord)));
  MSCCLC_TRY(zeroDevice(error_, sizeof(MscclcErrorRecord)));
  void *readback = nullptr;
  MSCCLC_CUDA_CHECK(
      cudaHostAlloc(&readback, sizeof(Readback), cudaHostAllocPortable));
  readback_ = static_cast<Readback *>(readback);

  if (nPort > 0) {
    fifoCapacity_ = kFifoCapacity;
    void *host = nullptr;
    MSCCLC_CUDA_CHECK(cudaHostAlloc(&host, fifoCapacity_ * sizeof(MscclcTrigger),
                                    cudaHostAllocMapped | cudaHostAllocPortable));
    triggers_ = static_cast<MscclcTrigger *>(host);
    memset(triggers_, 0, fifoCapacity_ * sizeof(MscclcTrigger));
    MSCCLC_CUDA_CHECK(cudaHostAlloc(&host, sizeof(uint64_t),
                                    cudaHostAllocMapped | cudaHostAllocPortable));
    tail_ = static_cast<volatile uint64_t *>(host);
    *tail_ = 0;
    MSCCLC_CUDA_CHECK(cudaHostGetDevicePointer(
        reinterpret_cast<void **>(&devTriggers_), triggers_, 0));
    MSCCLC_CUDA_CHECK(cudaHostGetDevicePointer(
        reinterpret_cast<void **>(&devTail_), const_cast<uint64_t *>(tail_), 0));
    MSCCLC_CUDA_CHECK(cudaMalloc(&head_, sizeof(uint64_t)));
    MSCCLC_TRY(zeroDevice(head_, sizeof(uint64_t)));
    // A stream per port channel, so copies to different peers overlap on
    // the copy engines; on a GPU that other ranks share, one for all: the
    // copies stay on the device, and hardware work queues are few
    // (checkDeviceFit).
    for (size_t i = 0; i < proxyStreamCount(); ++i) {
      cudaStream_t s = nullptr;
      MSCCLC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      portStreams_.push_back(s);
    }
    signalCounters_.assign(nPort, 0);
    proxyFifo_ = std::make_unique<ProxyFifo>(
        FifoReader(triggers_, tail_, fifoCapacity_), kMaxProxyIds);
    MSCCLC_TRY(comm_.proxy(&proxy_));
    proxy_->add(proxyFifo_.get());
  }
  MSCCLC_TRY(comm_.exchange({semaphores_}, &peerSemaphores_)
                 .context("exchanging semaphores"));
  MSCCLC_LOG(Info,
             "rank {}: program {} ({}, {}) ready: {} blocks x {} "
             "threads, {} memory and {} port channels",
             comm_.rank(), plan_.name, dtype_, redop_, rankPlan_.blocks,
             plan_.threadsPerBlock, nMem, nPort);
  return Status::ok();
}

bool Executor::sharesGpu() const {
  for (int r = 0; r < comm_.nranks(); ++r)
    if (r != comm_.rank() && comm_.sameGpu(r))
      return true;
  return false;
}

size_t Executor::proxyStreamCount() const {
  size_t nPort = rankPlan_.portChannels.size();
  return nPort == 0 ? 0 : sharesGpu() ? 1 : nPort;
}

Status Executor::checkDeviceFit() {
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  // What each rank asks of its GPU: thread blocks (and how many of them one
  // SM holds at this block size), and streams (its launch stream and its
  // proxy's).
  struct Need {
    int32_t blocks = 0, perSm = 0, sms = 0, streams = 0;
  };
  std::vector<Need> needs(size_t(comm_.nranks()));
  Need &mine = needs[size_t(comm_.rank())];
  mine.blocks = int32_t(rankPlan_.blocks);
  int perSm = 0, sms = 0;
  MSCCLC_CUDA_CHECK(api->occupancyMaxActiveBlocksPerMultiprocessor(
      &perSm, kernel_, int(plan_.threadsPerBlock), 0));
  MSCCLC_CUDA_CHECK(cudaDeviceGetAttribute(
      &sms, cudaDevAttrMultiProcessorCount, comm_.device()));
  mine.perSm = perSm;
  mine.sms = sms;
  // The TCP network copies on a stream per connection.
  mine.streams = int32_t(1 + proxyStreamCount() +
                         (tcp_ ? tcp_->peers().size() : 0));
  MSCCLC_TRY(comm_.bootstrap().allGather(needs.data(), sizeof(Need)));
  // Every rank on the GPU computes the same sums, so all refuse alike.
  double share = 0; // of the GPU's block slots (per-kernel estimate)
  int64_t blocks = 0, streams = 0;
  std::string ranks;
  for (int r = 0; r < comm_.nranks(); ++r) {
    if (!comm_.sameGpu(r))
      continue;
    const Need &n = needs[size_t(r)];
    if (n.perSm <= 0)
      return unsupported(fmt::format(
          "program {}: rank {}'s kernel cannot run {} threads per block on "
          "its GPU",
          plan_.name, r, plan_.threadsPerBlock));
    share += double(n.blocks) / (double(n.perSm) * double(n.sms));
    blocks += n.blocks;
    streams += n.streams;
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (share > 1.0)
    return unsupported(fmt::format(
        "program {} needs {} thread blocks of {} threads resident at once on "
        "the GPU of rank {} (ranks {} share it), which has {} SMs holding {} "
        "such blocks each ({:.0f}% of its block slots): blocks that are not "
        "resident would wait for each other forever; use fewer instances or "
        "fewer ranks per GPU",
        plan_.name, blocks, plan_.threadsPerBlock, comm_.rank(), ranks, sms,
        perSm, share * 100));
  if (streams > hardwareQueues())
    return unsupported(fmt::format(
        "program {} drives {} streams on the GPU of rank {} (ranks {}: a "
        "launch stream each, and the port-channel proxy's), more than its {} "
        "hardware work queues: work queued behind a waiting kernel would "
        "never start. Set {}=32 before " MSCCLC_GPU_API " "
        "initialises, or put fewer ranks on the GPU",
        plan_.name, streams, comm_.rank(), ranks, hardwareQueues(),
        hardwareQueuesVariable()));
  return Status::ok();
}

Executor::~Executor() {
  DeviceGuard guard(comm_.device());
  if (proxy_ && proxyFifo_)
    proxy_->remove(proxyFifo_.get());
  std::vector<std::unique_ptr<Context>> all = takeContexts(false);
  for (auto &c : takeContexts(true))
    all.push_back(std::move(c));
  freeContexts(all);
  for (ScratchGeneration &g : keptScratch_)
    freeGeneration(g);
  if (tcp_) {
    for (uint32_t w : {semaphoreWindow_, scratchWindow_})
      if (w)
        tcp_->unregister(w);
  }
  ibRelease({ibSemaphores_, ibScratch_});
  comm_.release(peerScratch_);
  comm_.release(peerSemaphores_);
  for (cudaStream_t s : portStreams_)
    MSCCLC_CUDA_WARN(cudaStreamDestroy(s));
  for (cudaStream_t s : {peekStream_, setupStream_})
    if (s)
      MSCCLC_CUDA_WARN(cudaStreamDestroy(s));
  if (scratch_)
    MSCCLC_CUDA_WARN(cudaFree(scratch_));
  if (semaphores_)
    MSCCLC_CUDA_WARN(cudaFree(semaphores_));
  if (blockEpoch_)
    MSCCLC_CUDA_WARN(cudaFree(blockEpoch_));
  if (waitCounters_)
    MSCCLC_CUDA_WARN(cudaFree(waitCounters_));
  if (error_)
    MSCCLC_CUDA_WARN(cudaFree(error_));
  if (readback_)
    MSCCLC_CUDA_WARN(cudaFreeHost(readback_));
  if (head_)
    MSCCLC_CUDA_WARN(cudaFree(head_));
  if (triggers_)
    MSCCLC_CUDA_WARN(cudaFreeHost(triggers_));
  if (tail_)
    MSCCLC_CUDA_WARN(cudaFreeHost(const_cast<uint64_t *>(tail_)));
}

void Executor::freeContexts(std::vector<std::unique_ptr<Context>> &contexts) {
  for (auto &c : contexts)
    for (size_t i = 0; i < c->proxyChannels.size(); ++i)
      proxyFifo_->setChannel(uint32_t(size_t(c->index) * c->proxyChannels.size() + i),
                             nullptr);
  // A trigger the proxy is handling right now (a kernel that timed out may
  // leave some behind) may still use a withdrawn channel.
  if (proxy_ && !contexts.empty())
    proxy_->waitForPass();
  for (auto &c : contexts) {
    for (uint32_t w : c->windows)
      tcp_->unregister(w);
    c->links.clear(); // before the registrations they write from
    ibRelease(c->ibRegions);
    comm_.release(c->peerUser);
    if (c->tables)
      MSCCLC_CUDA_WARN(cudaFree(c->tables));
    if (!c->proxyChannels.empty())
      freeContextIndices_.push_back(c->index); // its proxy ids are free again
  }
  contexts.clear();
}

std::vector<std::unique_ptr<Executor::Context>> Executor::takeContexts(bool captured) {
  std::vector<std::unique_ptr<Context>> taken;
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    if (it->second->captured != captured) {
      ++it;
      continue;
    }
    if (it->second.get() == last_)
      last_ = nullptr;
    taken.push_back(std::move(it->second));
    it = contexts_.erase(it);
  }
  return taken;
}

void Executor::freeGeneration(ScratchGeneration &g) {
  freeContexts(g.contexts);
  if (g.window)
    tcp_->unregister(g.window);
  g.window = 0;
  ibRelease({g.ibRegion});
  g.ibRegion = {};
  comm_.release(g.peerScratch);
  g.peerScratch.clear();
  if (g.scratch)
    MSCCLC_CUDA_WARN(cudaFree(g.scratch));
  g.scratch = nullptr;
}

void Executor::evictContexts() {
  // Under capture the device cannot be synchronised: nothing is freed then.
  if (capturing_)
    return;
  Status s = drainLocal();
  if (!s.isOk()) {
    MSCCLC_LOG(Warn, "evicting buffer contexts: {}", s.message());
    return;
  }
  std::vector<std::unique_ptr<Context>> unused = takeContexts(false);
  freeContexts(unused);
}

Status Executor::startEpochs() {
  uint32_t first = 0;
  MSCCLC_TRY(firstEpoch(&first));
  std::vector<mscclc_u32> epochs(size_t(rankPlan_.blocks), first);
  return copyToDevice(blockEpoch_, epochs.data(), epochs.size() * sizeof(mscclc_u32));
}

Status Executor::zeroDevice(void *ptr, size_t bytes) {
  MSCCLC_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, setupStream_));
  MSCCLC_CUDA_CHECK(cudaStreamSynchronize(setupStream_));
  return Status::ok();
}

Status Executor::copyToDevice(void *dst, const void *src, size_t bytes) {
  MSCCLC_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, setupStream_));
  MSCCLC_CUDA_CHECK(cudaStreamSynchronize(setupStream_));
  return Status::ok();
}

Status Executor::readBack(void *slot, const void *device, size_t bytes,
                          cudaStream_t stream) {
  MSCCLC_CUDA_CHECK(
      cudaMemcpyAsync(slot, device, bytes, cudaMemcpyDeviceToHost, stream));
  MSCCLC_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::ok();
}

uint64_t Executor::allocationId(const void *ptr) const {
  const DriverApi *api = nullptr;
  unsigned long long id = 0;
  if (ptr && driverApi(&api).isOk() &&
      api->pointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                               toDevicePtr(ptr)) == CUDA_SUCCESS)
    return id;
  return 0;
}

Executor::BufferIdentity Executor::identify(const void *ptr) const {
  BufferIdentity b;
  b.id = allocationId(ptr);
  const DriverApi *api = nullptr;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (ptr && driverApi(&api).isOk() &&
      api->memGetAddressRange(&base, &size, toDevicePtr(ptr)) == CUDA_SUCCESS)
    b.extent = uint64_t(base) + size - reinterpret_cast<uint64_t>(ptr);
  return b;
}

bool Executor::contextsKeyedByBuffers() const {
  return (needPeerUser_ && !staged_) || !rankPlan_.portChannels.empty();
}

std::string Executor::contextKey(const void *input, const void *output,
                                 BufferIdentity *in, BufferIdentity *out) const {
  *in = *out = BufferIdentity();
  if (!contextsKeyedByBuffers())
    return std::string();
  *in = identify(input);
  *out = identify(output);
  return fmt::format("{}/{}/{}/{}/{}/{}", input, output,
                     static_cast<unsigned long long>(in->id),
                     static_cast<unsigned long long>(out->id),
                     static_cast<unsigned long long>(in->extent),
                     static_cast<unsigned long long>(out->extent));
}

bool Executor::lastContextServes(const void *input, const void *output,
                                 const BufferIdentity &in,
                                 const BufferIdentity &out) const {
  return last_ && (!contextsKeyedByBuffers() ||
                   (last_->input == input && last_->output == output &&
                    last_->inputIdentity == in && last_->outputIdentity == out));
}

bool Executor::needsCollectiveSetup(const void *input, void *output,
                                    uint64_t count) const {
  if (!scratchFits(count))
    return true;
  // Only peer mappings make a new context a collective step.
  if (!needPeerUser_ || staged_)
    return false;
  const void *kernelIn = kernelInput(input);
  const void *kernelOut = kernelOutput(output);
  BufferIdentity in, out;
  std::string key = contextKey(kernelIn, kernelOut, &in, &out);
  return !lastContextServes(kernelIn, kernelOut, in, out) &&
         contexts_.find(key) == contexts_.end();
}

Status Executor::drainLocal() {
  // Our kernels and copies (device sync) and the proxy's queue are done.
  MSCCLC_CUDA_CHECK(cudaDeviceSynchronize());
  if (proxy_ && proxyFifo_) {
    uint64_t head = 0;
    MSCCLC_CUDA_CHECK(
        cudaMemcpy(&head, head_, sizeof(head), cudaMemcpyDeviceToHost));
    MSCCLC_TRY(drainProxy(head, 60));
  }
  return Status::ok();
}

Status Executor::drainProxy(uint64_t head, double seconds) {
  MSCCLC_TRY(proxy_->drain(proxyFifo_.get(), head, seconds));
  for (cudaStream_t s : portStreams_)
    MSCCLC_CUDA_CHECK(cudaStreamSynchronize(s));
  return Status::ok();
}

Status Executor::retireScratch() {
  // Our kernels are done with the old scratch unless the stream is being
  // captured (the device cannot be synchronised then); the peers' kernels,
  // which write into it, only when every rank says so. Every rank takes
  // part in the gather alike, capturing or not.
  uint8_t drained = 0;
  if (!capturing_) {
    MSCCLC_TRY(drainLocal());
    drained = 1;
  }
  std::vector<uint8_t> all(size_t(comm_.nranks()), 0);
  all[size_t(comm_.rank())] = drained;
  MSCCLC_TRY(comm_.bootstrap().allGather(all.data(), 1));
  bool idle = std::all_of(all.begin(), all.end(), [](uint8_t d) { return d; });

  ScratchGeneration old;
  old.scratch = scratch_;
  old.bytes = layout_.total();
  old.peerScratch = std::move(peerScratch_);
  old.window = scratchWindow_;
  scratchWindow_ = 0;
  old.ibRegion = ibScratch_;
  ibScratch_ = {};
  peerIbScratch_.clear();
  old.contexts = takeContexts(false);
  for (auto &c : takeContexts(true))
    old.contexts.push_back(std::move(c));
  old.captured = scratchCaptured_;
  for (const auto &c : old.contexts)
    old.captured |= c->captured;
  keptScratch_.push_back(std::move(old));
  peerScratch_.clear();
  scratch_ = nullptr;
  layout_ = {};
  scratchCount_ = 0;
  scratchCaptured_ = false;
  last_ = nullptr;
  if (!idle)
    return Status::ok();
  // Free every generation no graph holds, this one and earlier ones.
  std::vector<ScratchGeneration> held;
  for (ScratchGeneration &g : keptScratch_) {
    if (g.captured)
      held.push_back(std::move(g));
    else
      freeGeneration(g);
  }
  keptScratch_ = std::move(held);
  return Status::ok();
}

Status Executor::ensureScratch(uint64_t count) {
  if (scratchFits(count))
    return Status::ok();
  // Parts never shrink: a smaller count after a larger one still fits.
  // The plan's part is laid out for the largest count its rounded size
  // holds, so a sweep of growing counts regrows it rarely.
  uint64_t want = std::max(count, scratchCount_);
  ScratchLayout need = scratchNeed(want), grown;
  auto part = [](uint64_t want, uint64_t had) {
    uint64_t bytes = std::max(want, had);
    return bytes ? roundScratch(bytes) : 0;
  };
  grown.plan = part(need.plan, layout_.plan);
  uint64_t layoutCount = grown.plan ? layoutCountFor(grown.plan, want) : 0;
  grown.input = part(need.input, layout_.input);
  grown.output = part(need.output, layout_.output);
  if (scratch_)
    MSCCLC_TRY(retireScratch());
  uint64_t bytes = grown.total();
  MSCCLC_CUDA_CHECK(mallocPeerVisible(&scratch_, bytes));
  // LL flags start at 0 and launches use flags >= 1.
  MSCCLC_TRY(zeroDevice(scratch_, bytes));
  layout_ = grown; // only once the memory is there
  scratchCount_ = layoutCount;
  if (tcp_)
    MSCCLC_TRY(tcp_->registerWindow(scratch_, bytes, MemoryKind::Device,
                                    &scratchWindow_));
  if (ib_)
    MSCCLC_TRY(ibShare(scratch_, &ibScratch_, &peerIbScratch_, "scratch buffers"));
  MSCCLC_TRY(comm_.exchange({scratch_}, &peerScratch_)
                 .context("exchanging scratch buffers"));
  MSCCLC_LOG(Debug, "rank {}: scratch of {} is {} bytes at {}", comm_.rank(),
             plan_.name, static_cast<unsigned long long>(bytes), scratch_);
  for (int r = 0; r < comm_.nranks(); ++r)
    MSCCLC_LOG(Trace, "rank {}: rank {}'s scratch of {} is at {}",
               comm_.rank(), r, plan_.name, peerScratch_[size_t(r)][0].ptr);
  return Status::ok();
}

Status Executor::prepare(const void *input, void *output, uint64_t count,
                         cudaStream_t stream) {
  DeviceGuard guard(comm_.device());
  // What needsCollectiveSetup() would have said: the scratch grows, or a
  // context with peer mappings is built (found out by building it).
  bool collective = !scratchFits(count) || fresh_;
  fresh_ = false;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MSCCLC_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  capturing_ = capture != cudaStreamCaptureStatusNone;
  MSCCLC_TRY(ensureScratch(count));
  Context *ctx = nullptr;
  bool built = false;
  MSCCLC_TRY(contextFor(kernelInput(input), kernelOutput(output), &ctx, &built));
  collective |= built && needPeerUser_ && !staged_;
  // Set-up allocates and frees device memory, which waits for the whole
  // GPU: no rank sharing it may launch (and wait for the others) before
  // every rank's set-up is done.
  if (collective && sharesGpu())
    MSCCLC_TRY(comm_.bootstrap().barrier());
  return Status::ok();
}

Status Executor::contextFor(const void *input, void *output, Context **out,
                            bool *built) {
  BufferIdentity inId, outId;
  std::string key = contextKey(input, output, &inId, &outId);
  if (lastContextServes(input, output, inId, outId)) {
    *out = last_;
    return Status::ok();
  }
  auto it = contexts_.find(key);
  if (it == contexts_.end()) {
    auto ctx = std::make_unique<Context>();
    ctx->input = input;
    ctx->output = output;
    ctx->inputIdentity = inId;
    ctx->outputIdentity = outId;
    MSCCLC_TRY(buildContext(input, output, ctx.get()));
    it = contexts_.emplace(key, std::move(ctx)).first;
    if (built)
      *built = true;
  }
  last_ = it->second.get();
  *out = last_;
  return Status::ok();
}

Status Executor::buildContext(const void *input, void *output, Context *ctx) {
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  size_t nMem = rankPlan_.memoryChannels.size();
  size_t nPort = rankPlan_.portChannels.size();
  // Executor::init refuses switch programs where multicast is off, and
  // bindMulticast checks again before any multicast call.
  size_t nSw = rankPlan_.switchChannels.size();

  // Staged runs put from and into scratch, registered already. A rank
  // whose registration fails still takes part in the exchanges below (the
  // others would wait for it), then fails.
  Status registered = Status::ok();
  if (ib_ && !staged_)
    registered = ibRegister({const_cast<void *>(input), output}, &ctx->ibRegions);
  if (needPeerUser_ && !staged_) {
    // Mappings of buffers the peers freed block new mappings of the same
    // memory: drop unused contexts (after our kernels are done with them).
    // Only here, where set-up is collective: in a group every rank prepares
    // before any launches, so waiting for our kernels cannot wait for a
    // peer's launch that this thread has still to make.
    auto evict = [this] { evictContexts(); };
    size_t most = 0;
    MSCCLC_TRY(maxContexts(&most));
    if (contexts_.size() >= most)
      evict();
    if (tcp_) {
      // Peers on other nodes put into them once they know the addresses.
      for (const void *p : {input, static_cast<const void *>(output)}) {
        CUdeviceptr base = 0;
        size_t size = 0;
        if (!p || api->memGetAddressRange(&base, &size, toDevicePtr(p)) !=
                      CUDA_SUCCESS)
          continue;
        uint32_t w = 0;
        MSCCLC_TRY(tcp_->registerWindow(
            const_cast<void *>(p),
            uint64_t(base) + size - reinterpret_cast<uint64_t>(p),
            MemoryKind::Device, &w));
        ctx->windows.push_back(w);
      }
    }
    MSCCLC_TRY(comm_.exchange({const_cast<void *>(input), output},
                              &ctx->peerUser, evict)
                   .context("exchanging user buffers"));
    if (ib_)
      MSCCLC_TRY(IbNetwork::exchange(comm_.bootstrap(), ctx->ibRegions,
                                     &ctx->peerIbUser)
                     .context("exchanging IB keys of user buffers"));
  }
  MSCCLC_TRY(registered);

  auto peerUser = [&](int r, int which) -> PeerPointer {
    if (staged_) {
      // The peer's staging: the same offsets in its scratch (every rank
      // grows its scratch alike).
      bool reached = which == 0 ? stageIn_ : stageOut_;
      if (!reached || peerScratch_.empty())
        return {};
      const PeerPointer &s = peerScratch_[size_t(r)][0];
      if (!s.ptr && !s.remote)
        return {};
      uint64_t offset = layout_.plan + (which == 0 ? 0 : layout_.input);
      PeerPointer p;
      if (s.ptr)
        p.ptr = static_cast<char *>(s.ptr) + offset;
      if (s.remote)
        p.remote = s.remote + offset;
      p.extent = which == 0 ? layout_.input : layout_.output;
      return p;
    }
    if (ctx->peerUser.empty())
      return {};
    return ctx->peerUser[size_t(r)][size_t(which)];
  };
  auto peerSem = [&](int peer, bool port, int peerIndex) -> uint64_t * {
    if (peerIndex < 0)
      return nullptr;
    const RankPlan &prp = plan_.rankPlans[size_t(peer)];
    size_t slot = size_t(peerIndex) + (port ? prp.memoryChannels.size() : 0);
    return static_cast<uint64_t *>(peerSemaphores_[size_t(peer)][0].ptr) + slot;
  };

  std::vector<MscclcMemoryChannel> mem(nMem);
  for (size_t i = 0; i < nMem; ++i) {
    const PlanChannel &c = rankPlan_.memoryChannels[i];
    MscclcMemoryChannel &m = mem[i];
    m.peerInput = peerUser(c.peer, 0).ptr;
    m.peerOutput = peerUser(c.peer, 1).ptr;
    m.peerScratch = peerScratch_.empty() ? nullptr : peerScratch_[size_t(c.peer)][0].ptr;
    m.peerSemaphore = reinterpret_cast<mscclc_u64 *>(peerSem(c.peer, false, c.peerIndex));
    m.semaphore = reinterpret_cast<mscclc_u64 *>(semaphores_ + i);
    MSCCLC_LOG(Trace,
               "rank {}: {} for input {} output {}: memory channel {} to rank "
               "{}: input {} output {} scratch {}",
               comm_.rank(), plan_.name, input, static_cast<void *>(output),
               c.name, c.peer, m.peerInput, m.peerOutput, m.peerScratch);
    if ((c.peerInput && !m.peerInput) || (c.peerOutput && !m.peerOutput) ||
        (c.peerScratch && !m.peerScratch))
      return internalError(
          fmt::format("memory channel {} of rank {} misses a peer "
                      "buffer it uses",
                      c.name, comm_.rank()));
  }

  std::vector<MscclcPortChannel> port(nPort);
  if (nPort > 0) {
    if (!freeContextIndices_.empty()) {
      ctx->index = freeContextIndices_.back();
      freeContextIndices_.pop_back();
    } else if (size_t(nextContext_ + 1) * nPort > size_t(kMaxProxyIds)) {
      return unsupported(fmt::format(
          "program {} holds more buffer pairs at once than the proxy can tell "
          "apart ({}, graphs keep theirs); reuse buffers",
          plan_.name, nextContext_));
    } else {
      ctx->index = nextContext_++;
    }
    for (size_t i = 0; i < nPort; ++i) {
      const PlanChannel &c = rankPlan_.portChannels[i];
      auto pc = std::make_unique<ProxyChannel>();
      pc->stream = portStreams_[i % portStreams_.size()];
      pc->src[0] = const_cast<void *>(input);
      pc->srcExtent[0] = ctx->inputIdentity.extent;
      pc->src[1] = output;
      pc->srcExtent[1] = ctx->outputIdentity.extent;
      pc->src[2] = scratch_;
      pc->srcExtent[2] = layout_.plan;
      pc->dst[0] = peerUser(c.peer, 0).ptr;
      pc->dstExtent[0] = peerUser(c.peer, 0).extent;
      pc->dst[1] = peerUser(c.peer, 1).ptr;
      pc->dstExtent[1] = peerUser(c.peer, 1).extent;
      if (!peerScratch_.empty()) {
        pc->dst[2] = peerScratch_[size_t(c.peer)][0].ptr;
        pc->dstExtent[2] = std::min(peerScratch_[size_t(c.peer)][0].extent,
                                    layout_.plan);
      }
      pc->peerSemaphore = peerSem(c.peer, true, c.peerIndex);
      pc->counter = &signalCounters_[i];
      pc->peer = c.peer;
      pc->planIndex = int(i);
      TransportKind kind;
      MSCCLC_TRY(comm_.transportBetween(comm_.rank(), c.peer, &kind));
      if (kind != TransportKind::CopyEngine) {
        PeerPointer dst[3] = {peerUser(c.peer, 0), peerUser(c.peer, 1), {}};
        if (!peerScratch_.empty()) {
          dst[2] = peerScratch_[size_t(c.peer)][0];
          dst[2].extent = std::min(dst[2].extent, layout_.plan);
        }
        MSCCLC_TRY(kind == TransportKind::Ib
                       ? ibLink(c, pc.get(), &signalCounters_[i], dst, ctx)
                       : tcpLink(c, pc.get(), &signalCounters_[i], dst, ctx));
      }
      uint32_t proxyId = uint32_t(size_t(ctx->index) * nPort + i);
      port[i].proxyId = proxyId;
      port[i].reserved = 0;
      port[i].semaphore = reinterpret_cast<mscclc_u64 *>(semaphores_ + nMem + i);
      proxyFifo_->setChannel(proxyId, pc.get());
      ctx->proxyChannels.push_back(std::move(pc));
    }
  }

  std::vector<MscclcSwitchChannel> sw(nSw);
  if (plan_.usesSwitchChannels)
    MSCCLC_TRY(bindSwitchChannels(input, output, ctx, &sw));

  size_t memBytes = nMem * sizeof(MscclcMemoryChannel);
  size_t portBytes = nPort * sizeof(MscclcPortChannel);
  size_t swBytes = nSw * sizeof(MscclcSwitchChannel);
  size_t total = memBytes + portBytes + swBytes;
  if (total > 0) {
    MSCCLC_CUDA_CHECK(cudaMalloc(&ctx->tables, total));
    char *base = static_cast<char *>(ctx->tables);
    if (nMem) {
      MSCCLC_TRY(copyToDevice(base, mem.data(), memBytes));
      ctx->memoryChannels = reinterpret_cast<MscclcMemoryChannel *>(base);
    }
    if (nPort) {
      MSCCLC_TRY(copyToDevice(base + memBytes, port.data(), portBytes));
      ctx->portChannels = reinterpret_cast<MscclcPortChannel *>(base + memBytes);
    }
    if (nSw) {
      char *at = base + memBytes + portBytes;
      MSCCLC_TRY(copyToDevice(at, sw.data(), swBytes));
      ctx->switchChannels = reinterpret_cast<MscclcSwitchChannel *>(at);
    }
  }
  return Status::ok();
}

Status Executor::tcpLink(const PlanChannel &c, ProxyChannel *pc,
                         uint64_t *counter, const PeerPointer dst[3],
                         Context *ctx) {
  if (!tcp_)
    return internalError(fmt::format(
        "program {}: port channel {} goes over staged frames (tcp or ib "
        "staged), but no network was set up",
        plan_.name, c.name));
  TcpChannelSpec spec;
  for (int b = 0; b < 3; ++b) {
    spec.src[b] = pc->src[b];
    spec.srcExtent[b] = pc->srcExtent[b];
    spec.dst[b] = dst[b].remote;
    spec.dstExtent[b] = dst[b].extent;
  }
  spec.srcKind = MemoryKind::Device;
  std::unique_ptr<StagingCopier> copier;
  // The channel's stream: its copies to the staging slots keep its order.
  MSCCLC_TRY(tcp_->options().staging->copier(pc->stream, &copier));
  spec.copier = copier.get();
  if (c.peerIndex >= 0) {
    // The peer's port semaphores follow its memory ones.
    size_t slot = size_t(c.peerIndex) +
                  plan_.rankPlans[size_t(c.peer)].memoryChannels.size();
    spec.semaphore =
        peerSemaphores_[size_t(c.peer)][0].remote + slot * sizeof(uint64_t);
  }
  spec.counter = counter;
  std::unique_ptr<Transport> link;
  MSCCLC_TRY(tcp_->channel(c.peer, spec, &link));
  pc->transport = link.get();
  ctx->copiers.push_back(std::move(copier));
  ctx->links.push_back(std::move(link));
  return Status::ok();
}

Status Executor::ibRegister(const std::vector<void *> &local,
                             std::vector<IbRegion> *out) {
  out->assign(local.size(), IbRegion());
  // A rank without IB peers has no device, but takes part in exchanges.
  if (!ib_->device())
    return Status::ok();
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  for (size_t i = 0; i < local.size(); ++i) {
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!local[i] || api->memGetAddressRange(&base, &size, toDevicePtr(local[i])) !=
                         CUDA_SUCCESS)
      continue;
    IbRegion whole;
    MSCCLC_TRY(ib_->acquire(reinterpret_cast<void *>(base), size,
                            allocationId(local[i]), cudaDmaBufExporter(), &whole));
    (*out)[i] = sliceOf(whole, reinterpret_cast<uint64_t>(local[i]) -
                                   uint64_t(base));
  }
  return Status::ok();
}

Status Executor::ibShare(void *local, IbRegion *mine, std::vector<IbRemote> *peers,
                         const char *what) {
  std::vector<IbRegion> regions;
  Status registered = ibRegister({local}, &regions);
  *mine = regions.empty() ? IbRegion() : regions[0];
  // Even after a failed registration: the others wait for this rank.
  std::vector<std::vector<IbRemote>> all;
  MSCCLC_TRY(IbNetwork::exchange(comm_.bootstrap(), {*mine}, &all)
                 .context(fmt::format("exchanging IB keys of {}", what)));
  MSCCLC_TRY(registered);
  peers->clear();
  for (const auto &r : all)
    peers->push_back(r[0]);
  return Status::ok();
}

void Executor::ibRelease(const std::vector<IbRegion> &regions) {
  if (ib_)
    for (const IbRegion &r : regions)
      ib_->release(r);
}

namespace {
/// Whether [address, address + bytes) lies inside [base, base + extent).
bool covers(uint64_t base, uint64_t extent, uint64_t address, uint64_t bytes) {
  return extent && address >= base && address - base <= extent &&
         bytes <= extent - (address - base);
}
} // namespace

IbRegion Executor::ibLocal(const void *address, uint64_t bytes,
                           const Context &ctx) const {
  const uint64_t a = reinterpret_cast<uint64_t>(address);
  std::vector<IbRegion> candidates = ctx.ibRegions;
  candidates.push_back(ibScratch_);
  for (const IbRegion &r : candidates)
    if (address && covers(r.address, r.bytes, a, bytes))
      return sliceOf(r, a - r.address, bytes);
  return {};
}

IbRemote Executor::ibPeer(int peer, uint64_t address, uint64_t bytes,
                          const Context &ctx) const {
  std::vector<IbRemote> candidates;
  if (!ctx.peerIbUser.empty())
    candidates = ctx.peerIbUser[size_t(peer)];
  if (!peerIbScratch_.empty())
    candidates.push_back(peerIbScratch_[size_t(peer)]);
  for (const IbRemote &r : candidates)
    if (address && covers(r.address, r.bytes, address, bytes))
      return sliceOf(r, address - r.address, bytes);
  return {};
}

Status Executor::ibLink(const PlanChannel &c, ProxyChannel *pc,
                        uint64_t *counter, const PeerPointer dst[3],
                        Context *ctx) {
  IbConnection *connection = ib_ ? ib_->connection(c.peer) : nullptr;
  if (!connection)
    return internalError(fmt::format(
        "program {}: port channel {} goes over IB verbs, but rank {} has no "
        "connection to rank {}",
        plan_.name, c.name, comm_.rank(), c.peer));
  IbChannelSpec spec;
  for (int b = 0; b < 3; ++b) {
    spec.src[b] = ibLocal(pc->src[b], pc->srcExtent[b], *ctx);
    spec.dst[b] = ibPeer(c.peer, dst[b].remote, dst[b].extent, *ctx);
  }
  if (c.peerIndex >= 0) {
    // The peer's port semaphores follow its memory ones.
    size_t slot = size_t(c.peerIndex) +
                  plan_.rankPlans[size_t(c.peer)].memoryChannels.size();
    spec.semaphore = sliceOf(peerIbSemaphores_[size_t(c.peer)],
                             slot * sizeof(uint64_t), sizeof(uint64_t));
  }
  spec.counter = counter;
  spec.planIndex = pc->planIndex;
  std::unique_ptr<Transport> link;
  MSCCLC_TRY(makeIbChannel(connection, spec, &link));
  pc->transport = link.get();
  ctx->links.push_back(std::move(link));
  return Status::ok();
}

Status Executor::bindSwitchChannels(const void *input, void *output,
                                    Context *ctx,
                                    std::vector<MscclcSwitchChannel> *table) {
  // Binding is collective over all ranks: walk every switch channel of the
  // program in one order, the same on every rank.
  std::set<std::string> seen;
  for (const RankPlan &rp : plan_.rankPlans) {
    for (const PlanSwitchChannel &c : rp.switchChannels) {
      if (!seen.insert(c.name).second)
        continue;
      if (c.scratch)
        return unsupported(fmt::format(
            "program {} reaches scratch through SwitchChannel {}; this "
            "runtime binds only the user buffers to multicast objects",
            plan_.name, c.name));
      const PlanSwitchChannel *mine = nullptr;
      for (const PlanSwitchChannel &m : rankPlan_.switchChannels)
        if (m.name == c.name)
          mine = &m;
      for (int which = 0; which < 2; ++which) {
        if (!(which == 0 ? c.input : c.output))
          continue;
        const void *local = !mine ? nullptr : which == 0 ? input : output;
        std::unique_ptr<MulticastRegion> region;
        MSCCLC_TRY(
            bindMulticast(comm_, c.ranks, local, &region)
                .context(fmt::format("binding the {} of SwitchChannel {}",
                                     which == 0 ? "input" : "output", c.name)));
        if (!mine)
          continue;
        if (size_t(mine->index) >= table->size())
          return invalidArgument(
              fmt::format("plan: switch channel {} of rank {} "
                          "has index {} of {}",
                          c.name, comm_.rank(), mine->index, table->size()));
        MscclcSwitchChannel &entry = (*table)[size_t(mine->index)];
        (which == 0 ? entry.mcInput : entry.mcOutput) = region->mcPtr();
        ctx->multicast.push_back(std::move(region));
      }
    }
  }
  return Status::ok();
}

Status Executor::launch(const void *input, void *output, uint64_t count,
                        cudaStream_t stream, const PreMulScalar *scalar) {
  if (comm_.aborted())
    return invalidArgument(fmt::format("rank {}'s communicator was aborted: "
                                       "destroy it",
                                       comm_.rank()));
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  if (!scratchFits(count))
    return internalError("launch before prepare() grew the scratch");
  const void *kernelIn = kernelInput(input);
  void *kernelOut = kernelOutput(output);
  // prepare() found the context for these buffers, which cannot have been
  // freed since: look it up again only where another call's prepare() came
  // between (a group).
  Context *ctx = last_;
  if (!ctx || (contextsKeyedByBuffers() &&
               (ctx->input != kernelIn || ctx->output != kernelOut)))
    MSCCLC_TRY(contextFor(kernelIn, kernelOut, &ctx));
  bool root = comm_.rank() == plan_.root;
  DeviceGuard guard(comm_.device());
  if (premul_ && !scalar)
    return invalidArgument("a premulsum launch needs its scalar");
  if (premul_) {
    void *dst = const_cast<void *>(kernelIn);
    unsigned long long n = plan_.inputElems(count);
    const void *deviceScalar = scalar->device;
    unsigned long long hostBits = scalar->hostBits;
    void *pparams[] = {&dst, &input, &n, &deviceScalar, &hostBits};
    MSCCLC_CUDA_CHECK(api->launchKernel(premulKernel_, gridFor(n), 1, 1, 512,
                                        1, 1, 0,
                                        reinterpret_cast<CUstream>(stream),
                                        pparams, nullptr));
  } else if (kernelIn != input && (root || !plan_.inputAtRootOnly())) {
    MSCCLC_CUDA_CHECK(cudaMemcpyAsync(const_cast<void *>(kernelIn), input,
                                      plan_.inputElems(count) * elemSize_,
                                      cudaMemcpyDeviceToDevice, stream));
  }

  MscclcKernelArgs args;
  memset(&args, 0, sizeof(args));
  args.abiVersion = MSCCLC_ABI_VERSION;
  args.rank = mscclc_u32(comm_.rank());
  args.nranks = mscclc_u32(comm_.nranks());
  args.flags = 0;
  args.input = const_cast<void *>(kernelIn);
  args.output = kernelOut;
  args.scratch = scratch_;
  args.count = count;
  args.scratchCount = scratchCount_ ? scratchCount_ : count;
  args.memoryChannels = ctx->memoryChannels;
  args.portChannels = ctx->portChannels;
  args.switchChannels = ctx->switchChannels;
  if (fifoCapacity_) {
    args.fifo.triggers = devTriggers_;
    args.fifo.head = reinterpret_cast<mscclc_u64 *>(head_);
    args.fifo.tail = reinterpret_cast<volatile mscclc_u64 *>(devTail_);
    args.fifo.capacity = fifoCapacity_;
  }
  args.state.blockEpoch = blockEpoch_;
  args.state.waitCounters = waitCounters_;
  args.error = error_;
  args.abortFlag = comm_.abortFlag();
  args.timeoutNs = timeoutNs_;
  // avg's scaling, done by the kernel itself (Device.h scaleResult); it
  // belongs to the result only: with reduce, on the root.
  bool hasResult = root || !plan_.resultAtRootOnly();
  if (redop_ == "avg" && hasResult) {
    args.scale.buf = static_cast<char *>(kernelOut) +
                     plan_.resultOffset(comm_.rank(), count) * elemSize_;
    args.scale.count = plan_.outputElems(count);
    args.scale.factor = 1.0 / double(comm_.nranks());
  }

  // A graph that holds this launch holds its scratch and tables (prepare()
  // read the capture status of this stream).
  if (capturing_) {
    ctx->captured = true;
    scratchCaptured_ = true;
  }

  MSCCLC_LOG(Trace,
             "rank {}: launch {} at count {} (layout {}): input {} output {} "
             "scratch {} tables {}",
             comm_.rank(), plan_.name, static_cast<unsigned long long>(count),
             static_cast<unsigned long long>(args.scratchCount), args.input,
             args.output, args.scratch,
             static_cast<const void *>(args.memoryChannels));
  void *params[] = {&args};
  MSCCLC_CUDA_CHECK(api->launchKernel(
      kernel_, unsigned(rankPlan_.blocks), 1, 1, unsigned(plan_.threadsPerBlock),
      1, 1, 0, reinterpret_cast<CUstream>(stream), params, nullptr));
  if (kernelOut != output && hasResult)
    MSCCLC_CUDA_CHECK(cudaMemcpyAsync(output, kernelOut,
                                      plan_.outputElems(count) * elemSize_,
                                      cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

Status Executor::check(cudaStream_t stream, DeviceError *out) {
  DeviceGuard guard(comm_.device());
  // On the caller's stream, not the legacy one: a synchronous copy would
  // also wait for other ranks' kernels on a shared GPU, which may be
  // waiting for this rank.
  MSCCLC_TRY(readBack(&readback_->checked, error_, sizeof(MscclcErrorRecord),
                      stream));
  const MscclcErrorRecord rec = readback_->checked;
  DeviceError result;
  result.record = rec;
  if (rec.code != MSCCLC_ERR_NONE)
    result.message = describeDeviceError(plan_, rankPlan_, rec);
  if (proxyFifo_) {
    std::string proxyError = proxyFifo_->takeError();
    if (!proxyError.empty())
      result.message += (result.message.empty() ? "" : "; ") +
                        std::string("proxy: ") + proxyError;
  }
  if (!result.message.empty() && proxy_ && proxyFifo_) {
    // A kernel that gave up leaves triggers behind, and the proxy would go
    // on copying to and from buffers the caller is about to free.
    Status drained = drainAfterError(stream);
    if (!drained.isOk())
      result.message += "; " + drained.message();
  }
  if (out)
    *out = result;
  if (!result.message.empty())
    return Status(Code::DeviceError, result.message);
  return Status::ok();
}

Status Executor::drainAfterError(cudaStream_t stream) {
  // The FIFO head on the caller's stream (a synchronous copy would wait for
  // the kernels of ranks sharing the GPU), then the proxy's queue and copies.
  MSCCLC_TRY(readBack(&readback_->head, head_, sizeof(uint64_t), stream));
  return drainProxy(readback_->head, 10);
}

Status Executor::peekError(std::string *message) {
  message->clear();
  DeviceGuard guard(comm_.device());
  if (!peekStream_)
    MSCCLC_CUDA_CHECK(
        cudaStreamCreateWithFlags(&peekStream_, cudaStreamNonBlocking));
  MSCCLC_TRY(readBack(&readback_->peeked, error_, sizeof(MscclcErrorRecord),
                      peekStream_));
  const MscclcErrorRecord rec = readback_->peeked;
  if (rec.code != MSCCLC_ERR_NONE)
    *message = describeDeviceError(plan_, rankPlan_, rec);
  return Status::ok();
}

Status Executor::reset() {
  DeviceGuard guard(comm_.device());
  MSCCLC_CUDA_CHECK(cudaDeviceSynchronize());
  if (proxy_ && proxyFifo_)
    proxy_->remove(proxyFifo_.get());
  for (cudaStream_t s : portStreams_)
    MSCCLC_CUDA_CHECK(cudaStreamSynchronize(s));
  // Frames the failed launch left on TCP connections land now, not in the
  // state zeroed below.
  if (tcp_ && !tcpPeers_.empty())
    MSCCLC_TRY(tcp_->drain(tcpPeers_).context("draining tcp frames before "
                                              "the reset"));
  // Writes the proxy posted before its FIFO was removed land now (a
  // completion means the peer's memory has the data).
  if (ib_)
    MSCCLC_TRY(ib_->quiesce().context("waiting for IB writes before the reset"));
  // Nobody may signal into our semaphores once we zeroed them.
  MSCCLC_TRY(comm_.bootstrap().barrier());
  size_t nSem = rankPlan_.memoryChannels.size() + rankPlan_.portChannels.size();
  MSCCLC_CUDA_CHECK(cudaMemset(semaphores_, 0, (nSem ? nSem : 1) * sizeof(uint64_t)));
  MSCCLC_TRY(startEpochs());
  size_t slots = rankPlan_.waitSlots > 0 ? size_t(rankPlan_.waitSlots) : 1;
  MSCCLC_CUDA_CHECK(cudaMemset(waitCounters_, 0, slots * sizeof(mscclc_u64)));
  MSCCLC_CUDA_CHECK(cudaMemset(error_, 0, sizeof(MscclcErrorRecord)));
  if (scratch_)
    MSCCLC_CUDA_CHECK(cudaMemset(scratch_, 0, layout_.total()));
  // LL flags restart with the epochs: graphs replay on kept scratch too.
  for (const ScratchGeneration &g : keptScratch_)
    MSCCLC_CUDA_CHECK(cudaMemset(g.scratch, 0, g.bytes));
  if (fifoCapacity_) {
    memset(triggers_, 0, fifoCapacity_ * sizeof(MscclcTrigger));
    *tail_ = 0;
    MSCCLC_CUDA_CHECK(cudaMemset(head_, 0, sizeof(uint64_t)));
    for (uint64_t &c : signalCounters_)
      c = 0;
    proxyFifo_->setReader(FifoReader(triggers_, tail_, fifoCapacity_));
    (void)proxyFifo_->takeError();
  }
  MSCCLC_CUDA_CHECK(cudaDeviceSynchronize());
  if (proxy_ && proxyFifo_)
    proxy_->add(proxyFifo_.get());
  return comm_.bootstrap().barrier();
}

} // namespace mscclc::rt
