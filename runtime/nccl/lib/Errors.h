//===- Errors.h - Result codes, messages and logs of the NCCL library -----===//
//
// Every failing call leaves a message for ncclGetLastError (per thread, as
// NCCL keeps it) and, with the log level (MSCCLC_LOG, its other name
// MSCCLC_DEBUG, else NCCL_DEBUG: docs/settings.md) at WARN or above, logs
// it. INFO also logs which algorithm each collective ran.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_ERRORS_H
#define MSCCLC_NCCL_ERRORS_H

#include "nccl.h"

#include "mscclc/mscclc.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace mscclc::nccl {

/// An NCCL result and what went wrong (empty message on success).
struct Outcome {
  ncclResult_t result = ncclSuccess;
  std::string message;
  bool ok() const { return result == ncclSuccess; }
  static Outcome success() { return {}; }
};

inline Outcome invalidArgument(std::string m) {
  return {ncclInvalidArgument, std::move(m)};
}
inline Outcome invalidUsage(std::string m) {
  return {ncclInvalidUsage, std::move(m)};
}

/// Records `o` as this thread's last error (when it failed) and returns its
/// result code.
ncclResult_t report(const Outcome &o);
/// Sets this thread's last message without logging it (for state that is
/// queried repeatedly, like an async error).
void remember(const Outcome &o);
/// Shorthand for report({code, message}).
ncclResult_t fail(ncclResult_t code, std::string message);
/// The mscclc result `r` of a call named `what`, with mscclcGetLastError's
/// message, as an NCCL outcome.
Outcome fromMscclc(mscclcResult_t r, std::string_view what);
/// A failed CUDA call as an NCCL outcome.
Outcome fromCuda(cudaError_t err, std::string_view what);

/// ncclGetErrorString's text.
const char *resultString(ncclResult_t r);
/// The same for any int (an application's value, which may be none).
const char *resultCodeString(int code);

/// This thread's last message ("" when none).
const char *lastErrorMessage();

/// Whether the algorithm log is on (a log level of INFO or above).
bool infoEnabled();
/// Whether failures are logged (a log level of WARN or above, set
/// explicitly: unset, the library prints none, as NCCL).
bool warnEnabled();
/// Writes one line, prefixed like the runtime's logs.
void logInfo(std::string_view text);
void logWarn(std::string_view text);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_ERRORS_H
