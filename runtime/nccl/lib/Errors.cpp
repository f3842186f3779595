//===- Errors.cpp - Result codes, messages and logs of the NCCL library ---===//

#include "Errors.h"

#include "mscclc/runtime/Log.h"


namespace mscclc::nccl {
namespace {

thread_local std::string lastMessage;

/// Whether the level set by MSCCLC_LOG (or MSCCLC_DEBUG, or NCCL_DEBUG)
/// reaches `level`. Unset, the library logs nothing of its own, as NCCL
/// does: a failure is returned, not printed, unless asked for.
bool configuredAtLeast(rt::LogLevel level) {
  std::optional<rt::LogLevel> configured = rt::configuredLogLevel();
  return configured && *configured >= level;
}

} // namespace

ncclResult_t report(const Outcome &o) {
  if (o.ok())
    return ncclSuccess;
  lastMessage = o.message;
  if (warnEnabled())
    logWarn(fmt::format("{}: {}", resultString(o.result), o.message));
  return o.result;
}

void remember(const Outcome &o) {
  if (!o.ok())
    lastMessage = o.message;
}

ncclResult_t fail(ncclResult_t code, std::string message) {
  return report({code, std::move(message)});
}

Outcome fromMscclc(mscclcResult_t r, std::string_view what) {
  if (r == mscclcSuccess)
    return Outcome::success();
  ncclResult_t code = ncclInternalError;
  switch (r) {
  case mscclcSuccess: break;
  case mscclcInvalidArgument: code = ncclInvalidArgument; break;
  case mscclcCudaError: code = ncclUnhandledCudaError; break;
  case mscclcSystemError: code = ncclSystemError; break;
  case mscclcUnsupported: code = ncclInvalidUsage; break;
  // A kernel that recorded a wait time-out or a host wait that timed out:
  // a peer did not take part.
  case mscclcDeviceError:
  case mscclcTimeout: code = ncclRemoteError; break;
  default: code = ncclInternalError; break;
  }
  return {code, fmt::format("{}: {}", what, mscclcGetLastError())};
}

Outcome fromCuda(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess)
    return Outcome::success();
  (void)cudaGetLastError(); // clear a sticky-free error so later calls work
  return {ncclUnhandledCudaError,
          fmt::format("{} failed: {} ({})", what, cudaGetErrorString(err),
                      cudaGetErrorName(err))};
}

const char *resultString(ncclResult_t r) { return resultCodeString(int(r)); }

const char *resultCodeString(int code) {
  switch (code) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the mscclc developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

const char *lastErrorMessage() { return lastMessage.c_str(); }

bool infoEnabled() { return configuredAtLeast(rt::LogLevel::Info); }
bool warnEnabled() { return configuredAtLeast(rt::LogLevel::Warn); }

void logInfo(std::string_view text) {
  rt::logMessage(rt::LogLevel::Info, fmt::format("NCCL {}", text));
}
void logWarn(std::string_view text) {
  rt::logMessage(rt::LogLevel::Warn, fmt::format("NCCL {}", text));
}

} // namespace mscclc::nccl
