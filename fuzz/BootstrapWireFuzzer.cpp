//===- BootstrapWireFuzzer.cpp - The bootstrap's decoders on any bytes ---===//
//
// What a peer on the network (or a launcher passing a unique id) can hand
// the bootstrap, fed to the decoders of BootstrapWire.h. The first byte
// picks the message: 0, a unique id; 1, a stream of hellos at the root; 2,
// the root's answer for a rank count taken from the next byte; 3, a ring
// hello. Every decoder must return a value or an error: no crash, no
// out-of-bounds access, no allocation out of proportion to the input.
//
// Hellos carry the nonce and the secret of FuzzSecret.h; libFuzzer's
// comparison tracing finds them (and the magic) from the seeds that
// fuzz/collect-seeds.sh writes.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/BootstrapWire.h"
#include "FuzzSecret.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace mscclc::rt;
using namespace mscclc::fuzz;
using namespace mscclc::rt::wire;

namespace {

static_assert(kSecretBytes == 32, "FuzzSecret.h holds 32 bytes");

void decodeId(const uint8_t *data, size_t size) {
  UniqueId id{};
  memcpy(id.bytes, data, size < sizeof(id.bytes) ? size : sizeof(id.bytes));
  IdLayout layout;
  (void)decodeUniqueId(id, &layout);
}

/// Hellos until the roster is complete or fails, as the root reads them.
void serveHellos(const uint8_t *data, size_t size) {
  RootRoster roster(kNonce, secret());
  while (size > 0 && !roster.complete()) {
    size_t frame = size < sizeof(Hello) ? size : sizeof(Hello);
    const char *stray = nullptr;
    int rank = -1;
    if (!roster.add(data, frame, &stray, &rank).isOk())
      return;
    if (!stray && (rank < 0 || rank >= roster.nranks()))
      __builtin_trap(); // the roster accepted a rank it cannot hold
    data += frame;
    size -= frame;
  }
  if (roster.complete() &&
      roster.addresses().size() != size_t(roster.nranks()))
    __builtin_trap();
}

void decodeAnswer(const uint8_t *data, size_t size) {
  if (size == 0)
    return;
  int nranks = int(data[0]) - 8; // a few bad counts too
  std::vector<WireAddr> addrs;
  (void)decodeAddresses(data + 1, size - 1, nranks, &addrs);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  switch (data[0] % 4) {
  case 0:
    decodeId(data + 1, size - 1);
    break;
  case 1:
    serveHellos(data + 1, size - 1);
    break;
  case 2:
    decodeAnswer(data + 1, size - 1);
    break;
  default:
    (void)checkRingHello(data + 1, size - 1, kNonce, secret(), 3);
    break;
  }
  return 0;
}
