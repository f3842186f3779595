//===- FuzzSecret.h - The communicator the wire fuzzers pretend to be ----===//
//
// The nonce and the secret of the communicator that BootstrapWireFuzzer
// and TcpFrameFuzzer prove and check messages under; fuzz/collect-seeds.sh
// writes its seeds with the same nonce.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_FUZZ_FUZZSECRET_H
#define MSCCLC_FUZZ_FUZZSECRET_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace mscclc::fuzz {

inline constexpr uint64_t kNonce = 0x0123456789abcdefull;

/// The 32 bytes 0, 1, ..., 31.
inline const uint8_t *secret() {
  static const auto bytes = [] {
    std::array<uint8_t, 32> b;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = uint8_t(i);
    return b;
  }();
  return bytes.data();
}

} // namespace mscclc::fuzz

#endif // MSCCLC_FUZZ_FUZZSECRET_H
