//===- SettingsTest.cpp - The settings table, its parsing and its page ----===//
//
// Each kind's parsing (good values, bad ones with their message, ranges,
// the one boolean rule), the table against docs/settings.md (the path is
// MSCCLC_SETTINGS_DOC), and converted call sites that refuse a bad value
// where they once took a silent default.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/Executor.h"
#include "mscclc/runtime/IbConnection.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Settings.h"
#include "mscclc/runtime/TcpTransport.h"
#include "mscclc/runtime/Transport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

using namespace mscclc::rt;

namespace {

/// Sets variables for one test and restores what was there before.
class Environment {
public:
  ~Environment() {
    for (auto &[name, old] : saved_)
      old ? setenv(name.c_str(), old->c_str(), 1) : unsetenv(name.c_str());
  }
  void set(const char *name, const char *value) {
    remember(name);
    setenv(name, value, 1);
  }
  void unset(const char *name) {
    remember(name);
    unsetenv(name);
  }

private:
  void remember(const char *name) {
    if (saved_.count(name))
      return;
    const char *old = getenv(name);
    saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

/// get()'s message for `value` of `s`, "" when it was accepted.
template <typename Handle, typename T>
std::string messageFor(Handle s, const char *value, T *out) {
  Environment env;
  env.set(s.name(), value);
  Status status = get(s, out);
  return status.isOk() ? "" : status.message();
}

} // namespace

// --- The table ---------------------------------------------------------------

TEST(SettingsTable, NamesAreUniqueAndFallbacksShareTheKind) {
  std::set<std::string> names;
  for (const SettingInfo &info : allSettings()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " twice";
    EXPECT_EQ(&settingInfo(info.id), &info);
    EXPECT_NE(std::string(info.doc), "") << info.name;
    if (info.fallback != SettingId::Count)
      EXPECT_EQ(settingInfo(info.fallback).kind, info.kind) << info.name;
  }
}

TEST(SettingsTable, DefaultsLieInTheirRanges) {
  for (const SettingInfo &info : allSettings()) {
    switch (info.kind) {
    case SettingKind::Integer:
    case SettingKind::Size:
      // NCCL_MAX_CTAS: 0 (unset) means no limit, which no value may ask.
      if (info.id != SettingId::NcclMaxCtas)
        EXPECT_TRUE(info.integerDefault >= info.integerMin &&
                    info.integerDefault <= info.integerMax)
            << info.name;
      break;
    case SettingKind::Duration:
      EXPECT_TRUE(info.durationDefault >= info.durationMin &&
                  info.durationDefault <= info.durationMax)
          << info.name;
      break;
    case SettingKind::Enum:
      if (*info.textDefault)
        EXPECT_NE((std::string("|") + info.accepted + "|")
                      .find(std::string("|") + info.textDefault + "|"),
                  std::string::npos)
            << info.name << "'s default is not a choice";
      break;
    default:
      break;
    }
  }
}

TEST(SettingsTable, DefaultsAgreeWithTheOptionStructs) {
  IbOptions ib;
  EXPECT_EQ(ib.gidIndex, settingInfo(SettingId::IbGidIndex).integerDefault);
  EXPECT_EQ(ib.ackTimeout, settingInfo(SettingId::IbTimeout).integerDefault);
  EXPECT_EQ(ib.ringBytes,
            uint64_t(settingInfo(SettingId::IbRingBytes).integerDefault));
  EXPECT_EQ(ib.timeoutSeconds,
            settingInfo(SettingId::TransportTimeout).durationDefault);
  TcpOptions tcp;
  EXPECT_EQ(tcp.sliceBytes,
            uint64_t(settingInfo(SettingId::TcpSliceBytes).integerDefault));
  EXPECT_EQ(tcp.timeoutSeconds,
            settingInfo(SettingId::TransportTimeout).durationDefault);
}

// --- docs/settings.md --------------------------------------------------------

namespace {
std::string settingsPage() {
  std::ifstream in(MSCCLC_SETTINGS_DOC);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The row the page must have for `info`.
std::string expectedRow(const SettingInfo &info) {
  return fmt::format("| `{}` | {} | {} | {} | {} |", info.name, kindText(info),
                     defaultText(info), acceptedText(info), info.doc);
}
} // namespace

TEST(SettingsPage, HasTheTableRowOfEverySetting) {
  std::string page = settingsPage();
  ASSERT_FALSE(page.empty()) << "cannot read " << MSCCLC_SETTINGS_DOC;
  for (const SettingInfo &info : allSettings())
    EXPECT_NE(page.find(expectedRow(info) + "\n"), std::string::npos)
        << MSCCLC_SETTINGS_DOC << " lacks (or has another) row of "
        << info.name << "; it should read\n"
        << expectedRow(info);
}

TEST(SettingsPage, NamesOnlyVariablesOfTheTable) {
  std::string page = settingsPage();
  std::set<std::string> known;
  for (const SettingInfo &info : allSettings())
    known.insert(info.name);
  std::regex variable("\\bMSCCLC_[A-Z0-9_]+");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), variable);
       it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(known.count(it->str()))
        << MSCCLC_SETTINGS_DOC << " names " << it->str()
        << ", which Settings.def does not declare";
}

// --- Parsing -----------------------------------------------------------------

TEST(SettingsParsing, BooleansHaveOneRule) {
  bool v = false;
  for (const char *yes : {"1", "true", "TRUE", "yes", "Yes", "on", "ON"}) {
    EXPECT_EQ(messageFor(setting::DisableMulticast, yes, &v), "") << yes;
    EXPECT_TRUE(v) << yes;
  }
  for (const char *no : {"0", "false", "False", "no", "off", "OFF"}) {
    EXPECT_EQ(messageFor(setting::DisableMulticast, no, &v), "") << no;
    EXPECT_FALSE(v) << no;
  }
  for (const char *bad : {"2", "maybe", " 1", "1 ", "y", "enabled"})
    EXPECT_EQ(messageFor(setting::Cache, bad, &v),
              fmt::format("MSCCLC_CACHE='{}': expected 1, 0, true, false, yes, "
                          "no, on or off",
                          bad));
}

TEST(SettingsParsing, UnsetOrEmptyIsTheDefault) {
  Environment env;
  env.unset("MSCCLC_CACHE");
  bool v = false;
  ASSERT_TRUE(get(setting::Cache, &v).isOk());
  EXPECT_TRUE(v);
  env.set("MSCCLC_CACHE", "");
  v = false;
  ASSERT_TRUE(get(setting::Cache, &v).isOk());
  EXPECT_TRUE(v);
  env.unset("MSCCLC_HIPCC");
  EXPECT_EQ(get(setting::Hipcc), "hipcc");
  env.set("MSCCLC_HIPCC", "/opt/rocm/bin/hipcc");
  EXPECT_EQ(get(setting::Hipcc), "/opt/rocm/bin/hipcc");
}

TEST(SettingsParsing, IntegersAndTheirRanges) {
  int64_t v = 0;
  EXPECT_EQ(messageFor(setting::IbTimeout, "18", &v), "");
  EXPECT_EQ(v, 18);
  EXPECT_EQ(messageFor(setting::TestEpochStart, "0xffffffe0", &v), "");
  EXPECT_EQ(v, 0xffffffe0);
  for (const char *bad : {"40", "0", "x", "1.5", "-1", "18 ", "", "0x"})
    if (*bad)
      EXPECT_EQ(messageFor(setting::IbTimeout, bad, &v),
                fmt::format("MSCCLC_IB_TIMEOUT='{}': expected an integer from "
                            "1 to 31",
                            bad));
  EXPECT_NE(messageFor(setting::TestEpochStart, "0x100000000", &v), "");
  EXPECT_NE(messageFor(setting::TestEpochStart, "99999999999999999999", &v),
            "");
}

TEST(SettingsParsing, SizesTakeBinarySuffixes) {
  uint64_t v = 0;
  for (auto [text, bytes] :
       {std::pair<const char *, uint64_t>{"4096", 4096},
        {"64K", 64 << 10},
        {"64KiB", 64 << 10},
        {"4M", 4 << 20},
        {"1GiB", 1 << 30},
        {"8192B", 8192}}) {
    EXPECT_EQ(messageFor(setting::IbRingBytes, text, &v), "") << text;
    EXPECT_EQ(v, bytes) << text;
  }
  for (const char *bad :
       {"100", "2G", "4 MiB", "4m", "12Q", "K", "-4096",
        "18446744073709551615K", "99999999999999999999"})
    EXPECT_EQ(messageFor(setting::IbRingBytes, bad, &v),
              fmt::format("MSCCLC_IB_RING_BYTES='{}': expected a size from 4 "
                          "KiB to 1 GiB (bytes, or with a suffix K, M or G: "
                          "KiB, MiB, GiB)",
                          bad));
}

TEST(SettingsParsing, DurationsInTheirUnits) {
  Seconds v;
  EXPECT_EQ(messageFor(setting::TransportTimeout, "2.5", &v), "");
  EXPECT_EQ(v.count(), 2.5);
  EXPECT_EQ(messageFor(setting::KernelTimeout, "1500", &v), "");
  EXPECT_EQ(v.count(), 1.5);
  EXPECT_EQ(messageFor(setting::KernelTimeout, "0", &v), "");
  EXPECT_EQ(v.count(), 0);
  // The hang of issue 41: far beyond a day is refused, not wrapped.
  for (const char *bad : {"1e10", "abc", "-1", "0", "inf", "nan", "120s"})
    EXPECT_EQ(messageFor(setting::TransportTimeout, bad, &v),
              fmt::format("MSCCLC_TRANSPORT_TIMEOUT='{}': expected a number "
                          "of seconds from 0.001 to 86400",
                          bad));
  // Whole units (MSCCLC_WHOLE_UNITS): decimal digits only.
  EXPECT_EQ(messageFor(setting::BootstrapTimeout, "0120", &v), "");
  EXPECT_EQ(v.count(), 120);
  for (const char *bad : {"2.5", "1e3", "0x10", "+5", "0", "86401"})
    EXPECT_EQ(messageFor(setting::BootstrapTimeout, bad, &v),
              fmt::format("MSCCLC_BOOTSTRAP_TIMEOUT='{}': expected a whole "
                          "number of seconds from 1 to 86400",
                          bad));
  EXPECT_EQ(messageFor(setting::KernelTimeout, "-5", &v),
            "MSCCLC_TIMEOUT_MS='-5': expected a number of milliseconds from 0 "
            "to 86400000");
}

TEST(SettingsParsing, EnumsIgnoreCaseAndListTheirChoices) {
  std::string_view v;
  EXPECT_EQ(messageFor(setting::Transport, "TCP", &v), "");
  EXPECT_EQ(v, "tcp");
  EXPECT_EQ(messageFor(setting::Transport, "carrier-pigeon", &v),
            "MSCCLC_TRANSPORT='carrier-pigeon': expected auto, tcp or ib");
  Environment env;
  env.unset("MSCCLC_TRANSPORT");
  ASSERT_TRUE(get(setting::Transport, &v).isOk());
  EXPECT_EQ(v, "auto");
}

TEST(SettingsParsing, FallbacksAreReadWhileOursIsUnset) {
  Environment env;
  env.unset("MSCCLC_IB_GID_INDEX");
  env.set("NCCL_IB_GID_INDEX", "3");
  int64_t v = 0;
  ASSERT_TRUE(get(setting::IbGidIndex, &v).isOk());
  EXPECT_EQ(v, 3);
  env.set("MSCCLC_IB_GID_INDEX", "1"); // ours wins
  ASSERT_TRUE(get(setting::IbGidIndex, &v).isOk());
  EXPECT_EQ(v, 1);
  env.unset("MSCCLC_IB_GID_INDEX");
  env.set("NCCL_IB_GID_INDEX", "300"); // the message names NCCL's
  EXPECT_EQ(get(setting::IbGidIndex, &v).message(),
            "NCCL_IB_GID_INDEX='300': expected an integer from 0 to 255");
  env.unset("MSCCLC_SOCKET_IFNAME");
  env.set("NCCL_SOCKET_IFNAME", "^docker");
  std::optional<RawSetting> raw = get(setting::SocketIfname);
  ASSERT_TRUE(raw);
  EXPECT_STREQ(raw->name(), "NCCL_SOCKET_IFNAME");
  EXPECT_STREQ(raw->text, "^docker");
}

// A secret must be certainly not random to be refused: too few bits, too
// few different characters, or one piece repeated. The value is never part
// of the message.
TEST(SettingsParsing, SecretsAreNeverRepeated) {
  std::string v;
  std::string message = messageFor(setting::BootstrapSecret, "hunter2", &v);
  EXPECT_EQ(message,
            "MSCCLC_BOOTSTRAP_SECRET is too short: it must hold at least 128 "
            "random bits, written as 32 or more hex digits or 22 or more "
            "base64 characters with at least 9 different ones, e.g. the "
            "output of `openssl rand -hex 16`");
  EXPECT_NE(messageFor(setting::BootstrapSecret, std::string(32, '7').c_str(),
                       &v)
                .find("too few different characters"),
            std::string::npos);
  EXPECT_NE(messageFor(setting::BootstrapSecret,
                       "0123456789abcdef0123456789abcdef", &v)
                .find("one piece repeated"),
            std::string::npos);
  EXPECT_NE(messageFor(setting::BootstrapSecret,
                       "5f0c1e9a7b3d48e2a61f9c0d2b7e4a38!", &v)
                .find("neither hex digits nor base64"),
            std::string::npos);
  const char *good = "5f0c1e9a7b3d48e2a61f9c0d2b7e4a38";
  EXPECT_EQ(messageFor(setting::BootstrapSecret, good, &v), "");
  EXPECT_EQ(v, good);
  EXPECT_EQ(messageFor(setting::BootstrapSecret, "q2Xv8LmP0zR4tN7wYb1Kc9==", &v),
            "");
}

TEST(SettingsParsing, ReadOrDefaultFallsBackToTheDefault) {
  Environment env;
  env.set("MSCCLC_TRANSPORT", "carrier-pigeon");
  EXPECT_EQ(getOrDefault(setting::Transport), "auto");
  env.set("MSCCLC_TRANSPORT", "ib");
  EXPECT_EQ(getOrDefault(setting::Transport), "ib");
  env.set("CUDA_DEVICE_MAX_CONNECTIONS", "lots");
  EXPECT_EQ(getOrDefault(setting::CudaDeviceMaxConnections), 8);
}

// --- Converted call sites: a bad value is an error, not a silent default ----

TEST(SettingsCallSites, MulticastSwitchIsABoolean) {
  Environment env;
  env.unset("NCCL_NVLS_ENABLE");
  // Once any value but 0 turned multicast off, "false" and "no" included.
  env.set("MSCCLC_DISABLE_MULTICAST", "false");
  EXPECT_TRUE(multicastAllowed().isOk());
  env.set("MSCCLC_DISABLE_MULTICAST", "maybe");
  Status s = multicastAllowed();
  EXPECT_EQ(s.code(), Code::InvalidArgument);
  EXPECT_EQ(s.message(), "MSCCLC_DISABLE_MULTICAST='maybe': expected 1, 0, "
                         "true, false, yes, no, on or off");
  env.set("MSCCLC_DISABLE_MULTICAST", "on");
  EXPECT_EQ(multicastAllowed().code(), Code::Unsupported);
  env.unset("MSCCLC_DISABLE_MULTICAST");
  env.set("NCCL_NVLS_ENABLE", "yes"); // NCCL's is an integer
  EXPECT_NE(multicastAllowed().message().find("NCCL_NVLS_ENABLE='yes'"),
            std::string::npos);
}

TEST(SettingsCallSites, KernelTimeoutRefusesGarbage) {
  Environment env;
  uint64_t ns = 0;
  env.unset("MSCCLC_TIMEOUT_MS");
  ASSERT_TRUE(kernelTimeoutNs(&ns).isOk());
  EXPECT_EQ(ns, uint64_t(30000) * 1000000);
  env.set("MSCCLC_TIMEOUT_MS", "2000");
  ASSERT_TRUE(kernelTimeoutNs(&ns).isOk());
  EXPECT_EQ(ns, uint64_t(2000) * 1000000);
  // Once "abc" became 0: no time-out at all.
  env.set("MSCCLC_TIMEOUT_MS", "abc");
  EXPECT_NE(kernelTimeoutNs(&ns).message().find("MSCCLC_TIMEOUT_MS='abc'"),
            std::string::npos);
}

TEST(SettingsCallSites, BufferContextsAndEpochs) {
  Environment env;
  size_t contexts = 0;
  env.set("MSCCLC_MAX_BUFFER_CONTEXTS", "-3"); // once silently 8
  EXPECT_EQ(maxContexts(&contexts).message(),
            "MSCCLC_MAX_BUFFER_CONTEXTS='-3': expected an integer from 1 to "
            "4096");
  env.unset("MSCCLC_MAX_BUFFER_CONTEXTS");
  ASSERT_TRUE(maxContexts(&contexts).isOk());
  EXPECT_EQ(contexts, 8u);
  uint32_t epoch = 1;
  env.set("MSCCLC_TEST_EPOCH_START", "banana"); // once silently 0
  EXPECT_FALSE(firstEpoch(&epoch).isOk());
  env.set("MSCCLC_TEST_EPOCH_START", "0xffffffe0");
  ASSERT_TRUE(firstEpoch(&epoch).isOk());
  EXPECT_EQ(epoch, 0xffffffe0u);
}

TEST(SettingsCallSites, TransportVariables) {
  Environment env;
  env.set("MSCCLC_TRANSPORT", "IB");
  EXPECT_TRUE(checkTransportVariable().isOk());
  EXPECT_TRUE(transportRequiresIb());
  env.set("MSCCLC_TRANSPORT", "carrier-pigeon");
  EXPECT_EQ(checkTransportVariable().message(),
            "MSCCLC_TRANSPORT='carrier-pigeon': expected auto, tcp or ib");
  // The IB options take the transport time-out as a duration now (it was
  // an integer there and a number in the TCP transport).
  env.unset("MSCCLC_TRANSPORT");
  env.set("MSCCLC_TRANSPORT_TIMEOUT", "2.5");
  IbOptions ib;
  ASSERT_TRUE(ibOptionsFromEnv(&ib).isOk());
  EXPECT_EQ(ib.timeoutSeconds, 2.5);
  env.set("MSCCLC_TRANSPORT_TIMEOUT", "1e10");
  EXPECT_NE(ibOptionsFromEnv(&ib).message().find(
                "MSCCLC_TRANSPORT_TIMEOUT='1e10'"),
            std::string::npos);
}

// --- The log level: one setting, run with the environment of each case ----
// (ctest registers runtime-SettingsTest-log-* with EXPECT_LOG_LEVEL set.)

TEST(LogLevel, FromTheEnvironmentOfThisRun) {
  const char *expected = getenv("EXPECT_LOG_LEVEL");
  if (!expected)
    GTEST_SKIP() << "run by the runtime-SettingsTest-log-* tests";
  std::optional<LogLevel> level = configuredLogLevel();
  const char *names[] = {"none", "error", "warn", "info", "debug", "trace"};
  EXPECT_EQ(level ? names[int(*level)] : "unset", std::string(expected));
}
