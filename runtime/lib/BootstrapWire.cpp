//===- BootstrapWire.cpp - The handshake and the bootstrap's messages -----===//
//
// Frames are copied out of the byte buffer with memcpy: the buffers (a
// UniqueId's char array, a receive buffer) carry no alignment, and the
// fields are read only after their size is known to be right.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/Hash.h"

#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>

namespace mscclc::rt::wire {

namespace {

/// What each purpose's proofs start with. Versioned, so that a proof of
/// another protocol version never passes.
const char *labelOf(Purpose purpose) {
  switch (purpose) {
  case Purpose::Root:
    return "mscclc handshake v3: rank joins at the root";
  case Purpose::Ring:
    return "mscclc handshake v3: bootstrap ring";
  case Purpose::TcpPair:
    return "mscclc handshake v3: tcp transport pair";
  }
  return "mscclc handshake v3: unknown";
}

void append(std::vector<uint8_t> &out, const void *bytes, size_t size) {
  auto *p = static_cast<const uint8_t *>(bytes);
  out.insert(out.end(), p, p + size);
}

} // namespace

void Session::prove(Step step, const void *bytes, size_t size,
                    uint8_t out[kProofBytes]) const {
  std::string label = labelOf(purpose);
  uint64_t labelSize = label.size();
  uint32_t stepValue = uint32_t(step);
  std::vector<uint8_t> message;
  message.reserve(64 + label.size() + 2 * kRandomBytes + size);
  append(message, &labelSize, sizeof(labelSize));
  append(message, label.data(), label.size());
  append(message, &stepValue, sizeof(stepValue));
  append(message, &commNonce, sizeof(commNonce));
  append(message, connectorRandom, kRandomBytes);
  append(message, acceptorRandom, kRandomBytes);
  append(message, bytes, size);
  hmacSha256(secret, kSecretBytes, message.data(), message.size(), out);
}

bool Session::verify(Step step, const void *bytes, size_t size,
                     const uint8_t proof[kProofBytes]) const {
  uint8_t expected[kProofBytes];
  prove(step, bytes, size, expected);
  return equalInConstantTime(expected, proof, kProofBytes);
}

void Session::proveMessage(void *message, size_t size) const {
  auto *p = static_cast<uint8_t *>(message);
  prove(Step::ConnectorProof, p, size - kProofBytes, p + size - kProofBytes);
}

bool Session::verifyMessage(const void *message, size_t size) const {
  auto *p = static_cast<const uint8_t *>(message);
  return size >= kProofBytes &&
         verify(Step::ConnectorProof, p, size - kProofBytes,
                p + size - kProofBytes);
}

Challenge makeChallenge(Purpose purpose, uint64_t commNonce,
                        const uint8_t random[kRandomBytes]) {
  Challenge c{kMagic, uint32_t(purpose), commNonce, {}};
  memcpy(c.random, random, kRandomBytes);
  return c;
}

const char *answerChallenge(const void *frame, size_t size,
                            const uint8_t secret[kSecretBytes],
                            Purpose purpose, uint64_t commNonce, uint32_t who,
                            const uint8_t random[kRandomBytes],
                            Session *session, ChallengeAnswer *answer) {
  Challenge c;
  if (size != sizeof(c))
    return "a first frame of the wrong size";
  memcpy(&c, frame, sizeof(c));
  if (c.magic != kMagic)
    return "not an mscclc handshake (bad magic)";
  if (c.purpose != uint32_t(purpose))
    return "a handshake for another kind of connection";
  if (c.commNonce != commNonce)
    return "a handshake for another communicator (another nonce)";
  session->secret = secret;
  session->purpose = purpose;
  session->commNonce = commNonce;
  memcpy(session->connectorRandom, c.random, kRandomBytes);
  memcpy(session->acceptorRandom, random, kRandomBytes);
  answer->magic = kMagic;
  answer->who = who;
  memcpy(answer->random, random, kRandomBytes);
  session->prove(Step::AcceptorProof, &answer->who, sizeof(answer->who),
                 answer->proof);
  return nullptr;
}

const char *checkChallengeAnswer(const ChallengeAnswer &answer,
                                 uint32_t expectedWho, Session *session) {
  if (answer.magic != kMagic)
    return "not an mscclc handshake (bad magic)";
  memcpy(session->acceptorRandom, answer.random, kRandomBytes);
  // The proof first: `who` means nothing from a process without the secret.
  if (!session->verify(Step::AcceptorProof, &answer.who, sizeof(answer.who),
                       answer.proof))
    return "it does not know the communicator's secret";
  if (answer.who != expectedWho)
    return "another member of the communicator answered";
  return nullptr;
}

Status checkAddress(const WireAddr &addr) {
  if (addr.family != AF_INET && addr.family != AF_INET6)
    return invalidArgument(
        fmt::format("bootstrap: address family {} is neither IPv4 nor IPv6",
                    addr.family));
  if (addr.port == 0)
    return invalidArgument("bootstrap: an address without a port");
  return Status::ok();
}

Status decodeUniqueId(const UniqueId &id, IdLayout *out) {
  memcpy(out, id.bytes, sizeof(*out));
  if (out->magic != kMagic || out->version != kVersion)
    return invalidArgument(
        "not an mscclc unique id of this version (bad magic or version: "
        "every rank must run the same mscclc)");
  return checkAddress(out->root).context("the unique id's root address");
}

bool secretsEqual(const uint8_t *a, const uint8_t *b) {
  return equalInConstantTime(a, b, kSecretBytes);
}

RootRoster::RootRoster(uint64_t nonce) : nonce_(nonce) {}

Status RootRoster::add(const Session &session, const void *frame, size_t size,
                       const char **stray, int *rank) {
  Hello hello;
  *stray = nullptr;
  if (size != sizeof(hello)) {
    *stray = "a hello of the wrong size";
    return Status::ok();
  }
  memcpy(&hello, frame, sizeof(hello));
  // The proof first: nothing else in the frame means anything without it.
  if (hello.magic != kMagic)
    *stray = "not an mscclc hello (bad magic)";
  else if (!session.verifyMessage(&hello, sizeof(hello)))
    *stray = "a wrong proof of the secret";
  else if (hello.nonce != nonce_)
    *stray = "another communicator's nonce";
  if (*stray)
    return Status::ok();
  auto conflict = [&](const char *why) {
    return invalidArgument(fmt::format(
        "bootstrap root: rank {} of {} conflicts with {} ranks seen so far "
        "({})",
        hello.rank, hello.nranks, nranks_, why));
  };
  if (hello.nranks == 0 || hello.nranks > kMaxRanks)
    return conflict("a rank count out of range");
  if (nranks_ < 0) {
    nranks_ = int(hello.nranks);
    addrs_.resize(size_t(nranks_));
    seen_.resize(size_t(nranks_));
  }
  // Unsigned compares: a rank of 2^32-1 must not pass as -1.
  if (hello.nranks != uint32_t(nranks_))
    return conflict("different rank counts");
  if (hello.rank >= hello.nranks)
    return conflict("a rank out of range");
  if (seen_[hello.rank])
    return conflict("a duplicate rank");
  MSCCLC_TRY(checkAddress(hello.listen).context(
      fmt::format("bootstrap root: the listening address of rank {}",
                  hello.rank)));
  seen_[hello.rank] = true;
  addrs_[hello.rank] = hello.listen;
  ++arrived_;
  *rank = int(hello.rank);
  return Status::ok();
}

std::vector<char> encodeAddresses(const std::vector<WireAddr> &addrs,
                                  const Session &session) {
  size_t size = addrs.size() * sizeof(WireAddr);
  std::vector<char> out(size + kProofBytes);
  memcpy(out.data(), addrs.data(), size);
  session.prove(Step::AcceptorReply, out.data(), size,
                reinterpret_cast<uint8_t *>(out.data() + size));
  return out;
}

Status decodeAddresses(const void *bytes, size_t size, int nranks,
                       const Session &session, std::vector<WireAddr> *out) {
  if (nranks < 1 || uint32_t(nranks) > kMaxRanks ||
      size != size_t(nranks) * sizeof(WireAddr) + kProofBytes)
    return invalidArgument(fmt::format(
        "bootstrap: the root's answer has {} bytes, not {} addresses and "
        "their proof",
        size, nranks));
  size_t addrBytes = size - kProofBytes;
  auto *p = static_cast<const uint8_t *>(bytes);
  if (!session.verify(Step::AcceptorReply, p, addrBytes, p + addrBytes))
    return invalidArgument(
        "bootstrap: the root's list of addresses carries a wrong proof (it "
        "was changed on the way): refused");
  out->resize(size_t(nranks));
  memcpy(out->data(), bytes, addrBytes);
  for (int r = 0; r < nranks; ++r)
    MSCCLC_TRY(checkAddress((*out)[size_t(r)])
                   .context(fmt::format("the root's address of rank {}", r)));
  return Status::ok();
}

const char *checkRingHello(const void *frame, size_t size,
                           const Session &session, uint64_t nonce,
                           int expected) {
  RingHello hello;
  if (size != sizeof(hello))
    return "a ring hello of the wrong size";
  memcpy(&hello, frame, sizeof(hello));
  if (hello.magic != kMagic)
    return "not an mscclc ring hello (bad magic)";
  if (!session.verifyMessage(&hello, sizeof(hello)))
    return "a wrong proof of the secret";
  if (hello.nonce != nonce)
    return "another communicator's nonce";
  if (expected < 0 || hello.rank != uint32_t(expected))
    return "a hello from another rank than the previous one";
  return nullptr;
}

} // namespace mscclc::rt::wire
