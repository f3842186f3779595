//===- TcpFrameFuzzer.cpp - The TCP transport's receiver on any bytes ----===//
//
// What a TCP transport peer can send a rank (TcpWire.h), handled as the
// receiver does. The first byte picks the message: 0, the pair hello that
// follows a connection's handshake (of a communicator with FuzzSecret.h's
// nonce and secret, for a rank count taken from the next byte; checked as
// sent and as proven by the harness); anything else, a stream of frames. Each frame is a selector byte, then a 32-byte FrameHeader, then,
// for data, its bytes. The selector names the window the header's address
// is relative to (a 4 KiB data window, a 100-byte one or 8 semaphores), so
// that the fuzzer reaches every edge of the windows without knowing where
// they are. A refused frame ends the stream, as it closes a connection.
// Accepted frames are carried out on host memory of exactly the windows'
// sizes: a write the checks let through outside a window is a crash under
// ASan, and one outside the window it was accepted for traps.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/TcpWire.h"
#include "FuzzSecret.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

using namespace mscclc::rt;
using namespace mscclc::fuzz;
using namespace mscclc::rt::tcpwire;

namespace {

constexpr uint64_t kSliceBytes = 1024;
static_assert(wire::kSecretBytes == 32, "FuzzSecret.h holds 32 bytes");

/// The session the harness proves pair hellos under.
wire::Session fuzzSession() {
  wire::Session s;
  s.secret = secret();
  s.purpose = wire::Purpose::TcpPair;
  s.commNonce = kNonce;
  return s;
}

/// A pair hello as sent (it must then lack a valid proof, else refused)
/// and proven by the harness, so that the fields behind the proof are
/// fuzzed too.
void checkHello(const uint8_t *data, size_t size) {
  if (size < 1)
    return;
  int nranks = data[0];
  wire::Session session = fuzzSession();
  PairHello h{};
  memcpy(&h, data + 1, std::min(size - 1, sizeof(h)));
  if (!checkPairHello(h, session, kNonce, nranks) &&
      !session.verifyMessage(&h, sizeof(h)))
    __builtin_trap(); // accepted a hello without its proof
  session.proveMessage(&h, sizeof(h));
  if (!checkPairHello(h, session, kNonce, nranks) &&
      (h.rank >= uint32_t(nranks) || h.nonce != kNonce ||
       h.magic != kPairMagic))
    __builtin_trap(); // accepted a hello it should have refused
}

/// Receives a stream of frames into freshly allocated windows.
void receiveFrames(const uint8_t *data, size_t size) {
  auto big = std::make_unique<char[]>(4096);
  auto small = std::make_unique<char[]>(100);
  auto semaphores = std::make_unique<uint64_t[]>(8);
  TcpNetwork::Registry registry;
  registry.windows[1] = {big.get(), 4096, MemoryKind::Host, false};
  registry.windows[2] = {small.get(), 100, MemoryKind::Host, false};
  registry.windows[3] = {reinterpret_cast<char *>(semaphores.get()),
                         8 * sizeof(uint64_t), MemoryKind::Host, true};
  const char *bases[3] = {big.get(), small.get(),
                          reinterpret_cast<char *>(semaphores.get())};
  while (size >= 1 + sizeof(FrameHeader)) {
    FrameHeader h;
    memcpy(&h, data + 1, sizeof(h));
    h.address += reinterpret_cast<uint64_t>(bases[data[0] % 3]);
    data += 1 + sizeof(h);
    size -= 1 + sizeof(h);
    FrameAction action;
    if (!classifyFrame(h, registry, kSliceBytes, 1, &action).isOk() ||
        action.kind == FrameAction::Close)
      return;
    if (action.kind == FrameAction::Drain)
      continue; // writes nothing
    const TcpNetwork::Registry::Window &w = *action.window;
    uint64_t base = reinterpret_cast<uint64_t>(w.base);
    uint64_t bytes = action.kind == FrameAction::Signal ? 8 : h.size;
    if (h.address < base || h.address - base > w.size ||
        bytes > w.size - (h.address - base) ||
        w.semaphores != (action.kind == FrameAction::Signal))
      __builtin_trap(); // accepted a write outside its window
    if (action.kind == FrameAction::Signal) {
      *reinterpret_cast<uint64_t *>(h.address) = h.size;
      continue;
    }
    if (size < h.size)
      return; // a frame cut short: the receiver's read times out
    memcpy(reinterpret_cast<char *>(h.address), data, h.size);
    data += h.size;
    size -= h.size;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  if (data[0] == 0)
    checkHello(data + 1, size - 1);
  else
    receiveFrames(data + 1, size - 1);
  return 0;
}
