//===- Settings.cpp - The environment variables, typed and checked --------===//
//
// The table built from Settings.def, the one getenv of the project, and
// one parser per kind. Every message has the form
//   NAME='value': expected <what the table accepts>
// so a user sees at once which variable to fix and how.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/Log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>
#include <strings.h>

namespace mscclc::rt {
namespace {

using Table = std::array<SettingInfo, kSettingCount>;

SettingInfo row(SettingId id, const char *name, SettingKind kind,
                const char *doc) {
  SettingInfo info{id, name, kind, doc};
  return info;
}

SettingInfo integerRow(SettingId id, const char *name, SettingKind kind,
                       int64_t def, int64_t min, int64_t max,
                       const char *doc) {
  SettingInfo info = row(id, name, kind, doc);
  info.integerDefault = def;
  info.integerMin = min;
  info.integerMax = max;
  return info;
}

SettingInfo durationRow(SettingId id, const char *name, DurationUnit unit,
                        double def, double min, double max, const char *doc) {
  SettingInfo info = row(id, name, SettingKind::Duration, doc);
  info.unit = unit;
  info.durationDefault = def;
  info.durationMin = min;
  info.durationMax = max;
  return info;
}

SettingInfo textRow(SettingId id, const char *name, SettingKind kind,
                    const char *def, const char *accepted, const char *doc) {
  SettingInfo info = row(id, name, kind, doc);
  info.textDefault = def;
  info.accepted = accepted;
  return info;
}

Table makeTable() {
  Table t{};
#define MSCCLC_AT(Id) t[size_t(SettingId::Id)]
#define MSCCLC_BOOL(Id, Name, Default, Doc)                                    \
  MSCCLC_AT(Id) = row(SettingId::Id, Name, SettingKind::Bool, Doc);            \
  MSCCLC_AT(Id).boolDefault = Default;
#define MSCCLC_INTEGER(Id, Name, Default, Min, Max, Doc)                       \
  MSCCLC_AT(Id) = integerRow(SettingId::Id, Name, SettingKind::Integer,        \
                             Default, Min, Max, Doc);
#define MSCCLC_SIZE(Id, Name, Default, Min, Max, Doc)                          \
  MSCCLC_AT(Id) = integerRow(SettingId::Id, Name, SettingKind::Size, Default,  \
                             int64_t(Min), int64_t(Max), Doc);
#define MSCCLC_DURATION(Id, Name, Unit, Default, Min, Max, Doc)                \
  MSCCLC_AT(Id) = durationRow(SettingId::Id, Name, DurationUnit::Unit,         \
                              Default, Min, Max, Doc);
#define MSCCLC_ENUM(Id, Name, Default, Choices, Doc)                           \
  MSCCLC_AT(Id) =                                                              \
      textRow(SettingId::Id, Name, SettingKind::Enum, Default, Choices, Doc);
#define MSCCLC_PATH(Id, Name, Default, Doc)                                    \
  MSCCLC_AT(Id) = textRow(SettingId::Id, Name, SettingKind::Path, Default, "", \
                          Doc);
#define MSCCLC_LIST(Id, Name, Form, Doc)                                       \
  MSCCLC_AT(Id) = textRow(SettingId::Id, Name, SettingKind::List, "", Form, Doc);
#define MSCCLC_TEXT(Id, Name, Form, Doc)                                       \
  MSCCLC_AT(Id) = textRow(SettingId::Id, Name, SettingKind::Text, "", Form, Doc);
#define MSCCLC_SECRET(Id, Name, Doc)                                           \
  MSCCLC_AT(Id) = row(SettingId::Id, Name, SettingKind::Secret, Doc);
#define MSCCLC_FALLBACK(Id, OtherId) MSCCLC_AT(Id).fallback = SettingId::OtherId;
#define MSCCLC_WHOLE_UNITS(Id) MSCCLC_AT(Id).wholeUnits = true;
#include "mscclc/runtime/Settings.def"
#undef MSCCLC_AT
  return t;
}

/// The settings that configure the log itself. Reading them must not log
/// through MSCCLC_LOG: the log level is being worked out from them.
bool configuresTheLog(SettingId id) {
  return id == SettingId::Log || id == SettingId::LogAlias ||
         id == SettingId::NcclDebug || id == SettingId::LogFile;
}

/// Logs that a set variable is used, once per variable: a run's log then
/// says which settings shaped it.
void noteUse(const RawSetting &raw) {
  static std::array<std::once_flag, kSettingCount> noted;
  if (configuresTheLog(raw.info->id))
    return;
  std::call_once(noted[size_t(raw.info->id)], [&] {
    if (raw.info->kind == SettingKind::Secret)
      MSCCLC_LOG(Info, "setting {} is set ({} characters)", raw.name(),
                 strlen(raw.text));
    else
      MSCCLC_LOG(Info, "setting {}={}", raw.name(), raw.text);
  });
}

/// "NAME='value': expected <accepted>".
Status badValue(const RawSetting &raw, const std::string &expected) {
  return invalidArgument(
      fmt::format("{}='{}': expected {}", raw.name(), raw.text, expected));
}

/// The suffixes of a size, largest first (B and no suffix: bytes).
struct SizeSuffix {
  const char *name;
  const char *longName;
  int shift;
};
constexpr SizeSuffix kSizeSuffixes[] = {
    {"G", "GiB", 30}, {"M", "MiB", 20}, {"K", "KiB", 10}, {"", "B", 0}};

/// "512 KiB": the largest unit that divides the count.
std::string formatBytes(uint64_t bytes) {
  for (const SizeSuffix &s : kSizeSuffixes)
    if (bytes % (uint64_t(1) << s.shift) == 0 && bytes >> s.shift > 0)
      return fmt::format("{} {}", bytes >> s.shift, s.longName);
  return "0 B";
}

const char *unitText(DurationUnit unit) {
  return unit == DurationUnit::Seconds ? "s" : "ms";
}

double secondsPerUnit(DurationUnit unit) {
  return unit == DurationUnit::Seconds ? 1.0 : 1e-3;
}

/// The choices of an Enum, "a|b|c" split at '|'.
std::vector<std::string_view> choicesOf(const SettingInfo &info) {
  std::vector<std::string_view> out;
  std::string_view rest = info.accepted;
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    out.push_back(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? "" : rest.substr(bar + 1);
  }
  return out;
}

/// "a, b or c".
std::string joinChoices(const std::vector<std::string_view> &choices,
                        const char *lastSeparator) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0)
      out += i + 1 == choices.size() ? lastSeparator : ", ";
    out += choices[i];
  }
  return out;
}

bool equalIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

/// A whole string as an integer: decimal, or hexadecimal after 0x.
bool parseInteger(std::string_view text, int64_t *out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  const char *end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, *out, base);
  return error == std::errc() && stop == end;
}

Status parseBool(const RawSetting &raw, bool *out) {
  static constexpr std::pair<const char *, bool> kWords[] = {
      {"1", true},   {"0", false},  {"true", true}, {"false", false},
      {"yes", true}, {"no", false}, {"on", true},   {"off", false}};
  for (auto [word, value] : kWords)
    if (equalIgnoringCase(raw.text, word)) {
      *out = value;
      return Status::ok();
    }
  return badValue(raw, "1, 0, true, false, yes, no, on or off");
}

Status parseInteger(const RawSetting &raw, int64_t *out) {
  const SettingInfo &info = *raw.info;
  int64_t v = 0;
  if (!parseInteger(raw.text, &v) || v < info.integerMin || v > info.integerMax)
    return badValue(raw, fmt::format("an integer from {} to {}",
                                     info.integerMin, info.integerMax));
  *out = v;
  return Status::ok();
}

Status parseSize(const RawSetting &raw, uint64_t *out) {
  const SettingInfo &info = *raw.info;
  auto bad = [&] {
    return badValue(raw, fmt::format("a size from {} to {} (bytes, or with a "
                                     "suffix K, M or G: KiB, MiB, GiB)",
                                     formatBytes(uint64_t(info.integerMin)),
                                     formatBytes(uint64_t(info.integerMax))));
  };
  std::string_view text = raw.text;
  uint64_t number = 0;
  const char *end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || stop == text.data())
    return bad();
  std::string_view suffix(stop, size_t(end - stop));
  int shift = -1;
  for (const SizeSuffix &s : kSizeSuffixes)
    if (suffix == s.name || suffix == s.longName)
      shift = s.shift;
  if (shift < 0 || number > (UINT64_MAX >> shift))
    return bad();
  uint64_t bytes = number << shift;
  if (bytes < uint64_t(info.integerMin) || bytes > uint64_t(info.integerMax))
    return bad();
  *out = bytes;
  return Status::ok();
}

/// A whole string as a number: decimal digits only where `whole`, else
/// any decimal number (fraction, exponent).
bool parseNumber(std::string_view text, bool whole, double *out) {
  const char *end = text.data() + text.size();
  if (whole) {
    uint64_t v = 0;
    auto [stop, error] = std::from_chars(text.data(), end, v, 10);
    *out = double(v);
    return error == std::errc() && stop == end;
  }
  auto [stop, error] = std::from_chars(text.data(), end, *out);
  return error == std::errc() && stop == end && std::isfinite(*out);
}

Status parseDuration(const RawSetting &raw, Seconds *out) {
  const SettingInfo &info = *raw.info;
  double v = 0;
  if (!parseNumber(raw.text, info.wholeUnits, &v) || v < info.durationMin ||
      v > info.durationMax)
    return badValue(raw, fmt::format("a {}number of {} from {} to {}",
                                     info.wholeUnits ? "whole " : "",
                                     info.unit == DurationUnit::Seconds
                                         ? "seconds"
                                         : "milliseconds",
                                     info.durationMin, info.durationMax));
  *out = Seconds(v * secondsPerUnit(info.unit));
  return Status::ok();
}

Status parseEnum(const RawSetting &raw, std::string_view *out) {
  std::vector<std::string_view> choices = choicesOf(*raw.info);
  for (std::string_view choice : choices)
    if (equalIgnoringCase(raw.text, choice)) {
      *out = choice;
      return Status::ok();
    }
  return badValue(raw, joinChoices(choices, " or "));
}

/// Why `value` is no acceptable secret, or null. Hex digits count 4 bits
/// each, else base64 characters 6 bits each (trailing '=' ignored), and
/// they must add up to limits::kMinSecretBits or more; the value must hold
/// limits::kMinDistinctSecretChars different characters and must not be
/// one piece repeated. Randomness cannot be measured: this refuses what is
/// certainly not random, such as 32 times 'a', a word, or
/// "0123456789abcdef" twice.
const char *weakSecretReason(std::string_view value) {
  std::string body(value);
  while (!body.empty() && body.back() == '=')
    body.pop_back();
  auto all = [&](auto isMember) {
    return std::all_of(body.begin(), body.end(),
                       [&](char c) { return isMember((unsigned char)c); });
  };
  auto isBase64 = [](unsigned char c) {
    return isalnum(c) || c == '+' || c == '/' || c == '-' || c == '_';
  };
  size_t bitsPerChar = all([](unsigned char c) { return isxdigit(c); }) ? 4
                       : all(isBase64)                                   ? 6
                                                                         : 0;
  if (bitsPerChar == 0)
    return "holds characters that are neither hex digits nor base64";
  if (body.size() * bitsPerChar < size_t(limits::kMinSecretBits))
    return "is too short";
  std::string distinct = body;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()),
                 distinct.end());
  if (distinct.size() < size_t(limits::kMinDistinctSecretChars))
    return "has too few different characters to be random";
  for (size_t period = 1; period <= body.size() / 2; ++period)
    if (body.size() % period == 0 &&
        body.compare(period, std::string::npos, body, 0,
                     body.size() - period) == 0)
      return "is one piece repeated";
  return nullptr;
}

Status parseSecret(const RawSetting &raw, std::string *out) {
  // The value is not repeated: it is a secret, even when a weak one.
  if (const char *weak = weakSecretReason(raw.text))
    return invalidArgument(fmt::format(
        "{} {}: it must hold at least {} random bits, written as {} or more "
        "hex digits or {} or more base64 characters with at least {} "
        "different ones, e.g. the output of `openssl rand -hex 16`",
        raw.name(), weak, limits::kMinSecretBits, limits::kMinSecretBits / 4,
        (limits::kMinSecretBits + 5) / 6, limits::kMinDistinctSecretChars));
  *out = raw.text;
  return Status::ok();
}

/// get() of every kind that parses: the default where unset, else the
/// parsed value, noted once.
template <typename T, typename Parse>
Status readParsed(SettingId id, T defaultValue, Parse parse, T *out) {
  std::optional<RawSetting> raw = lookup(id);
  if (!raw) {
    *out = defaultValue;
    return Status::ok();
  }
  T value{};
  MSCCLC_TRY(parse(*raw, &value));
  noteUse(*raw);
  *out = value;
  return Status::ok();
}

/// getOrDefault() of every kind: the value, or the default after one
/// warning per setting.
template <typename T, typename Handle>
T valueOrDefault(Handle s, T defaultValue) {
  T value{};
  Status status = get(s, &value);
  if (status.isOk())
    return value;
  static std::array<std::once_flag, kSettingCount> warned;
  std::call_once(warned[size_t(s.id)], [&] {
    std::string def = defaultText(s.info());
    std::string text =
        def == "unset"
            ? fmt::format("{}; ignoring it, as if unset", status.message())
            : fmt::format("{}; using the default {} instead",
                          status.message(), def);
    // The log's own settings are being read to set the level: the warning
    // goes out directly.
    if (configuresTheLog(s.id))
      logMessage(LogLevel::Warn, text);
    else
      MSCCLC_LOG(Warn, "{}", text);
  });
  return defaultValue;
}

} // namespace

const std::array<SettingInfo, kSettingCount> &allSettings() {
  static const Table table = makeTable();
  return table;
}

const SettingInfo &settingInfo(SettingId id) {
  return allSettings()[size_t(id)];
}

std::string kindText(const SettingInfo &info) {
  switch (info.kind) {
  case SettingKind::Bool: return "boolean";
  case SettingKind::Integer: return "integer";
  case SettingKind::Size: return "size";
  case SettingKind::Duration:
    return fmt::format("duration ({})", unitText(info.unit));
  case SettingKind::Enum: return "enum";
  case SettingKind::Path: return "path";
  case SettingKind::List: return "list";
  case SettingKind::Text: return "text";
  case SettingKind::Secret: return "secret";
  }
  return "?";
}

std::string defaultText(const SettingInfo &info) {
  switch (info.kind) {
  case SettingKind::Bool: return info.boolDefault ? "on" : "off";
  case SettingKind::Integer: return std::to_string(info.integerDefault);
  case SettingKind::Size: return formatBytes(uint64_t(info.integerDefault));
  case SettingKind::Duration:
    return fmt::format("{} {}", info.durationDefault, unitText(info.unit));
  case SettingKind::Enum:
  case SettingKind::Path:
    return *info.textDefault ? info.textDefault : "unset";
  case SettingKind::List:
  case SettingKind::Text:
  case SettingKind::Secret: return "unset";
  }
  return "?";
}

std::string acceptedText(const SettingInfo &info) {
  switch (info.kind) {
  case SettingKind::Bool: return "1/0, true/false, yes/no, on/off";
  case SettingKind::Integer:
    return fmt::format("{} to {}", info.integerMin, info.integerMax);
  case SettingKind::Size:
    return fmt::format("{} to {}", formatBytes(uint64_t(info.integerMin)),
                       formatBytes(uint64_t(info.integerMax)));
  case SettingKind::Duration:
    return fmt::format("{}{} to {} {}", info.wholeUnits ? "whole numbers, " : "",
                       info.durationMin, info.durationMax, unitText(info.unit));
  case SettingKind::Enum: return joinChoices(choicesOf(info), ", ");
  case SettingKind::Path: return "any path";
  case SettingKind::List:
  case SettingKind::Text: return info.accepted;
  case SettingKind::Secret:
    return fmt::format("at least {} random bits: {} or more hex digits or {} "
                       "or more base64 characters",
                       limits::kMinSecretBits, limits::kMinSecretBits / 4,
                       (limits::kMinSecretBits + 5) / 6);
  }
  return "?";
}

std::optional<RawSetting> lookup(SettingId id) {
  for (const SettingInfo *info = &settingInfo(id);;
       info = &settingInfo(info->fallback)) {
    if (const char *text = std::getenv(info->name); text && *text)
      return RawSetting{info, text};
    if (info->fallback == SettingId::Count)
      return std::nullopt;
  }
}

Status get(BoolSetting s, bool *out) {
  return readParsed(s.id, s.info().boolDefault, parseBool, out);
}

Status get(IntegerSetting s, int64_t *out) {
  return readParsed<int64_t>(
      s.id, s.info().integerDefault,
      [](const RawSetting &raw, int64_t *v) { return parseInteger(raw, v); },
      out);
}

Status get(SizeSetting s, uint64_t *out) {
  return readParsed(s.id, uint64_t(s.info().integerDefault), parseSize, out);
}

Status get(DurationSetting s, Seconds *out) {
  const SettingInfo &info = s.info();
  return readParsed(s.id,
                    Seconds(info.durationDefault * secondsPerUnit(info.unit)),
                    parseDuration, out);
}

Status get(EnumSetting s, std::string_view *out) {
  return readParsed(s.id, std::string_view(s.info().textDefault), parseEnum,
                    out);
}

Status get(SecretSetting s, std::string *out) {
  return readParsed(s.id, std::string(), parseSecret, out);
}

std::string get(PathSetting s) {
  std::optional<RawSetting> raw = lookup(s.id);
  if (!raw)
    return s.info().textDefault;
  noteUse(*raw);
  return raw->text;
}

std::optional<RawSetting> get(ListSetting s) {
  std::optional<RawSetting> raw = lookup(s.id);
  if (raw)
    noteUse(*raw);
  return raw;
}

std::optional<RawSetting> get(TextSetting s) {
  std::optional<RawSetting> raw = lookup(s.id);
  if (raw)
    noteUse(*raw);
  return raw;
}

bool getOrDefault(BoolSetting s) {
  return valueOrDefault(s, s.info().boolDefault);
}

int64_t getOrDefault(IntegerSetting s) {
  return valueOrDefault(s, s.info().integerDefault);
}

uint64_t getOrDefault(SizeSetting s) {
  return valueOrDefault(s, uint64_t(s.info().integerDefault));
}

Seconds getOrDefault(DurationSetting s) {
  const SettingInfo &info = s.info();
  return valueOrDefault(
      s, Seconds(info.durationDefault * secondsPerUnit(info.unit)));
}

std::string_view getOrDefault(EnumSetting s) {
  return valueOrDefault(s, std::string_view(s.info().textDefault));
}

} // namespace mscclc::rt
