//===- Proxy.cpp - The CPU proxy serving port channels --------------------===//

#include "mscclc/runtime/Proxy.h"
#include "mscclc/runtime/Log.h"

#include <chrono>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#define MSCCLC_PAUSE() _mm_pause()
#else
#define MSCCLC_PAUSE() std::this_thread::yield()
#endif

namespace mscclc::rt {

bool FifoReader::poll(Trigger *out) const {
  if (!triggers_ || capacity_ == 0)
    return false;
  volatile MscclcTrigger *e = &triggers_[next_ % capacity_];
  uint64_t fst = e->fst;
  if (fst == 0)
    return false;
  uint64_t snd = e->snd;
  if (!(snd & kTriggerValid))
    return false; // the second half has not landed yet
  // Re-read fst: both halves must belong to the same push.
  std::atomic_thread_fence(std::memory_order_acquire);
  fst = e->fst;
  *out = decodeTrigger(fst, snd);
  return true;
}

void FifoReader::pop() {
  volatile MscclcTrigger *e = &triggers_[next_ % capacity_];
  e->fst = 0;
  e->snd = 0;
  ++next_;
  // The GPU reuses the slot once it sees the new tail: zero it first.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *tail_ = next_;
}

std::string ProxyFifo::takeError() {
  std::lock_guard<std::mutex> lock(errorMutex_);
  std::string e;
  e.swap(error_);
  return e;
}

Status CopyEngineTransport::put(uint32_t srcBuffer, uint64_t srcOffset,
                                uint32_t dstBuffer, uint64_t dstOffset,
                                uint64_t size) {
  ProxyChannel *ch = ch_;
  PutBuffer src[3], dst[3];
  for (int b = 0; b < 3; ++b) {
    src[b] = {ch->src[b] != nullptr, ch->srcExtent[b]};
    dst[b] = {ch->dst[b] != nullptr, ch->dstExtent[b]};
  }
  MSCCLC_TRY(checkPut("port channel", ch->planIndex, src, dst, srcBuffer,
                      srcOffset, dstBuffer, dstOffset, size));
  if (size > 0)
    MSCCLC_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char *>(ch->dst[dstBuffer]) + dstOffset,
                        static_cast<char *>(ch->src[srcBuffer]) + srcOffset,
                        size, cudaMemcpyDefault, ch->stream));
  return Status::ok();
}

Status CopyEngineTransport::signal() {
  ProxyChannel *ch = ch_;
  if (!ch->peerSemaphore)
    return invalidArgument(fmt::format(
        "port channel {} signals, but the peer has no reverse channel",
        ch->planIndex));
  uint64_t value = ++*ch->counter;
  MSCCLC_CUDA_CHECK(api_->streamWriteValue64(
      ch->stream, reinterpret_cast<CUdeviceptr>(ch->peerSemaphore), value,
      CU_STREAM_WRITE_VALUE_DEFAULT));
  return Status::ok();
}

Status CopyEngineTransport::flush() {
  MSCCLC_CUDA_CHECK(cudaStreamSynchronize(ch_->stream));
  return Status::ok();
}

Status ProxyFifo::handle(const Trigger &t, const DriverApi *api) {
  if (t.proxyId >= channels_.size())
    return invalidArgument(fmt::format("trigger names proxy id {} of {}",
                                       t.proxyId, channels_.size()));
  ProxyChannel *ch = channels_[t.proxyId].load(std::memory_order_seq_cst);
  if (!ch)
    return invalidArgument(
        fmt::format("trigger names proxy id {}, which has no "
                    "channel",
                    t.proxyId));
  MSCCLC_LOG(Trace, "proxy: trigger type {} on proxy id {} (plan channel {}, "
             "peer {}), {} bytes",
             t.type, t.proxyId, ch->planIndex, ch->peer,
             static_cast<unsigned long long>(t.size));
  CopyEngineTransport copyEngine(ch, api);
  Transport &link = ch->transport ? *ch->transport : copyEngine;
  MSCCLC_TRY(link.asyncError());
  if (t.type & kTriggerPut)
    MSCCLC_TRY(
        link.put(t.srcBuffer, t.srcOffset, t.dstBuffer, t.dstOffset, t.size));
  if (t.type & kTriggerSignal)
    MSCCLC_TRY(link.signal());
  if (t.type & kTriggerFlush)
    MSCCLC_TRY(link.flush());
  return Status::ok();
}

int ProxyFifo::serve(const DriverApi *api) {
  int handled = 0;
  Trigger t;
  while (reader_.poll(&t)) {
    Status s = handle(t, api);
    if (!s.isOk()) {
      // Keep consuming: the GPU side then times out on its wait and
      // records where; the host reports this message next to it.
      MSCCLC_LOG(Error, "proxy: {}", s.message());
      std::lock_guard<std::mutex> lock(errorMutex_);
      if (error_.empty())
        error_ = s.message();
    }
    reader_.pop();
    ++handled;
  }
  return handled;
}

Proxy::~Proxy() {
  stop_.store(true);
  if (thread_.joinable())
    thread_.join();
}

Status Proxy::start() {
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  thread_ = std::thread([this] { run(); });
  return Status::ok();
}

void Proxy::add(ProxyFifo *fifo) {
  std::lock_guard<std::mutex> lock(mutex_);
  fifos_.push_back(fifo);
  version_.fetch_add(1);
}

void Proxy::remove(ProxyFifo *fifo) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = fifos_.begin(); it != fifos_.end(); ++it)
      if (*it == fifo) {
        fifos_.erase(it);
        break;
      }
    version_.fetch_add(1);
  }
  waitForPass(); // the thread no longer holds the old list
}

void Proxy::waitForPass() const {
  if (std::this_thread::get_id() == thread_.get_id())
    return;
  while (busy_.load())
    std::this_thread::yield();
}

Status Proxy::drain(ProxyFifo *fifo, uint64_t count, double seconds) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (fifo->consumed() < count) {
    if (std::chrono::steady_clock::now() > deadline)
      return Status(
          Code::Timeout,
          fmt::format("proxy of rank {} did not drain its FIFO ({} of "
                      "{} entries) within {:.0f} s",
                      rank_, static_cast<unsigned long long>(fifo->consumed()),
                      static_cast<unsigned long long>(count), seconds));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return Status::ok();
}

void Proxy::run() {
  const DriverApi *api = nullptr;
  (void)driverApi(&api);
  MSCCLC_CUDA_WARN(cudaSetDevice(device_));
  std::vector<ProxyFifo *> local;
  uint64_t seen = ~uint64_t(0);
  uint64_t idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    busy_.store(true);
    if (version_.load() != seen) {
      std::lock_guard<std::mutex> lock(mutex_);
      local = fifos_;
      seen = version_.load();
    }
    int handled = 0;
    for (ProxyFifo *f : local)
      handled += f->serve(api);
    busy_.store(false);
    if (handled) {
      idle = 0;
    } else if (++idle < (1u << 20)) {
      MSCCLC_PAUSE();
    } else {
      // Idle for a while: stop burning a core, keep latency modest.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

} // namespace mscclc::rt
