//===- Log.h - Levelled logging of the mscclc runtime ---------*- C++ -*-===//
//
// One level for the runtime and the NCCL library: MSCCLC_LOG (its other
// name MSCCLC_DEBUG, else NCCL's NCCL_DEBUG) selects it, MSCCLC_LOG_FILE a
// file to append to instead of stderr (docs/settings.md). Lines read
// `mscclc <host>:<pid> LEVEL message`. MSCCLC_LOG(level, "fmt {}", args...)
// formats with fmt only when the level is enabled.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_LOG_H
#define MSCCLC_RUNTIME_LOG_H

#include <fmt/format.h>

#include <optional>
#include <string_view>

namespace mscclc::rt {

enum class LogLevel { None = 0, Error, Warn, Info, Debug, Trace };

/// The level a variable sets, read once: MSCCLC_LOG, else MSCCLC_DEBUG,
/// else NCCL_DEBUG; none where all are unset. A bad value is logged once
/// and its setting's default used (warn; NCCL_DEBUG: unset).
std::optional<LogLevel> configuredLogLevel();
/// The runtime's level: the configured one, else Warn.
LogLevel logLevel();

/// Writes one line at `level` (whatever the configured level).
void logMessage(LogLevel level, std::string_view text);

} // namespace mscclc::rt

#define MSCCLC_LOG(level, ...)                                                 \
  do {                                                                         \
    if (::mscclc::rt::logLevel() >= ::mscclc::rt::LogLevel::level)             \
      ::mscclc::rt::logMessage(::mscclc::rt::LogLevel::level,                  \
                               ::fmt::format(__VA_ARGS__));                    \
  } while (0)

#endif // MSCCLC_RUNTIME_LOG_H
