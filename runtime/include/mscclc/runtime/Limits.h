//===- Limits.h - The runtime's limits, stated once -----------*- C++ -*-===//
//
// Every bound the runtime, the NCCL library and their settings check
// against. Code that refuses a value beyond one of these names the
// constant here instead of writing the number again, so raising a limit is
// a change of one line. The settings table (Settings.def) takes its ranges
// from here too, and docs/settings.md states them.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_LIMITS_H
#define MSCCLC_RUNTIME_LIMITS_H

#include <cstdint>

namespace mscclc::limits {

/// Ranks of one communicator (plans, the bootstrap's hello, selection
/// tables). The bootstrap's tables grow with it, so a larger count from a
/// careless caller is refused before anything is allocated.
inline constexpr int kMaxRanks = 65536;

/// Files the runtime reads (docs/runtime.md, "Files"): each is read whole
/// into memory, so a larger one (or /dev/zero) is refused before it is.
/// A kernel-cache or ahead-of-time entry: a cubin or a program bundle.
inline constexpr uint64_t kMaxKernelEntryBytes = uint64_t(256) << 20;
/// The stdlib's algorithms.json and a selection table.
inline constexpr uint64_t kMaxTableBytes = uint64_t(16) << 20;
/// A stdlib .mscl source.
inline constexpr uint64_t kMaxSourceBytes = uint64_t(16) << 20;

/// How deep arrays and objects may nest in the JSON documents the runtime
/// reads (plans, bundles, selection and tuned tables): printing one
/// recurses once per level, so one nested 50,000 deep would overflow the
/// stack.
inline constexpr int kMaxJsonDepth = 64;

/// The longest time-out any setting may ask for: one day. Time-outs are
/// turned into deadlines on steady clocks and into nanoseconds for the
/// kernels; far larger values overflow those (a bootstrap time-out of 1e10
/// seconds once expired at once).
inline constexpr double kMaxTimeoutSeconds = 86400;

/// Thread blocks per rank a setting or config may ask for (NCCL_MAX_CTAS,
/// ncclConfig_t::maxCTAs): far above any GPU's count of SMs.
inline constexpr int kMaxBlocksPerRank = 65536;

/// Data frames of the TCP and ib staged transports (MSCCLC_TCP_SLICE_BYTES).
inline constexpr uint64_t kMinTcpSliceBytes = 1024;
inline constexpr uint64_t kMaxTcpSliceBytes = uint64_t(64) << 20;

/// The receive ring of one ib staged peer pair (MSCCLC_IB_RING_BYTES).
inline constexpr uint64_t kMinIbRingBytes = 4096;
inline constexpr uint64_t kMaxIbRingBytes = uint64_t(1) << 30;

/// Buffer pairs with peer mappings an executor keeps
/// (MSCCLC_MAX_BUFFER_CONTEXTS); each holds IPC mappings of every peer.
inline constexpr int64_t kMaxBufferContexts = 4096;

/// Hardware work queues a GPU offers (CUDA_DEVICE_MAX_CONNECTIONS, HIP's
/// GPU_MAX_HW_QUEUES): CUDA accepts 1 to 32.
inline constexpr int64_t kMaxHardwareQueues = 32;

/// The least randomness a secret given in the environment
/// (MSCCLC_BOOTSTRAP_SECRET) must carry: guessing it offline from a
/// handshake seen on the network must stay out of reach. Hex digits count
/// 4 bits each, base64 characters 6 (docs/settings.md, "Parsing").
inline constexpr int kMinSecretBits = 128;

/// Fewer different characters than this in a secret is no random string
/// of that length (32 random hex digits have 14 on average; 8 or fewer
/// comes once in about 10^9): a typed word or a pattern.
inline constexpr int kMinDistinctSecretChars = 9;

} // namespace mscclc::limits

#endif // MSCCLC_RUNTIME_LIMITS_H
