//===- Log.cpp - Levelled logging of the mscclc runtime -------------------===//

#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Settings.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <strings.h>
#include <unistd.h>

namespace mscclc::rt {
namespace {

/// MSCCLC_LOG's choices (and MSCCLC_DEBUG's, the same) as levels.
std::optional<LogLevel> mscclcLevel(std::string_view choice) {
  constexpr std::pair<std::string_view, LogLevel> kLevels[] = {
      {"none", LogLevel::None},   {"error", LogLevel::Error},
      {"warn", LogLevel::Warn},   {"info", LogLevel::Info},
      {"debug", LogLevel::Debug}, {"trace", LogLevel::Trace}};
  for (auto [name, level] : kLevels)
    if (choice == name)
      return level;
  return std::nullopt;
}

/// NCCL_DEBUG's choices as levels, keeping NCCL's order: VERSION prints no
/// warnings; ABORT, which makes NCCL abort on a warning, logs as INFO here.
std::optional<LogLevel> ncclLevel(std::string_view choice) {
  constexpr std::pair<std::string_view, LogLevel> kLevels[] = {
      {"VERSION", LogLevel::Error}, {"WARN", LogLevel::Warn},
      {"INFO", LogLevel::Info},     {"ABORT", LogLevel::Info},
      {"TRACE", LogLevel::Trace}};
  for (auto [name, level] : kLevels)
    if (choice == name)
      return level;
  return std::nullopt;
}

std::optional<LogLevel> readConfiguredLevel() {
  // MSCCLC_LOG and MSCCLC_DEBUG are one setting under two names (the
  // table's fallback): a value of both is worth a word.
  std::optional<RawSetting> own = lookup(SettingId::Log);
  if (own && own->info->id == SettingId::Log) {
    if (std::optional<RawSetting> alias = lookup(SettingId::LogAlias);
        alias && strcasecmp(alias->text, own->text) != 0)
      logMessage(LogLevel::Warn,
                 fmt::format("MSCCLC_DEBUG={} is ignored: MSCCLC_LOG={} is set",
                             alias->text, own->text));
  }
  if (own)
    return mscclcLevel(getOrDefault(setting::Log));
  if (lookup(SettingId::NcclDebug))
    return ncclLevel(getOrDefault(setting::NcclDebug));
  return std::nullopt;
}

/// Where lines go: MSCCLC_LOG_FILE, else stderr (also when the file does
/// not open, which is said on stderr once).
FILE *logStream() {
  static FILE *out = [] {
    std::string path = get(setting::LogFile);
    if (path.empty())
      return stderr;
    if (FILE *f = fopen(path.c_str(), "a"))
      return f;
    fmt::print(stderr, "mscclc: MSCCLC_LOG_FILE={} does not open ({}); "
                       "logging to stderr instead\n",
               path, strerror(errno));
    return stderr;
  }();
  return out;
}

} // namespace

std::optional<LogLevel> configuredLogLevel() {
  static const std::optional<LogLevel> level = readConfiguredLevel();
  return level;
}

LogLevel logLevel() {
  static const LogLevel level = configuredLogLevel().value_or(LogLevel::Warn);
  return level;
}

void logMessage(LogLevel level, std::string_view text) {
  static const char *names[] = {"NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  static std::mutex mutex;
  FILE *out = logStream();
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  std::lock_guard<std::mutex> lock(mutex);
  fmt::print(out, "mscclc {}:{} {} {}\n", host, int(getpid()),
             names[int(level)], text);
  fflush(out);
}

} // namespace mscclc::rt
