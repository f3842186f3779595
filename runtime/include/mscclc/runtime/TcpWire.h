//===- TcpWire.h - What a TCP transport peer sends, and its checks -*- C++ -*-===//
//
// The frames of the TCP transport (TcpTransport.h) and every check a
// receiver makes of them before it writes a byte: the header's fields, and
// the windows of its own memory that a frame may write. Nothing here reads
// a socket or calls CUDA, so the checks are fuzzed on their own
// (fuzz/TcpFrameFuzzer.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TCPWIRE_H
#define MSCCLC_RUNTIME_TCPWIRE_H

#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Status.h"
#include "mscclc/runtime/TcpTransport.h"

#include <cstdint>
#include <shared_mutex>
#include <unordered_map>

namespace mscclc::rt {

namespace tcpwire {
constexpr uint32_t kFrameMagic = 0x4d535446; // "MSTF"
constexpr uint32_t kPairMagic = 0x4d535450;  // "MSTP"
/// A drain frame asks nothing of the receiver but to count it once every
/// frame before it has landed (TcpNetwork::drain).
enum FrameType : uint32_t {
  kFrameData = 1,
  kFrameSignal = 2,
  kFrameClose = 3,
  kFrameDrain = 4
};

struct FrameHeader {
  uint32_t magic;
  uint32_t type;
  uint32_t id;       ///< zero
  uint32_t reserved; ///< zero
  uint64_t address;  ///< data, signal: where, in the receiver's space
  uint64_t size;     ///< data: bytes that follow; signal: the new value
                     ///< (close, drain: both zero)
};
static_assert(sizeof(FrameHeader) == 32, "FrameHeader has padding");

/// What the lower rank of a pair sends after the handshake (BootstrapWire.h)
/// that opens their connection.
struct PairHello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint8_t proof[32]; ///< last: the proof covers the bytes before it
};
static_assert(sizeof(PairHello) == 48, "PairHello has padding");

/// Null if `h` is a frame a receiver with slices of at most `maxSlice`
/// bytes may handle, else why not.
const char *checkFrameHeader(const FrameHeader &h, uint64_t maxSlice);
/// Null if `h`, after the handshake of `session`, opens a connection of
/// the communicator with `nonce` from a rank below `nranks`, else why not.
const char *checkPairHello(const PairHello &h, const wire::Session &session,
                           uint64_t nonce, int nranks);
} // namespace tcpwire

/// The windows of a rank's memory that its TCP peers may write: data
/// windows for puts, semaphore windows for signals.
struct TcpNetwork::Registry {
  struct Window {
    char *base;
    uint64_t size;
    MemoryKind kind;
    bool semaphores;
  };
  std::shared_mutex mutex;
  std::unordered_map<uint32_t, Window> windows;
  uint32_t next = 1;

  /// The window of that use holding [address, address + size), or null.
  /// Windows are few (a program's buffers): a scan is cheap next to a
  /// slice.
  const Window *find(uint64_t address, uint64_t size, bool semaphores) const;
};

namespace tcpwire {
/// What a receiver does with a frame it may handle.
struct FrameAction {
  enum Kind { Close, Signal, Data, Drain } kind = Close;
  /// Signal: the semaphore's window; Data: the window the bytes go to.
  const TcpNetwork::Registry::Window *window = nullptr;
};

/// Checks the header of a frame from rank `peer` (checkFrameHeader) and
/// where it writes against `registry`, whose lock the caller holds: a
/// signal must name an aligned word of a semaphore window, data must lie
/// inside one data window. An error says why the frame is refused.
Status classifyFrame(const FrameHeader &h,
                     const TcpNetwork::Registry &registry, uint64_t maxSlice,
                     int peer, FrameAction *out);
} // namespace tcpwire

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TCPWIRE_H
