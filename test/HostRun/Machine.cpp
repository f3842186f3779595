//===- Machine.cpp - N ranks' memory, channels, proxies and launches -----===//

#include "Machine.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace hostrun {

namespace {

constexpr uint64_t kGuard = 256;

/// Trigger types (docs/kernel-abi.md, "Port channel triggers").
constexpr uint32_t kPut = 1, kSignal = 2;

/// What an allocation holds outside its logical extent, which kernels must
/// leave alone.
unsigned char guardByte(uint64_t i) {
  return static_cast<unsigned char>((i * 0x9d + 0x35) ^ (i >> 8));
}

/// A delay of up to `limit` microseconds, the same for the same inputs.
std::chrono::microseconds jitter(uint64_t seed, uint64_t a, uint64_t b,
                                 unsigned limit) {
  uint64_t z = seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull);
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  return std::chrono::microseconds(limit ? (z ^ (z >> 29)) % limit : 0);
}

const char *codeText(uint32_t code) {
  switch (code) {
  case MSCCLC_ERR_TIMEOUT:
    return "timed out";
  case MSCCLC_ERR_ABORTED:
    return "gave up after a failure elsewhere";
  case MSCCLC_ERR_ABI_MISMATCH:
    return "refused the ABI version";
  case MSCCLC_ERR_BAD_ARGS:
    return "refused its arguments (rank, rank count or grid size)";
  }
  return "failed";
}

const char *opText(uint32_t op) {
  switch (op) {
  case MSCCLC_OPC_WAIT:
    return "waiting on a semaphore";
  case MSCCLC_OPC_LL_READ:
    return "reading LL packets";
  case MSCCLC_OPC_FIFO_PUSH:
    return "waiting for room in the proxy FIFO";
  case MSCCLC_OPC_FLUSH:
    return "waiting for a flush";
  case MSCCLC_OPC_ENTRY:
    return "at kernel entry";
  case MSCCLC_OPC_SCALE:
    return "waiting for the rank's other blocks";
  }
  return "";
}

} // namespace

/// Emulated device memory, 256-byte aligned as cudaMalloc's: kGuard bytes
/// and `front` more before data(), kGuard after its `bytes`.
class Allocation {
public:
  void allocate(uint64_t bytes, uint64_t front) {
    front_ = kGuard + front;
    bytes_ = bytes;
    total_ = (front_ + bytes + kGuard + 255) / 256 * 256;
    mem_.reset(static_cast<unsigned char *>(std::aligned_alloc(256, total_)));
    if (!mem_)
      throw std::bad_alloc();
    std::memset(mem_.get(), 0, total_);
  }
  unsigned char *data() const { return mem_.get() + front_; }
  uint64_t bytes() const { return bytes_; }

  /// The pattern everywhere but the `used` bytes at data().
  void guard(uint64_t used) {
    for (uint64_t i = 0; i < total_; ++i)
      if (i < front_ || i >= front_ + used)
        mem_.get()[i] = guardByte(i);
  }
  /// Where, from data(), the first changed byte outside `used` lies.
  std::optional<int64_t> trampled(uint64_t used) const {
    for (uint64_t i = 0; i < total_; ++i)
      if ((i < front_ || i >= front_ + used) && mem_.get()[i] != guardByte(i))
        return int64_t(i) - int64_t(front_);
    return std::nullopt;
  }

private:
  struct FreeBytes {
    void operator()(unsigned char *p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char, FreeBytes> mem_;
  uint64_t front_ = 0, bytes_ = 0, total_ = 0;
};

/// A rank's scratch region and the channels that name it: the runtime
/// allocates a new, zeroed one when a count needs more scratch than the
/// last one has (and keeps the old one for launches still using it).
struct Generation {
  Allocation scratch;
  uint64_t bytes = 0;
  std::vector<MscclcMemoryChannel> memory;
  std::vector<MscclcPortChannel> port;
};

struct Machine::Rank {
  MscclcHostKernel kernel = nullptr;
  Allocation input, output; ///< in place: output only
  unsigned char *in = nullptr, *out = nullptr;
  uint64_t inBytes = 0, outBytes = 0; ///< at the largest count
  std::vector<mscclc_u64> memorySemaphores, portSemaphores;
  std::vector<Generation> generations;
  std::vector<MscclcTrigger> triggers;
  mscclc_u64 head = 0, tail = 0;
  std::vector<mscclc_u32> blockEpoch;
  std::vector<mscclc_u64> waitCounters;
  MscclcErrorRecord error = {};
  std::thread proxy;
  /// For the watchdog: the launch under way, and its blocks still running.
  std::atomic<unsigned> launch{0};
  std::unique_ptr<std::atomic<bool>[]> running;

  unsigned char *buffer(uint32_t id, size_t generation) const {
    return id == MSCCLC_BUF_INPUT    ? in
           : id == MSCCLC_BUF_OUTPUT ? out
                                     : generations[generation].scratch.data();
  }
  uint64_t extent(uint32_t id, size_t generation) const {
    return id == MSCCLC_BUF_INPUT    ? inBytes
           : id == MSCCLC_BUF_OUTPUT ? outBytes
                                     : generations[generation].bytes;
  }
};

Machine::Machine(const Plan &plan, const MscclcHostUnit &unit,
                 const MachineOptions &options,
                 const std::vector<uint64_t> &counts)
    : plan_(plan), unit_(unit), options_(options) {
  const unsigned size = unit.elemSize;
  // Scratch generations, as the runtime grows scratch: a new one for a
  // count past the one the current scratch is laid out for (a smaller
  // count keeps the layout, kernel argument scratchCount).
  std::vector<uint64_t> capacity;
  uint64_t maxCount = 0;
  for (uint64_t count : counts) {
    if (layoutCount_.empty() || count > layoutCount_.back()) {
      layoutCount_.push_back(count);
      capacity.push_back(mscclc_hostrun_scratch_bytes(
          plan.scratch.data(), int(plan.scratch.size()), count, plan.chunks));
    }
    generationOf_.push_back(capacity.size() - 1);
    maxCount = std::max(maxCount, count);
  }
  for (const RankPlan &rp : plan.rankPlans)
    if (rp.port.size() * capacity.size() > 65536)
      throw std::runtime_error("more port channels and scratch generations "
                               "than 16-bit proxy ids tell apart");
  const uint64_t front = options.offsetElems * size;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan &rp = plan.rankPlans[size_t(r)];
    auto rank = std::make_unique<Rank>();
    rank->kernel = reinterpret_cast<MscclcHostKernel>(
        dlsym(RTLD_DEFAULT, rp.kernel.c_str()));
    if (!rank->kernel)
      throw std::runtime_error(
          fmt::format("kernel {} of rank {} is not in this binary (compiled "
                      "from another program?)",
                      rp.kernel, r));
    const Geometry g = geometry(plan, r, maxCount);
    rank->outBytes = g.bufElems * size;
    rank->output.allocate(rank->outBytes, front);
    rank->out = rank->output.data();
    if (plan.inPlace) {
      rank->in = rank->out;
      rank->inBytes = rank->outBytes;
    } else {
      rank->inBytes = g.inElems * size;
      rank->input.allocate(rank->inBytes, front);
      rank->in = rank->input.data();
    }
    rank->generations.resize(capacity.size());
    for (size_t g = 0; g < capacity.size(); ++g) {
      Generation &gen = rank->generations[g];
      gen.bytes = capacity[g];
      gen.scratch.allocate(gen.bytes, 0);
      gen.scratch.guard(gen.bytes);
    }
    rank->memorySemaphores.assign(rp.memory.size(), 0);
    rank->portSemaphores.assign(rp.port.size(), 0);
    if (plan.usesPortChannels)
      rank->triggers.assign(options.fifoCapacity, MscclcTrigger{0, 0});
    rank->blockEpoch.assign(rp.blocks, 0);
    rank->waitCounters.assign(rp.waitSlots, 0);
    rank->running.reset(new std::atomic<bool>[rp.blocks]());
    ranks_.push_back(std::move(rank));
  }
  // Channels, now that every rank's memory exists: per generation, whose
  // port channels get proxy ids of their own (as the runtime's buffer
  // contexts do), so the proxy knows which scratch a trigger means.
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan &rp = plan.rankPlans[size_t(r)];
    Rank &rank = *ranks_[size_t(r)];
    for (size_t g = 0; g < capacity.size(); ++g) {
      Generation &gen = rank.generations[g];
      for (size_t i = 0; i < rp.memory.size(); ++i) {
        const PlanChannel &c = rp.memory[i];
        Rank &peer = *ranks_[size_t(c.peer)];
        MscclcMemoryChannel m = {};
        // Only the buffers the plan says the kernel touches are mapped.
        m.peerInput = c.peerBuffer[Input] ? peer.in : nullptr;
        m.peerOutput = c.peerBuffer[Output] ? peer.out : nullptr;
        m.peerScratch = c.peerBuffer[Scratch]
                            ? peer.generations[g].scratch.data()
                            : nullptr;
        m.peerSemaphore = c.peerIndex >= 0
                              ? &peer.memorySemaphores[size_t(c.peerIndex)]
                              : nullptr;
        m.semaphore = &rank.memorySemaphores[i];
        gen.memory.push_back(m);
      }
      for (size_t i = 0; i < rp.port.size(); ++i)
        gen.port.push_back(MscclcPortChannel{uint32_t(g * rp.port.size() + i),
                                             0, &rank.portSemaphores[i]});
    }
  }
}

Machine::~Machine() {
  stopProxies_ = true;
  for (auto &r : ranks_)
    if (r->proxy.joinable())
      r->proxy.join();
}

void Machine::fail(std::string what, bool cause) {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_.emplace_back(cause, std::move(what));
}

std::vector<std::string> Machine::failures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (bool cause : {true, false})
    for (const auto &f : failures_)
      if (f.first == cause)
        out.push_back(f.second);
  return out;
}

std::string Machine::errorText(int r, unsigned k, uint64_t count) const {
  const MscclcErrorRecord &e = ranks_[size_t(r)]->error;
  const RankPlan &rp = plan_.rankPlans[size_t(r)];
  std::string where = opText(e.op);
  if (e.channelKind == MSCCLC_CHAN_MEMORY ||
      e.channelKind == MSCCLC_CHAN_PORT) {
    const bool memory = e.channelKind == MSCCLC_CHAN_MEMORY;
    const std::vector<PlanChannel> &list = memory ? rp.memory : rp.port;
    where +=
        fmt::format(" of {} channel {}", memory ? "memory" : "port", e.channel);
    if (e.channel < list.size())
      where += fmt::format(" ({}, to rank {})", list[e.channel].name,
                           list[e.channel].peer);
  }
  if (e.line)
    where += fmt::format(", .mscl line {}", e.line);
  return fmt::format("rank {}, launch {} (count {}): block {} {}{}{}: "
                     "expected {}, observed {}",
                     r, k, count, e.block, codeText(e.code),
                     where.empty() ? "" : " ", where,
                     static_cast<unsigned long long>(e.expected),
                     static_cast<unsigned long long>(e.observed));
}

void Machine::launch(int r, unsigned k, uint64_t count) {
  Rank &rank = *ranks_[size_t(r)];
  const RankPlan &rp = plan_.rankPlans[size_t(r)];
  MscclcKernelArgs a = {};
  a.abiVersion = MSCCLC_ABI_VERSION;
  a.rank = uint32_t(r);
  a.nranks = uint32_t(plan_.ranks);
  a.input = rank.in;
  a.output = rank.out;
  const Generation &gen = rank.generations[generationOf_[k]];
  a.scratch = gen.scratch.data();
  a.count = count;
  a.scratchCount = layoutCount_[generationOf_[k]];
  a.memoryChannels = gen.memory.data();
  a.portChannels = gen.port.data();
  if (plan_.usesPortChannels)
    a.fifo = MscclcFifo{rank.triggers.data(), &rank.head, &rank.tail,
                        options_.fifoCapacity, 0};
  a.state = MscclcDeviceState{rank.blockEpoch.data(), rank.waitCounters.data()};
  a.error = &rank.error;
  a.abortFlag = &abort_;
  a.timeoutNs = options_.timeoutNs;
  rank.launch = k;
  std::vector<std::thread> blocks;
  for (unsigned b = 0; b < rp.blocks; ++b) {
    rank.running[b] = true;
    blocks.emplace_back([&, b] {
      if (options_.jitterUs)
        std::this_thread::sleep_for(jitter(options_.seed, uint64_t(r) << 32 | k,
                                           b + 1, options_.jitterUs));
      mscclc_hostrun_run_block(rank.kernel, &a, b, rp.blocks, options_.threads);
      rank.running[b] = false;
      ++progress_;
    });
  }
  for (std::thread &t : blocks)
    t.join();
}

void Machine::waitForAll(const std::vector<unsigned> &counter, unsigned k,
                         bool served) const {
  for (;;) {
    bool ready = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (unsigned n : counter)
        ready &= n >= k;
    }
    if ((ready && (!served || drained())) ||
        __atomic_load_n(&abort_, __ATOMIC_RELAXED))
      return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

bool Machine::drained() const {
  for (const auto &r : ranks_)
    if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) !=
        __atomic_load_n(&r->head, __ATOMIC_RELAXED))
      return false;
  return true;
}

void Machine::stream(int r, const std::vector<Case> &cases,
                     std::vector<std::vector<Snapshot>> &snaps) {
  Rank &rank = *ranks_[size_t(r)];
  const unsigned size = unit_.elemSize;
  for (unsigned k = 0; k < cases.size(); ++k) {
    // A synchronised launch starts once every rank finished the last one,
    // every proxy served it and every rank has its buffers ready: the
    // first launch and a new scratch generation (collective steps in the
    // runtime) and, with lockstep, every launch. A smaller count is not:
    // the runtime keeps the scratch and its layout.
    const bool sync = k == 0 || options_.lockstep ||
                      generationOf_[k] != generationOf_[k - 1];
    if (sync && k > 0)
      waitForAll(completed_, k, true);
    if (options_.jitterUs)
      std::this_thread::sleep_for(
          jitter(options_.seed, uint64_t(r) << 32 | k, 0, options_.jitterUs));
    if (__atomic_load_n(&abort_, __ATOMIC_RELAXED))
      return;
    const RankCase &rc = cases[k].ranks[size_t(r)];
    const uint64_t outUsed = rc.initial.size(), inUsed = rc.input.size();
    rank.output.guard(outUsed);
    std::memcpy(rank.out, rc.initial.data(), outUsed);
    if (!plan_.inPlace) {
      rank.input.guard(inUsed);
      std::memcpy(rank.in, rc.input.data(), inUsed);
    }
    if (sync) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        prepared_[size_t(r)] = k + 1;
      }
      waitForAll(prepared_, k + 1, false);
      if (__atomic_load_n(&abort_, __ATOMIC_RELAXED))
        return;
    }
    launch(r, k, cases[k].count);
    if (rank.error.code != MSCCLC_ERR_NONE) {
      fail(errorText(r, k, cases[k].count),
           rank.error.code != MSCCLC_ERR_ABORTED);
      __atomic_store_n(&abort_, 1u, __ATOMIC_RELAXED);
      return;
    }
    auto guardFailure = [&](const char *what, const Allocation &mem,
                            uint64_t used) {
      std::optional<int64_t> at = mem.trampled(used);
      if (!at)
        return false;
      fail(fmt::format("rank {}, launch {} (count {}): the {} buffer's byte "
                       "{} {} was written ({} bytes in use; element {})",
                       r, k, cases[k].count, what, *at,
                       *at < 0 ? "before its start" : "past its end", used,
                       *at < 0 ? -((-*at + size - 1) / size) : *at / size),
           true);
      return true;
    };
    bool trampled = guardFailure(plan_.inPlace ? "in-place" : "output",
                                 rank.output, outUsed);
    if (!plan_.inPlace)
      trampled |= guardFailure("input", rank.input, inUsed);
    const Generation &gen = rank.generations[generationOf_[k]];
    trampled |= guardFailure("scratch", gen.scratch, gen.bytes);
    Snapshot &s = snaps[k][size_t(r)];
    s.output.assign(rank.out, rank.out + outUsed);
    if (!plan_.inPlace)
      s.input.assign(rank.in, rank.in + inUsed);
    s.ran = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      completed_[size_t(r)] = k + 1;
    }
    if (trampled) {
      __atomic_store_n(&abort_, 1u, __ATOMIC_RELAXED);
      return;
    }
  }
}

std::string Machine::serve(int r, uint64_t fst, uint64_t snd) {
  const uint64_t mask36 = (1ull << 36) - 1;
  const uint64_t dstOffset = fst & mask36, srcOffset = snd & mask36;
  const uint32_t dstBuffer = uint32_t(fst >> 36 & 3),
                 srcBuffer = uint32_t(fst >> 38 & 3),
                 type = uint32_t(fst >> 40 & 7),
                 proxyId = uint32_t(fst >> 43 & 0xffff);
  const uint64_t size = snd >> 36 & ((1ull << 27) - 1);
  const RankPlan &rp = plan_.rankPlans[size_t(r)];
  if (fst >> 59)
    return fmt::format("trigger 0x{:016x} 0x{:016x} sets reserved bits", fst,
                       snd);
  const size_t nPort = rp.port.size();
  Rank &self = *ranks_[size_t(r)];
  if (nPort == 0 || proxyId >= nPort * self.generations.size())
    return fmt::format("trigger names proxy id {}, of {} port channels",
                       proxyId, nPort);
  const size_t gen = proxyId / nPort;
  const PlanChannel &c = rp.port[proxyId % nPort];
  Rank &peer = *ranks_[size_t(c.peer)];
  if (type & kPut) {
    if (srcBuffer > 2 || dstBuffer > 2)
      return fmt::format("port channel {} ({}) put names buffer {} -> {}",
                         c.index, c.name, srcBuffer, dstBuffer);
    const uint64_t srcExtent = self.extent(srcBuffer, gen),
                   dstExtent = peer.extent(dstBuffer, gen);
    if (srcOffset > srcExtent || size > srcExtent - srcOffset ||
        dstOffset > dstExtent || size > dstExtent - dstOffset)
      return fmt::format(
          "port channel {} ({}) put of {} bytes at {} -> {} runs past a "
          "buffer (source {}: {} bytes, destination {}: {} bytes)",
          c.index, c.name, size, srcOffset, dstOffset, srcBuffer, srcExtent,
          dstBuffer, dstExtent);
    if (size)
      std::memmove(peer.buffer(dstBuffer, gen) + dstOffset,
                   self.buffer(srcBuffer, gen) + srcOffset, size);
  }
  if (type & kSignal) {
    if (c.peerIndex < 0)
      return fmt::format("port channel {} ({}) signals, but rank {} has no "
                         "reverse channel",
                         c.index, c.name, c.peer);
    // After the put above: copies are done when the proxy gets here.
    __atomic_fetch_add(&peer.portSemaphores[size_t(c.peerIndex)], 1ull,
                       __ATOMIC_RELEASE);
  }
  // A flush waits for the channel's earlier copies: all done already.
  return {};
}

void Machine::proxy(int r) {
  Rank &rank = *ranks_[size_t(r)];
  uint64_t next = 0;
  unsigned idle = 0;
  for (;;) {
    MscclcTrigger *e = &rank.triggers[next % options_.fifoCapacity];
    // Both halves, the valid one first (host/Primitives.h storeTrigger).
    const uint64_t snd = __atomic_load_n(&e->snd, __ATOMIC_ACQUIRE);
    const uint64_t fst = __atomic_load_n(&e->fst, __ATOMIC_ACQUIRE);
    if (!(snd >> 63) || fst == 0) {
      if (stopProxies_)
        return;
      if (++idle < 64)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    idle = 0;
    const std::string error = serve(r, fst, snd);
    if (!error.empty()) {
      // Consumed anyway, as the runtime does: the kernel's wait then
      // times out, and this says why.
      fail(fmt::format("rank {} proxy: {}", r, error), true);
      __atomic_store_n(&abort_, 1u, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->fst, 0ull, __ATOMIC_RELAXED);
    __atomic_store_n(&e->snd, 0ull, __ATOMIC_RELAXED);
    ++next;
    __atomic_store_n(&rank.tail, next, __ATOMIC_RELEASE);
  }
}

std::string Machine::status() const {
  std::string s;
  for (int r = 0; r < plan_.ranks; ++r) {
    const Rank &rank = *ranks_[size_t(r)];
    std::string blocks;
    for (unsigned b = 0; b < plan_.rankPlans[size_t(r)].blocks; ++b)
      if (rank.running[b])
        blocks += (blocks.empty() ? "" : ", ") + std::to_string(b);
    if (!blocks.empty())
      s += fmt::format("\n  rank {} launch {}: still running block(s) {}", r,
                       rank.launch.load(), blocks);
  }
  return s;
}

bool Machine::run(const std::vector<Case> &cases,
                  std::vector<std::vector<Snapshot>> &snaps) {
  const int n = plan_.ranks;
  snaps.assign(cases.size(), std::vector<Snapshot>(size_t(n)));
  completed_.assign(size_t(n), 0);
  prepared_.assign(size_t(n), 0);
  if (plan_.usesPortChannels)
    for (int r = 0; r < n; ++r)
      ranks_[size_t(r)]->proxy = std::thread([this, r] { proxy(r); });
  std::atomic<int> ended{0};
  std::vector<std::thread> streams;
  for (int r = 0; r < n; ++r)
    streams.emplace_back([&, r] {
      stream(r, cases, snaps);
      ++ended;
    });
  // Spins give up after the time-out, so a launch that makes no progress
  // for twice as long is stuck somewhere else: say where, and end.
  using Clock = std::chrono::steady_clock;
  const auto limit = std::chrono::nanoseconds(2 * options_.timeoutNs) +
                     std::chrono::seconds(10);
  uint64_t seen = progress_;
  auto since = Clock::now();
  while (ended < n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (progress_ != seen) {
      seen = progress_;
      since = Clock::now();
    } else if (Clock::now() - since > limit) {
      std::printf("hostrun: FAIL: no thread block returned for %.0f s:%s\n",
                  std::chrono::duration<double>(limit).count(),
                  status().c_str());
      for (const std::string &f : failures())
        std::printf("%s\n", f.c_str());
      std::fflush(stdout);
      std::_Exit(1);
    }
  }
  for (std::thread &t : streams)
    t.join();
  // Triggers the last launches left in the FIFOs are still served.
  const auto deadline = Clock::now() +
                        std::chrono::nanoseconds(options_.timeoutNs) +
                        std::chrono::seconds(1);
  while (!drained() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  for (int r = 0; r < n; ++r) {
    const Rank &rank = *ranks_[size_t(r)];
    if (rank.tail != rank.head)
      fail(fmt::format("rank {} proxy: {} triggers left unserved", r,
                       rank.head - rank.tail),
           true);
  }
  stopProxies_ = true;
  for (auto &r : ranks_)
    if (r->proxy.joinable())
      r->proxy.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return failures_.empty();
}

} // namespace hostrun
