//===- BootstrapWire.h - Bootstrap messages, handshake, decoders -*- C++ -*-===//
//
// What the bootstrap (Bootstrap.h) and the TCP transport's pairs
// (FrameStream.h) send over TCP and how a receiver reads it, apart from the
// sockets: every byte read from the network passes through one of these
// decoders before it is used to index, allocate or connect, so they can be
// tested and fuzzed on plain bytes.
//
// Every connection opens with a handshake in which both sides prove they
// know the communicator's 32-byte secret without sending it:
//   connecting side -> accepting side : Challenge {magic, purpose, comm
//                                        nonce, 32 fresh random bytes}
//   accepting side -> connecting side : ChallengeAnswer {magic, who, 32
//                                        fresh random bytes, proof}
//   connecting side -> accepting side : its first message, ending with its
//                                        proof
// A proof is HMAC-SHA256(secret, label of the purpose || step || comm nonce
// || both random strings || the bytes it vouches for): the acceptor's
// vouches for who it is (the root, or a rank), the connector's for its
// whole first message. The connecting side checks the acceptor's proof
// before it sends anything that matters, so a process that got to a port
// first (a stranger listening on a well-known root address) learns
// nothing but a random challenge. The step in each proof tells the
// directions apart (a proof cannot be reflected back to its sender), the
// purpose tells the kinds of connection apart, and the fresh random
// strings make every proof good for one connection only (no replay).
//
// Messages after the handshake (all integers in host order: one machine
// type):
//   rank -> root : Hello {magic, rank, nonce, nranks, listen address, proof}
//   root -> rank : nranks listen addresses in rank order, then a proof of
//                  them (a root cannot be made to redirect ranks)
//   rank -> next : RingHello {magic, rank, nonce, proof}
//   rank -> rank : PairHello (TcpWire.h), alike
// What is not protected: the bytes after the handshake are neither
// encrypted nor authenticated (docs/runtime.md, "Security").
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_BOOTSTRAPWIRE_H
#define MSCCLC_RUNTIME_BOOTSTRAPWIRE_H

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mscclc::rt::wire {

constexpr uint32_t kMagic = 0x4d534343; // "MSCC"
// 2: the secret in the id and in both hellos. 3: a challenge-response
// handshake; the secret never crosses the wire.
constexpr uint32_t kVersion = 3;
constexpr uint32_t kFlagRank0HostsRoot = 1;
/// The most ranks a communicator may have (limits::kMaxRanks, the
/// compiler's --ranks limit too): the root and every rank allocate per
/// rank.
constexpr uint32_t kMaxRanks = uint32_t(limits::kMaxRanks);

constexpr size_t kSecretBytes = 32;
/// Fresh random bytes each side adds to a handshake.
constexpr size_t kRandomBytes = 32;
/// An HMAC-SHA256.
constexpr size_t kProofBytes = 32;

/// The address of a listening socket, as carried in ids and messages.
/// Zeroed by default: a port left unset is 0 (any free port), and the
/// bytes past an IPv4 address are 0 on the wire.
struct WireAddr {
  uint16_t family = 0; // AF_INET or AF_INET6
  uint16_t port = 0;   // network order
  uint8_t addr[16] = {};
};

struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint64_t nonce;
  uint32_t flags;
  WireAddr root;
  uint8_t secret[kSecretBytes];
};
// ncclUniqueId's 128 bytes hold it (72 now).
static_assert(sizeof(IdLayout) <= kUniqueIdBytes, "id too large");

/// What a connection is for: part of every proof, so that a proof made
/// for one kind of connection is worth nothing on another.
enum class Purpose : uint32_t {
  Root = 1,    ///< a rank joins at the root
  Ring = 2,    ///< a rank connects to the next one of the bootstrap ring
  TcpPair = 3, ///< the TCP transport's connection between two ranks
};

/// Which proof of a handshake (the direction it goes in).
enum class Step : uint32_t {
  AcceptorProof = 1,  ///< the accepting side: who it is
  ConnectorProof = 2, ///< the connecting side: its first message
  AcceptorReply = 3,  ///< the accepting side: a later message (the root's
                      ///< addresses)
};

/// The `who` of an acceptor that is the root rather than a rank.
constexpr uint32_t kRootWho = 0xffffffffu;

struct Challenge {
  uint32_t magic;
  uint32_t purpose;
  uint64_t commNonce;
  uint8_t random[kRandomBytes];
};
static_assert(sizeof(Challenge) == 48, "Challenge has padding");

struct ChallengeAnswer {
  uint32_t magic;
  uint32_t who; ///< the acceptor's rank, or kRootWho
  uint8_t random[kRandomBytes];
  uint8_t proof[kProofBytes];
};
static_assert(sizeof(ChallengeAnswer) == 72, "ChallengeAnswer has padding");

struct Hello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint32_t nranks;
  WireAddr listen;
  uint8_t proof[kProofBytes]; ///< last: the proof covers the bytes before it
};
// No padding: every byte sent is a field the sender set.
static_assert(sizeof(Hello) == 72, "Hello has padding");

struct RingHello {
  uint32_t magic;
  uint32_t rank;
  uint64_t nonce;
  uint8_t proof[kProofBytes]; ///< last: the proof covers the bytes before it
};
static_assert(sizeof(RingHello) == 48, "RingHello has padding");

/// One connection's handshake, as both sides know it once the challenge
/// and its answer crossed: the keys to every proof on that connection.
struct Session {
  const uint8_t *secret = nullptr; ///< kSecretBytes, the communicator's
  Purpose purpose = Purpose::Root;
  uint64_t commNonce = 0;
  uint8_t connectorRandom[kRandomBytes] = {};
  uint8_t acceptorRandom[kRandomBytes] = {};

  /// The proof of `size` bytes for `step` (the protocol above).
  void prove(Step step, const void *bytes, size_t size,
             uint8_t out[kProofBytes]) const;
  /// Whether `proof` is that of the `size` bytes for `step`, compared in
  /// constant time.
  bool verify(Step step, const void *bytes, size_t size,
              const uint8_t proof[kProofBytes]) const;
  /// Fills the proof at the end of a `size`-byte message (a hello) from
  /// the bytes before it.
  void proveMessage(void *message, size_t size) const;
  /// Whether the proof at the end of a `size`-byte message is right.
  bool verifyMessage(const void *message, size_t size) const;
};

/// The challenge a connecting side sends, from its fresh random bytes.
Challenge makeChallenge(Purpose purpose, uint64_t commNonce,
                        const uint8_t random[kRandomBytes]);

/// The accepting side: takes the `size` bytes a connection opened with.
/// Null, with *session ready and *answer to send, if they are a challenge
/// for `purpose` of the communicator with `commNonce`; else why not (a
/// stranger: drop the connection). `who` is this side's rank or kRootWho,
/// `random` its fresh random bytes.
const char *answerChallenge(const void *frame, size_t size,
                            const uint8_t secret[kSecretBytes],
                            Purpose purpose, uint64_t commNonce, uint32_t who,
                            const uint8_t random[kRandomBytes],
                            Session *session, ChallengeAnswer *answer);

/// The connecting side: null if `answer` proves that the acceptor knows
/// the secret and is `expectedWho`; else why not. *session, made from the
/// challenge sent, gets the acceptor's random bytes.
const char *checkChallengeAnswer(const ChallengeAnswer &answer,
                                 uint32_t expectedWho, Session *session);

/// Whether two secrets are equal, in time independent of where they differ.
bool secretsEqual(const uint8_t *a, const uint8_t *b);

/// Checks an address that came over the wire: IPv4 or IPv6, a port.
Status checkAddress(const WireAddr &addr);

/// Reads an id's fields; an error unless magic, version and root address
/// are an mscclc id's.
Status decodeUniqueId(const UniqueId &id, IdLayout *out);

/// The root's record of the ranks that said hello.
class RootRoster {
public:
  explicit RootRoster(uint64_t nonce);

  /// Takes the `size` bytes a connection sent as its hello after the
  /// handshake of `session`. A frame that is not for this communicator
  /// (wrong size, bad magic, a wrong proof, another nonce) sets *stray to
  /// why: the root drops that connection and goes on waiting. A frame that
  /// is, but conflicts with the ranks seen so far (rank out of range,
  /// taken, another rank count, a bad address) is an error. Otherwise
  /// *stray is null and the rank is recorded and returned in *rank.
  Status add(const Session &session, const void *frame, size_t size,
             const char **stray, int *rank);

  /// Every announced rank said hello.
  bool complete() const { return nranks_ > 0 && arrived_ == nranks_; }
  int nranks() const { return nranks_; }
  /// Listening addresses by rank (valid once complete()).
  const std::vector<WireAddr> &addresses() const { return addrs_; }

private:
  uint64_t nonce_;
  int nranks_ = -1;
  int arrived_ = 0;
  std::vector<WireAddr> addrs_;
  std::vector<bool> seen_;
};

/// The root's answer to one rank: every address, then their proof.
std::vector<char> encodeAddresses(const std::vector<WireAddr> &addrs,
                                  const Session &session);

/// Decodes the root's answer to a rank of an `nranks` communicator: one
/// valid address per rank, exactly, and the root's proof of them.
Status decodeAddresses(const void *bytes, size_t size, int nranks,
                       const Session &session, std::vector<WireAddr> *out);

/// Null if the `size` bytes of a ring hello, after the handshake of
/// `session`, come from rank `expected` of the communicator with `nonce`,
/// else why not.
const char *checkRingHello(const void *frame, size_t size,
                           const Session &session, uint64_t nonce,
                           int expected);

} // namespace mscclc::rt::wire

#endif // MSCCLC_RUNTIME_BOOTSTRAPWIRE_H
