//===- Log.cpp - Levelled logging of the mscclc runtime -------------------===//

#include "mscclc/runtime/Log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <strings.h>
#include <unistd.h>

namespace mscclc::rt {

LogLevel parseLogLevel(const char *name) {
  if (!name || !*name) return LogLevel::Warn;
  struct { const char *n; LogLevel l; } names[] = {
      {"none", LogLevel::None},   {"error", LogLevel::Error},
      {"warn", LogLevel::Warn},   {"info", LogLevel::Info},
      {"debug", LogLevel::Debug}, {"trace", LogLevel::Trace}};
  for (auto &e : names)
    if (strcasecmp(name, e.n) == 0)
      return e.l;
  return LogLevel::Warn;
}

LogLevel logLevel() {
  static const LogLevel level = parseLogLevel(getenv("MSCCLC_LOG"));
  return level;
}

void logMessage(LogLevel level, std::string_view text) {
  static const char *names[] = {"NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  static std::mutex mutex;
  static FILE *out = [] {
    const char *path = getenv("MSCCLC_LOG_FILE");
    FILE *f = path && *path ? fopen(path, "a") : nullptr;
    return f ? f : stderr;
  }();
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  std::lock_guard<std::mutex> lock(mutex);
  fmt::print(out, "mscclc {}:{} {} {}\n", host, int(getpid()),
             names[int(level)], text);
  fflush(out);
}

} // namespace mscclc::rt
