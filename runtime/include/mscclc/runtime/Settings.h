//===- Settings.h - The environment variables, typed and checked -*- C++ -*-===//
//
// The one way the runtime, the NCCL library and the NVRTC/hipRTC set-up
// read the environment. Every variable is a line of Settings.def (name,
// kind, default, range or accepted values, one-line doc), which gives it a
// typed handle here:
//
//   Seconds timeout;
//   MSCCLC_TRY(get(setting::TransportTimeout, &timeout));
//
// Parsing is strict and the same for every variable (docs/settings.md,
// "Parsing"): a value that does not parse, or lies outside the range, is
// an error naming the variable, the value and what is accepted; an unset
// or empty variable is its default. Where the caller cannot return an
// error, getOrDefault() logs the same message once, says which default is
// used instead, and returns that default. A variable that is set is
// logged at INFO the first time it is read (a secret by its length only).
//
// Lists and free-form text (interface filters, node lists, addresses) are
// handed over as the environment holds them: their syntax belongs to the
// code that reads them, whose messages name the variable.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_SETTINGS_H
#define MSCCLC_RUNTIME_SETTINGS_H

#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Status.h"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mscclc::rt {

enum class SettingKind {
  Bool,     ///< 1/0, true/false, yes/no, on/off
  Integer,  ///< decimal (or 0x hex), within [min, max]
  Size,     ///< bytes, optionally K/M/G (KiB, MiB, GiB), within [min, max]
  Duration, ///< a decimal number in the setting's unit, within [min, max]
            ///< (whole numbers only where wholeUnits)
  Enum,     ///< one of the choices, ignoring case
  Path,     ///< any text: a file, folder or library name
  List,     ///< items whose syntax the reader checks (form in the table)
  Text,     ///< one value whose syntax the reader checks (form in the table)
  Secret,   ///< hex or base64 of limits::kMinSecretBits, never logged
};

enum class DurationUnit { Seconds, Milliseconds };

/// Every setting, in the order of Settings.def.
enum class SettingId : uint16_t {
#define MSCCLC_SETTING_ID(Id, ...) Id,
#define MSCCLC_BOOL MSCCLC_SETTING_ID
#define MSCCLC_INTEGER MSCCLC_SETTING_ID
#define MSCCLC_SIZE MSCCLC_SETTING_ID
#define MSCCLC_DURATION MSCCLC_SETTING_ID
#define MSCCLC_ENUM MSCCLC_SETTING_ID
#define MSCCLC_PATH MSCCLC_SETTING_ID
#define MSCCLC_LIST MSCCLC_SETTING_ID
#define MSCCLC_TEXT MSCCLC_SETTING_ID
#define MSCCLC_SECRET MSCCLC_SETTING_ID
#include "mscclc/runtime/Settings.def"
#undef MSCCLC_SETTING_ID
  Count
};
inline constexpr size_t kSettingCount = size_t(SettingId::Count);

/// One row of the table. Only the fields of the setting's kind are used.
struct SettingInfo {
  SettingId id;
  const char *name;
  SettingKind kind;
  const char *doc;
  bool boolDefault = false;
  int64_t integerDefault = 0, integerMin = 0, integerMax = 0; ///< Integer, Size
  DurationUnit unit = DurationUnit::Seconds;
  double durationDefault = 0, durationMin = 0, durationMax = 0;
  /// Duration: only whole numbers of the unit (MSCCLC_WHOLE_UNITS).
  bool wholeUnits = false;
  /// Enum: the choices, "a|b|c"; List, Text: the accepted form, in words.
  const char *accepted = "";
  /// Enum, Path: the default ("" = none).
  const char *textDefault = "";
  /// The setting read while this one is unset (Count: none).
  SettingId fallback = SettingId::Count;
};

/// The table, in the order of Settings.def.
const std::array<SettingInfo, kSettingCount> &allSettings();
const SettingInfo &settingInfo(SettingId id);

/// The table's columns as docs/settings.md shows them: "integer",
/// "20", "1 to 31", ...
std::string kindText(const SettingInfo &info);
std::string defaultText(const SettingInfo &info);
std::string acceptedText(const SettingInfo &info);

/// A setting's typed handle: get() takes only handles of its kind.
template <SettingKind K> struct SettingHandle {
  SettingId id;
  const SettingInfo &info() const { return settingInfo(id); }
  const char *name() const { return info().name; }
};
using BoolSetting = SettingHandle<SettingKind::Bool>;
using IntegerSetting = SettingHandle<SettingKind::Integer>;
using SizeSetting = SettingHandle<SettingKind::Size>;
using DurationSetting = SettingHandle<SettingKind::Duration>;
using EnumSetting = SettingHandle<SettingKind::Enum>;
using PathSetting = SettingHandle<SettingKind::Path>;
using ListSetting = SettingHandle<SettingKind::List>;
using TextSetting = SettingHandle<SettingKind::Text>;
using SecretSetting = SettingHandle<SettingKind::Secret>;

namespace setting {
#define MSCCLC_BOOL(Id, ...) inline constexpr BoolSetting Id{SettingId::Id};
#define MSCCLC_INTEGER(Id, ...) inline constexpr IntegerSetting Id{SettingId::Id};
#define MSCCLC_SIZE(Id, ...) inline constexpr SizeSetting Id{SettingId::Id};
#define MSCCLC_DURATION(Id, ...)                                               \
  inline constexpr DurationSetting Id{SettingId::Id};
#define MSCCLC_ENUM(Id, ...) inline constexpr EnumSetting Id{SettingId::Id};
#define MSCCLC_PATH(Id, ...) inline constexpr PathSetting Id{SettingId::Id};
#define MSCCLC_LIST(Id, ...) inline constexpr ListSetting Id{SettingId::Id};
#define MSCCLC_TEXT(Id, ...) inline constexpr TextSetting Id{SettingId::Id};
#define MSCCLC_SECRET(Id, ...) inline constexpr SecretSetting Id{SettingId::Id};
#include "mscclc/runtime/Settings.def"
} // namespace setting

/// A variable as the environment holds it: the variable that gave the value
/// (the setting's own, or its fallback's) and its text.
struct RawSetting {
  const SettingInfo *info;
  /// Points into the environment: valid until the variable changes.
  const char *text;
  const char *name() const { return info->name; }
};

/// The setting's variable, else its fallback's; none where all are unset
/// or empty. The only getenv of the project (see settings.md).
std::optional<RawSetting> lookup(SettingId id);

using Seconds = std::chrono::duration<double>;

/// The value, or the default where the variable is unset or empty; an
/// InvalidArgument naming variable, value and the accepted values where it
/// does not parse.
Status get(BoolSetting s, bool *out);
Status get(IntegerSetting s, int64_t *out);
Status get(SizeSetting s, uint64_t *out);
Status get(DurationSetting s, Seconds *out);
/// The choice as the table spells it.
Status get(EnumSetting s, std::string_view *out);
/// "" where unset. A value that is certainly not random (too few bits,
/// too few different characters, one piece repeated: docs/settings.md) is
/// an error that does not repeat the value.
Status get(SecretSetting s, std::string *out);
/// The value, else the table's default ("" where it has none).
std::string get(PathSetting s);
/// As the environment holds it: the reader checks the syntax.
std::optional<RawSetting> get(ListSetting s);
std::optional<RawSetting> get(TextSetting s);

/// For callers that cannot return an error: the value, or, where it does
/// not parse, the default, after logging (once per setting) the message
/// and which default is used instead.
bool getOrDefault(BoolSetting s);
int64_t getOrDefault(IntegerSetting s);
uint64_t getOrDefault(SizeSetting s);
Seconds getOrDefault(DurationSetting s);
std::string_view getOrDefault(EnumSetting s);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_SETTINGS_H
