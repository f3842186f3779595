//===- Hash.cpp - SHA-256 and HMAC-SHA256 from libcrypto ------------------===//
//
// libcrypto's calls fail only when out of memory or misbuilt; a hash that
// silently came out wrong would name the wrong cache entry or let a
// handshake through, so a failure stops the process with a message.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Hash.h"

#include <cstdio>
#include <cstdlib>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace mscclc::rt {

namespace {
[[noreturn]] void cryptoFailed(const char *call) {
  fprintf(stderr, "mscclc: OpenSSL's %s failed (out of memory?)\n", call);
  abort();
}
} // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1)
    cryptoFailed("EVP_DigestInit_ex(SHA-256)");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void *data, size_t size) {
  if (size > 0 && EVP_DigestUpdate(ctx_, data, size) != 1)
    cryptoFailed("EVP_DigestUpdate");
}

void Sha256::field(const std::string &s) {
  uint64_t n = s.size();
  update(&n, sizeof(n));
  update(s);
}

void Sha256::digest(uint8_t out[kSha256Bytes]) {
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_, out, &length) != 1 || length != kSha256Bytes)
    cryptoFailed("EVP_DigestFinal_ex");
}

std::string Sha256::hexDigest() {
  uint8_t bytes[kSha256Bytes];
  digest(bytes);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 0xf];
  }
  return out;
}

std::string sha256Hex(const std::string &data) {
  Sha256 h;
  h.update(data);
  return h.hexDigest();
}

void hmacSha256(const uint8_t *key, size_t keyBytes, const void *data,
                size_t size, uint8_t out[kSha256Bytes]) {
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key, int(keyBytes),
            static_cast<const unsigned char *>(data), size, out, &length) ||
      length != kSha256Bytes)
    cryptoFailed("HMAC(SHA-256)");
}

bool equalInConstantTime(const void *a, const void *b, size_t size) {
  return CRYPTO_memcmp(a, b, size) == 0;
}

} // namespace mscclc::rt
