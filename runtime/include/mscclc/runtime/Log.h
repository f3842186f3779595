//===- Log.h - Levelled logging of the mscclc runtime ---------*- C++ -*-===//
//
// MSCCLC_LOG=none|error|warn|info|debug|trace selects the level (default
// warn); MSCCLC_LOG_FILE=path appends there instead of stderr. Lines read
// `mscclc <host>:<pid> [<tag>] LEVEL message`.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_LOG_H
#define MSCCLC_RUNTIME_LOG_H

namespace mscclc::rt {

enum class LogLevel { None = 0, Error, Warn, Info, Debug, Trace };

/// The level from MSCCLC_LOG, read once.
LogLevel logLevel();
/// Parses a level name; returns Warn for unknown names.
LogLevel parseLogLevel(const char *name);

void logMessage(LogLevel level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

} // namespace mscclc::rt

#define MSCCLC_LOG(level, ...)                                                 \
  do {                                                                         \
    if (::mscclc::rt::logLevel() >= ::mscclc::rt::LogLevel::level)             \
      ::mscclc::rt::logMessage(::mscclc::rt::LogLevel::level, __VA_ARGS__);    \
  } while (0)

#endif // MSCCLC_RUNTIME_LOG_H
