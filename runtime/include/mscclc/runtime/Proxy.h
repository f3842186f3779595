//===- Proxy.h - The CPU proxy serving port channels ----------*- C++ -*-===//
//
// GPUs cannot start copy-engine transfers, so port-channel operations are
// 16-byte triggers pushed into a FIFO in pinned host memory
// (docs/kernel-abi.md, "Port channels and the proxy FIFO"). One proxy
// thread per communicator polls the FIFOs of its executors, strictly in
// order per FIFO:
//   put    -> cudaMemcpyAsync on the channel's stream (no wait);
//   signal -> cuStreamWriteValue64 of the channel's next counter value into
//             the peer's semaphore on the same stream, so it lands strictly
//             after the channel's earlier puts (the value is fixed when the
//             write is queued, so a later signal can never be seen early);
//   flush  -> synchronise the channel's stream, then advance the tail.
// The tail is published only after a trigger is handled, so a GPU flush
// (which spins until tail passes its entry) returns after its data landed.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_PROXY_H
#define MSCCLC_RUNTIME_PROXY_H

#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/Transport.h"
#include "mscclc/runtime/Trigger.h"

#include "mscclc/device/KernelArgs.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mscclc::rt {

/// The consumer end of an MscclcFifo, on plain memory (testable without a
/// GPU).
class FifoReader {
public:
  FifoReader() = default;
  FifoReader(MscclcTrigger *triggers, volatile uint64_t *tail,
             uint32_t capacity)
      : triggers_(triggers), tail_(tail), capacity_(capacity),
        next_(tail ? *tail : 0) {}

  /// True when the entry at the tail is complete (fst != 0, valid bit set).
  bool poll(Trigger *out) const;
  /// Zeroes the entry at the tail, then publishes tail + 1.
  void pop();
  uint64_t tail() const { return next_; }

private:
  MscclcTrigger *triggers_ = nullptr;
  volatile uint64_t *tail_ = nullptr;
  uint32_t capacity_ = 0;
  uint64_t next_ = 0;
};

/// What the proxy needs for one port channel of one buffer context.
struct ProxyChannel {
  cudaStream_t stream = nullptr;
  void *src[3] = {}; ///< our input, output, scratch
  uint64_t srcExtent[3] = {};
  void *dst[3] = {}; ///< the peer's input, output, scratch
  uint64_t dstExtent[3] = {};
  uint64_t *peerSemaphore = nullptr;
  uint64_t *counter = nullptr; ///< signals sent on this plan channel
  int peer = -1;
  int planIndex = 0;
  /// Null: the copy engine over the pointers above. Else the link that
  /// carries this channel's triggers (not owned).
  Transport *transport = nullptr;
};

/// A port channel's puts as copies on its stream and its signals as
/// stream memory writes into the peer's semaphore (the header above).
class CopyEngineTransport final : public Transport {
public:
  CopyEngineTransport(ProxyChannel *channel, const DriverApi *api)
      : ch_(channel), api_(api) {}
  TransportKind kind() const override { return TransportKind::CopyEngine; }
  Status put(uint32_t srcBuffer, uint64_t srcOffset, uint32_t dstBuffer,
             uint64_t dstOffset, uint64_t size) override;
  Status signal() override;
  Status flush() override;
  /// Stream errors surface from the calls themselves.
  Status asyncError() override { return Status::ok(); }

private:
  ProxyChannel *ch_;
  const DriverApi *api_;
};

/// One executor's FIFO as the proxy serves it.
class ProxyFifo {
public:
  ProxyFifo(FifoReader reader, size_t maxChannels)
      : reader_(reader), channels_(maxChannels) {
    for (auto &c : channels_)
      c.store(nullptr, std::memory_order_relaxed);
  }
  /// Publishes the channel for `proxyId` (before a kernel can use it), or
  /// withdraws it (nullptr). After withdrawing, Proxy::waitForPass() before
  /// freeing the channel: a pass in flight may still hold it.
  void setChannel(uint32_t proxyId, ProxyChannel *channel) {
    channels_[proxyId].store(channel, std::memory_order_seq_cst);
  }
  /// Handles every ready trigger; returns how many.
  int serve(const DriverApi *api);
  /// Entries handled so far (the published tail).
  uint64_t consumed() const { return reader_.tail(); }
  /// The first error met while serving (empty if none); clears it.
  std::string takeError();
  void setReader(FifoReader reader) { reader_ = reader; }

private:
  Status handle(const Trigger &t, const DriverApi *api);
  FifoReader reader_;
  std::vector<std::atomic<ProxyChannel *>> channels_;
  std::mutex errorMutex_;
  std::string error_;
};

class Proxy {
public:
  Proxy(int device, int rank) : device_(device), rank_(rank) {}
  ~Proxy();
  Status start();
  void add(ProxyFifo *fifo);
  void remove(ProxyFifo *fifo);
  /// Returns once the proxy thread is between passes: what it read before
  /// the call (a FIFO list, a channel) is no longer in use.
  void waitForPass() const;
  /// Blocks until `fifo` consumed `count` entries or `seconds` passed.
  Status drain(ProxyFifo *fifo, uint64_t count, double seconds);

private:
  void run();
  int device_;
  int rank_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<ProxyFifo *> fifos_;
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> busy_{false};
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_PROXY_H
