//===- TcpStaging.cpp - GPU memory behind the TCP transport ---------------===//

#include "mscclc/runtime/TcpStaging.h"
#include "mscclc/runtime/Cuda.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <vector>

namespace mscclc::rt {

namespace {

/// Events per copier: more than the copies a connection has in flight (8
/// slices per direction), so copy() seldom waits to reuse one.
constexpr int kCopierEvents = 32;

class CudaCopier final : public StagingCopier {
public:
  /// `events` are the copier's for its whole life: copy() creates none,
  /// because creating one takes a driver lock that a thread blocked in the
  /// driver (on a stream whose kernel waits for this copy) may hold.
  CudaCopier(int device, cudaStream_t stream, bool owned,
             std::vector<cudaEvent_t> events, uint64_t *values)
      : device_(device), stream_(stream), owned_(owned),
        free_(std::move(events)), values_(values) {}
  ~CudaCopier() override {
    DeviceGuard guard(device_);
    MSCCLC_CUDA_WARN(cudaStreamSynchronize(stream_));
    for (auto &p : pending_)
      MSCCLC_CUDA_WARN(cudaEventDestroy(p.second));
    for (cudaEvent_t e : free_)
      MSCCLC_CUDA_WARN(cudaEventDestroy(e));
    MSCCLC_CUDA_WARN(cudaFreeHost(values_));
    if (owned_)
      MSCCLC_CUDA_WARN(cudaStreamDestroy(stream_));
  }

  Status copy(void *dst, const void *src, uint64_t size,
              uint64_t *ticket) override {
    std::lock_guard<std::mutex> lock(mutex_);
    MSCCLC_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, stream_));
    return record(ticket);
  }

  Status fence(uint64_t *ticket) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return record(ticket);
  }

  /// An 8-byte copy from pinned memory, not a stream memory write: with
  /// several ranks on one GPU, a stream write into a semaphore that a
  /// running kernel spins on was seen never to land (and to hold up the
  /// stream's later copies), where a copy lands.
  Status store(uint64_t *address, uint64_t value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    MSCCLC_TRY(reserveEvent());
    // The slot of ticket issued_ + 1: its last user, kCopierEvents tickets
    // back, is done (reserveEvent leaves fewer in flight).
    uint64_t *slot = &values_[(issued_ + 1) % kCopierEvents];
    *slot = value;
    MSCCLC_CUDA_CHECK(cudaMemcpyAsync(address, slot, sizeof(uint64_t),
                                      cudaMemcpyHostToDevice, stream_));
    uint64_t ticket = 0;
    return record(&ticket);
  }

  Status wait(uint64_t ticket) override {
    for (;;) {
      cudaEvent_t e = nullptr;
      uint64_t t = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (finished_ >= ticket || pending_.empty())
          return Status::ok();
        t = pending_.front().first;
        e = pending_.front().second;
      }
      // Not under the lock: the proxy queues copies meanwhile.
      MSCCLC_CUDA_CHECK(cudaEventSynchronize(e));
      std::lock_guard<std::mutex> lock(mutex_);
      if (!pending_.empty() && pending_.front().first == t) {
        pending_.pop_front();
        free_.push_back(e);
        finished_ = t;
      }
    }
  }

private:
  /// Makes an event free (under mutex_): with every one marking a copy in
  /// flight, the oldest is reused once that copy is done (copies finish in
  /// order on the stream).
  Status reserveEvent() {
    if (!free_.empty())
      return Status::ok();
    auto [t, oldest] = pending_.front();
    pending_.pop_front();
    free_.push_back(oldest);
    MSCCLC_CUDA_CHECK(cudaEventSynchronize(oldest));
    finished_ = std::max(finished_, t);
    return Status::ok();
  }

  /// Records the ticket of everything queued so far (under mutex_).
  Status record(uint64_t *ticket) {
    MSCCLC_TRY(reserveEvent());
    cudaEvent_t e = free_.back();
    free_.pop_back();
    cudaError_t recorded = cudaEventRecord(e, stream_);
    if (recorded != cudaSuccess) {
      free_.push_back(e);
      MSCCLC_CUDA_CHECK(recorded);
    }
    *ticket = ++issued_;
    pending_.emplace_back(*ticket, e);
    return Status::ok();
  }

  int device_;
  cudaStream_t stream_;
  bool owned_;
  std::mutex mutex_;
  uint64_t issued_ = 0, finished_ = 0;
  std::deque<std::pair<uint64_t, cudaEvent_t>> pending_;
  std::vector<cudaEvent_t> free_;
  uint64_t *values_; ///< pinned: kCopierEvents words that stores copy from
};

class CudaStaging final : public StagingBackend {
public:
  explicit CudaStaging(int device) : device_(device) {}
  Status allocate(size_t bytes, void **out) override {
    DeviceGuard guard(device_);
    MSCCLC_CUDA_CHECK(cudaHostAlloc(out, bytes, cudaHostAllocPortable));
    return Status::ok();
  }
  void release(void *p) override { MSCCLC_CUDA_WARN(cudaFreeHost(p)); }
  Status copier(void *stream, std::unique_ptr<StagingCopier> *out) override {
    DeviceGuard guard(device_);
    auto s = static_cast<cudaStream_t>(stream);
    bool owned = !s;
    if (owned)
      MSCCLC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> events;
    // On a failure, what was made so far is destroyed before the error returns.
    auto undo = [&] {
      for (cudaEvent_t made : events)
        MSCCLC_CUDA_WARN(cudaEventDestroy(made));
      if (owned)
        MSCCLC_CUDA_WARN(cudaStreamDestroy(s));
    };
    for (int i = 0; i < kCopierEvents; ++i) {
      cudaEvent_t e = nullptr;
      cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (err != cudaSuccess) {
        undo();
        MSCCLC_CUDA_CHECK(err);
      }
      events.push_back(e);
    }
    void *values = nullptr;
    cudaError_t err = cudaHostAlloc(&values, kCopierEvents * sizeof(uint64_t),
                                    cudaHostAllocPortable);
    if (err != cudaSuccess) {
      undo();
      MSCCLC_CUDA_CHECK(err);
    }
    *out = std::make_unique<CudaCopier>(device_, s, owned, std::move(events),
                                        static_cast<uint64_t *>(values));
    return Status::ok();
  }
  void bindThread() override { MSCCLC_CUDA_WARN(cudaSetDevice(device_)); }

private:
  int device_;
};

} // namespace

std::shared_ptr<StagingBackend> cudaStagingBackend(int device) {
  return std::make_shared<CudaStaging>(device);
}

} // namespace mscclc::rt
