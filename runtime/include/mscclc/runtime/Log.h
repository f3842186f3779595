//===- Log.h - Levelled logging of the mscclc runtime ---------*- C++ -*-===//
//
// MSCCLC_LOG=none|error|warn|info|debug|trace selects the level (default
// warn); MSCCLC_LOG_FILE=path appends there instead of stderr. Lines read
// `mscclc <host>:<pid> LEVEL message`. MSCCLC_LOG(level, "fmt {}", args...)
// formats with fmt only when the level is enabled.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_LOG_H
#define MSCCLC_RUNTIME_LOG_H

#include <fmt/format.h>

#include <string_view>

namespace mscclc::rt {

enum class LogLevel { None = 0, Error, Warn, Info, Debug, Trace };

/// The level from MSCCLC_LOG, read once.
LogLevel logLevel();
/// Parses a level name; returns Warn for unknown names.
LogLevel parseLogLevel(const char *name);

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
