//===- BootstrapWireFuzzer.cpp - The bootstrap's decoders on any bytes ---===//
//
// What a peer on the network (or a launcher passing a unique id) can hand
// the bootstrap, fed to the decoders of BootstrapWire.h. The first byte
// picks the message: 0, a unique id; 1, a stream of hellos at the root; 2,
// the root's answer for a rank count taken from the next byte; 3, a ring
// hello; 4, a handshake's challenge and a forged answer to one. Every
// decoder must return a value or an error: no crash, no out-of-bounds
// access, no allocation out of proportion to the input.
//
// Messages after a handshake carry an HMAC that random bytes never match.
// So that the fields behind it are fuzzed too, the hellos and the answer
// of 1 to 3 are proven by this harness, under a fixed session with the
// secret of FuzzSecret.h; the same bytes unproven must be refused (a
// trap otherwise), and so must a forged answer to a challenge.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/BootstrapWire.h"
#include "FuzzSecret.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace mscclc::rt;
using namespace mscclc::fuzz;
using namespace mscclc::rt::wire;

namespace {

static_assert(kSecretBytes == 32, "FuzzSecret.h holds 32 bytes");

/// The session every proven message of this harness is proven under.
Session fuzzSession(Purpose purpose) {
  Session s;
  s.secret = secret();
  s.purpose = purpose;
  s.commNonce = kNonce;
  for (size_t i = 0; i < kRandomBytes; ++i) {
    s.connectorRandom[i] = uint8_t(i);
    s.acceptorRandom[i] = uint8_t(255 - i);
  }
  return s;
}

void decodeId(const uint8_t *data, size_t size) {
  UniqueId id{};
  memcpy(id.bytes, data, size < sizeof(id.bytes) ? size : sizeof(id.bytes));
  IdLayout layout;
  (void)decodeUniqueId(id, &layout);
}

/// Hellos until the roster is complete or fails, as the root reads them;
/// each is proven first, and refused unproven.
void serveHellos(const uint8_t *data, size_t size) {
  Session session = fuzzSession(Purpose::Root);
  RootRoster roster(kNonce);
  while (size > 0 && !roster.complete()) {
    size_t frame = size < sizeof(Hello) ? size : sizeof(Hello);
    std::vector<uint8_t> bytes(data, data + frame);
    const char *stray = nullptr;
    int rank = -1;
    if (frame == sizeof(Hello) && !session.verifyMessage(bytes.data(), frame)) {
      if (!roster.add(session, bytes.data(), frame, &stray, &rank).isOk() ||
          !stray)
        __builtin_trap(); // took a hello without its proof
      session.proveMessage(bytes.data(), frame);
    }
    if (!roster.add(session, bytes.data(), frame, &stray, &rank).isOk())
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

/// The root's answer: the bytes as addresses with the harness's proof
/// appended, and as they are.
void decodeAnswer(const uint8_t *data, size_t size) {
  if (size == 0)
    return;
  int nranks = int(data[0]) - 8; // a few bad counts too
  Session session = fuzzSession(Purpose::Root);
  std::vector<WireAddr> addrs;
  (void)decodeAddresses(data + 1, size - 1, nranks, session, &addrs);
  std::vector<uint8_t> proven(data + 1, data + size);
  proven.resize(proven.size() + kProofBytes);
  session.prove(Step::AcceptorReply, data + 1, size - 1,
                proven.data() + size - 1);
  (void)decodeAddresses(proven.data(), proven.size(), nranks, session,
                        &addrs);
}

void checkRing(const uint8_t *data, size_t size) {
  Session session = fuzzSession(Purpose::Ring);
  std::vector<uint8_t> bytes(data, data + size);
  if (size == sizeof(RingHello))
    session.proveMessage(bytes.data(), size);
  (void)checkRingHello(bytes.data(), size, session, kNonce, 3);
}

/// A challenge as the acceptor reads it; its answer must convince the
/// connector, and a forged answer from the rest of the bytes must not.
void handshake(const uint8_t *data, size_t size) {
  size_t take = size < sizeof(Challenge) ? size : sizeof(Challenge);
  uint8_t random[kRandomBytes] = {7};
  Session acceptor;
  ChallengeAnswer answer;
  if (answerChallenge(data, take, secret(), Purpose::Ring, kNonce, 2, random,
                      &acceptor, &answer))
    return;
  Session connector = fuzzSession(Purpose::Ring);
  memcpy(connector.connectorRandom, acceptor.connectorRandom, kRandomBytes);
  if (checkChallengeAnswer(answer, 2, &connector))
    __builtin_trap(); // a true answer refused
  ChallengeAnswer forged;
  memset(&forged, 0, sizeof(forged));
  memcpy(&forged, data + take,
         size - take < sizeof(forged) ? size - take : sizeof(forged));
  connector = fuzzSession(Purpose::Ring);
  memcpy(connector.connectorRandom, acceptor.connectorRandom, kRandomBytes);
  // Only the acceptor's own answer passes: any other proof is a forgery.
  if (!checkChallengeAnswer(forged, 2, &connector) &&
      memcmp(forged.proof, answer.proof, kProofBytes) != 0)
    __builtin_trap(); // a forged answer taken
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  switch (data[0] % 5) {
  case 0:
    decodeId(data + 1, size - 1);
    break;
  case 1:
    serveHellos(data + 1, size - 1);
    break;
  case 2:
    decodeAnswer(data + 1, size - 1);
    break;
  case 3:
    checkRing(data + 1, size - 1);
    break;
  default:
    handshake(data + 1, size - 1);
    break;
  }
  return 0;
}
