//===- CommandLineFuzzer.cpp - mscclc's command line on any arguments -----===//
//
// Each input is a list of arguments, one per line, that the mscclc driver
// (compiler/tools/mscclc/Driver.h) parses and runs, as main does, on a
// stdlib program chosen by the first byte; `-o /dev/null` is added. Every
// option combination must end in the output or in clear errors: a crash,
// a sanitizer report, a leak or a hang is a finding.
//
// Only mscclc's own options, written `--name` or `--name=value` (and
// `-Dname=value`), are passed on; the rest of a line list is dropped, so
// that no input names files to write (-o, --trace), reads a file of its
// own (--cost-model: the cost-model target's), prints help and exits, or
// starts NVRTC or hipcc (--emit=ptx|cubin|hsaco: seconds a run). Sizes
// are kept small (ranks, instances, schedules; see kBounds): the limits
// themselves are the lit tests' (test/Driver/options.test).
//
// To reproduce a finding: `mscclc <the kept lines> -o /dev/null PROGRAM`.
//
//===----------------------------------------------------------------------===//

#include "../compiler/tools/mscclc/Driver.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr const char *kPrograms[] = {"allreduce_1pa.mscl",
                                     "allgather_ring.mscl",
                                     "broadcast_chain.mscl"};

/// Options passed on, without a value or with one.
constexpr llvm::StringLiteral kOptions[] = {
    "ranks", "gpus-per-node", "instances", "max-proof-chunks", "emit",
    "dtype", "redop", "op", "rank", "arch", "threads-per-block",
    "embed-headers", "no-passes", "static-checks", "skip-static-checks",
    "skip-translation-validation", "verify-each", "single-launch",
    "verify-diagnostics", "simulate", "seed", "schedules", "bytes", "cost",
    "max-input-bytes"};

/// Numeric options whose large values are slow, not wrong: an input past
/// these is skipped. --simulate runs at most 4 schedules (2 when the
/// input names none), over messages of less than a megabyte (4K and 64K
/// when it names none: the default set reaches megabytes).
struct Bound {
  llvm::StringLiteral name;
  int64_t max;
};
constexpr Bound kBounds[] = {
    {"ranks", 16}, {"gpus-per-node", 16}, {"instances", 4}, {"schedules", 4}};

/// Whether a --bytes list may name a megabyte or more.
bool largeMessages(llvm::StringRef sizes) {
  if (sizes.find_first_of("MmGgTtPpEe") != llvm::StringRef::npos)
    return true;
  size_t digits = 0;
  for (char c : sizes) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits > 6)
      return true;
  }
  return false;
}

bool passedOn(llvm::StringRef arg, bool *tooLarge) {
  if (arg.starts_with("-D"))
    return arg.size() > 2;
  if (!arg.consume_front("--"))
    return false;
  auto [name, value] = arg.split('=');
  bool known = false;
  for (llvm::StringRef option : kOptions)
    known |= name == option;
  if (!known)
    return false;
  if (name == "emit" &&
      (value == "ptx" || value == "cubin" || value == "hsaco"))
    return false;
  if (name == "bytes" && largeMessages(value))
    *tooLarge = true;
  for (const Bound &bound : kBounds) {
    int64_t v = 0;
    if (name == bound.name && !value.getAsInteger(0, v) && v > bound.max)
      *tooLarge = true;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mscclc::tools::registerDriverOptions();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > 4096)
    return 0;
  std::string program = std::string(MSCCLC_FUZZ_STDLIB_DIR) + "/" +
                        kPrograms[data[0] % std::size(kPrograms)];
  llvm::StringRef text(reinterpret_cast<const char *>(data + 1), size - 1);
  std::vector<std::string> args = {"mscclc"};
  bool tooLarge = false, simulate = false, schedules = false, bytes = false;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', /*MaxSplit=*/32, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    if (passedOn(line, &tooLarge)) {
      args.push_back(line.str());
      simulate |= line.starts_with("--simulate");
      schedules |= line.starts_with("--schedules");
      bytes |= line.starts_with("--bytes");
    }
  if (tooLarge)
    return 0;
  if (simulate && !schedules)
    args.push_back("--schedules=2");
  if (simulate && !bytes)
    args.push_back("--bytes=4K,64K");
  args.insert(args.end(), {"-o", "/dev/null", program});
  std::vector<const char *> argv;
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());

  llvm::cl::ResetAllOptionOccurrences();
  if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()),
                                         argv.data(),
                                         mscclc::tools::kDriverOverview,
                                         &llvm::nulls()))
    return 0; // a malformed value: refused by the parser, with a message
  (void)mscclc::tools::runDriver();
  return 0;
}
