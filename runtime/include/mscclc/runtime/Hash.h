//===- Hash.h - SHA-256 and HMAC-SHA256 -----------------------*- C++ -*-===//
//
// The kernel cache names each entry by the SHA-256 of everything that can
// change the binary; a weak hash would let two sources share a cubin. The
// bootstrap derives an address id's secret with it, and its connections
// prove they know the secret with HMAC-SHA256 (BootstrapWire.h). Both come
// from OpenSSL's libcrypto: reviewed code, not ours to get wrong.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_HASH_H
#define MSCCLC_RUNTIME_HASH_H

#include <cstddef>
#include <cstdint>
#include <string>

// OpenSSL's EVP_MD_CTX, declared here so users of Sha256 need not include
// OpenSSL's headers.
struct evp_md_ctx_st;

namespace mscclc::rt {

constexpr size_t kSha256Bytes = 32;

class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  void update(const void *data, size_t size);
  void update(const std::string &s) { update(s.data(), s.size()); }
  /// Adds a length-prefixed field so ("ab","c") and ("a","bc") differ.
  void field(const std::string &s);
  /// The 32 bytes of the digest; ends the hash.
  void digest(uint8_t out[kSha256Bytes]);
  /// The digest as 64 lowercase hex characters; ends the hash.
  std::string hexDigest();

private:
  ::evp_md_ctx_st *ctx_;
};

std::string sha256Hex(const std::string &data);

/// HMAC-SHA256 of `size` bytes under a `keyBytes`-byte key.
void hmacSha256(const uint8_t *key, size_t keyBytes, const void *data,
                size_t size, uint8_t out[kSha256Bytes]);

/// Whether `size` bytes at `a` and `b` are equal, in time that does not
/// depend on where they differ (a peer timing the answers learns nothing).
bool equalInConstantTime(const void *a, const void *b, size_t size);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_HASH_H
