//===- AotStore.cpp - Kernels compiled when the library was built ---------===//

#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/KernelEntry.h"
#include "mscclc/runtime/Settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

namespace {

// Not the cache's magic: a cache entry copied into the store (built by an
// NVRTC the key does not name) is refused as foreign; nor is a bundle ever
// taken for a cubin, or the other way round.
const char *magicOf(AotEntry kind) {
  return kind == AotEntry::Bundle ? "MSCCLC-AOT-BUNDLE-1" : "MSCCLC-AOT-CUBIN-1";
}

/// The directory of the binary holding this code (libmscclc.so, or a
/// program that links the runtime statically).
std::string ownDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&ownDirectory), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// mkdir -p, world-readable: the store is shipped with the library.
Status makeDirs(const std::string &path) {
  std::string partial = path.size() && path[0] == '/' ? "/" : "";
  size_t from = 0;
  while (from <= path.size()) {
    size_t slash = path.find('/', from);
    std::string part = path.substr(from, slash - from);
    from = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (part.empty())
      continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return systemError(fmt::format("cannot create {}: {}", partial,
                                     strerror(errno)));
  }
  return Status::ok();
}

} // namespace

Status AotStore::fromEnvironment(AotStore *out) {
  *out = AotStore();
  bool enabled = true;
  MSCCLC_TRY(get(setting::Aot, &enabled));
  if (!enabled)
    return Status::ok();
  if (std::string dir = get(setting::AotDir); !dir.empty()) {
    *out = AotStore(dir);
    return Status::ok();
  }
  std::string own = ownDirectory();
  if (!own.empty())
    // <prefix>/lib, or <prefix>/lib/<multiarch> (GNUInstallDirs on Debian).
    for (const char *up : {"/../share/mscclc/kernels",
                           "/../../share/mscclc/kernels"})
      if (isDirectory(own + up)) {
        *out = AotStore(own + up);
        return Status::ok();
      }
  return Status::ok();
}

std::string AotStore::pathFor(const std::string &key, AotEntry kind) const {
  return dir_ + "/" + key + (kind == AotEntry::Bundle ? ".bundle" : ".cubin");
}

Status AotStore::lookup(const std::string &key, std::string *binary, bool *hit,
                        AotEntry kind) const {
  *hit = false;
  if (!enabled())
    return Status::ok();
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0)
    return Status::ok();
  // Whoever may write the store chooses the GPU code this process runs.
  Status trusted = checkTrustedDirectory(dir_, "ahead-of-time kernel store");
  if (!trusted.isOk())
    return unsupported(fmt::format(
        "{}; not using it (make it root's or yours and `chmod go-w` it, or "
        "set MSCCLC_AOT_DIR, or MSCCLC_AOT=0)",
        trusted.message()));
  std::string path = pathFor(key, kind);
  const char *what =
      kind == AotEntry::Bundle ? "ahead-of-time program bundle"
                               : "ahead-of-time kernel";
  FileRules rules;
  rules.what = what;
  rules.maxBytes = limits::kMaxKernelEntryBytes;
  rules.trusted = true;
  std::string contents;
  bool found = false;
  Status read = readRegularFile(path, rules, &contents, &found);
  if (!found)
    return Status::ok();
  if (!read.isOk())
    return unsupported(fmt::format("{}: ignored", read.message()));
  EntryCheck check = parseKernelEntry(contents, magicOf(kind), key, binary);
  if (check != EntryCheck::Ok)
    return unsupported(fmt::format("{} {} is {}: ignored", what, path,
                                   entryCheckReason(check)));
  *hit = true;
  return Status::ok();
}

Status AotStore::write(const std::string &key, const std::string &binary,
                       AotEntry kind) const {
  if (!enabled())
    return invalidArgument("no ahead-of-time store directory was given");
  MSCCLC_TRY(makeDirs(dir_));
  return writeKernelEntry(dir_, pathFor(key, kind), magicOf(kind), key,
                          binary);
}

} // namespace mscclc::rt
