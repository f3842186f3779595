//===- Hash.h - SHA-256 for cache keys ------------------------*- C++ -*-===//
//
// The kernel cache names each entry by the SHA-256 of everything that can
// change the binary; a weak hash would let two sources share a cubin. The
// bootstrap derives an address id's secret from the launcher's with it.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_HASH_H
#define MSCCLC_RUNTIME_HASH_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mscclc::rt {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(const std::string &s) { update(s.data(), s.size()); }
  /// Adds a length-prefixed field so ("ab","c") and ("a","bc") differ.
  void field(const std::string &s);
  /// The 32 bytes of the digest; ends the hash.
  void digest(uint8_t out[32]);
  /// The digest as 64 lowercase hex characters; ends the hash.
  std::string hexDigest();

private:
  void block(const uint8_t *p);
  uint32_t h_[8];
  uint8_t buf_[64];
  uint64_t total_ = 0;
  size_t used_ = 0;
};

std::string sha256Hex(const std::string &data);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_HASH_H
