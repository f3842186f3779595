//===- RealNccl.cpp - The real NCCL library, loaded for the fallback ------===//

#include "RealNccl.h"

#include "Errors.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Settings.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>

namespace mscclc::nccl {
namespace {

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool valid = false;
  bool operator==(const FileId &o) const {
    return valid && o.valid && dev == o.dev && ino == o.ino;
  }
};

FileId fileId(const std::string &path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0)
    return {};
  return {st.st_dev, st.st_ino, true};
}

/// The file this library was loaded from.
FileId selfFile() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&candidateNcclPaths), &info) ||
      !info.dli_fname)
    return {};
  return fileId(info.dli_fname);
}

/// The file that holds `symbol` (to tell whether a handle is ours).
FileId fileOf(void *symbol) {
  Dl_info info;
  if (!symbol || !dladdr(symbol, &info) || !info.dli_fname)
    return {};
  return fileId(info.dli_fname);
}

void addGlob(const std::string &pattern, std::vector<std::string> *out) {
  glob_t g;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      out->emplace_back(g.gl_pathv[i]);
  globfree(&g);
}

/// site-packages folders of libraries this process has loaded (torch's
/// own, when we are PyTorch's libnccl.so.2).
std::vector<std::string> loadedSitePackages() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *out = static_cast<std::vector<std::string> *>(data);
        std::string path = info->dlpi_name ? info->dlpi_name : "";
        for (const char *marker : {"/site-packages/", "/dist-packages/"}) {
          size_t at = path.find(marker);
          if (at != std::string::npos) {
            out->push_back(path.substr(0, at + strlen(marker) - 1));
            break;
          }
        }
        return 0;
      },
      &dirs);
  return dirs;
}

/// Entries of a colon-separated list such as LD_LIBRARY_PATH.
std::vector<std::string> splitPathList(rt::ListSetting list) {
  std::vector<std::string> items;
  std::optional<rt::RawSetting> raw = rt::get(list);
  std::string s = raw ? raw->text : "";
  size_t start = 0;
  while (start <= s.size()) {
    size_t colon = s.find(':', start);
    std::string item = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!item.empty())
      items.push_back(item);
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  return items;
}

/// Folders the dynamic loader searches for a system libnccl.so.2. They are
/// tried by path: once this library is loaded as libnccl.so.2, dlopen of
/// the bare name returns this library, not the system's.
std::vector<std::string> systemLibraryDirs() {
  std::vector<std::string> dirs = splitPathList(rt::setting::LdLibraryPath);
  // ldconfig's folders (CUDA's and NCCL's packages add theirs here).
  std::vector<std::string> confs;
  addGlob("/etc/ld.so.conf.d/*.conf", &confs);
  for (const std::string &conf : confs) {
    std::ifstream in(conf);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] == '/')
        dirs.push_back(line.substr(0, line.find_first_of(" \t#")));
  }
  for (const char *dir : {"/usr/local/lib", "/usr/lib/x86_64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                          "/lib/x86_64-linux-gnu", "/lib64", "/lib"})
    dirs.emplace_back(dir);
  return dirs;
}

std::vector<std::string> sitePackages() {
  std::vector<std::string> dirs = loadedSitePackages();
  for (const std::string &item : splitPathList(rt::setting::PythonPath))
    dirs.push_back(item);
  for (rt::PathSetting var : {rt::setting::VirtualEnv, rt::setting::CondaPrefix})
    if (std::string prefix = rt::get(var); !prefix.empty())
      addGlob(prefix + "/lib/python3*/site-packages", &dirs);
  if (std::string home = rt::get(rt::setting::Home); !home.empty())
    addGlob(home + "/.local/lib/python3*/site-packages", &dirs);
  addGlob("/usr/local/lib/python3*/dist-packages", &dirs);
  addGlob("/usr/local/lib/python3*/site-packages", &dirs);
  addGlob("/usr/lib/python3/dist-packages", &dirs);
  addGlob("/usr/lib/python3*/site-packages", &dirs);
  return dirs;
}

/// RTLD_DEEPBIND makes the real NCCL's calls of its own nccl* functions
/// bind to itself, not to this library's of the same names. The sanitizer
/// runtimes refuse it (they intercept malloc and friends through the
/// global scope), so ASan builds load it without: their tests load stand-in
/// libraries, whose functions call none of their own.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDeepBind = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

/// The executable segments of the loaded object `handle`.
std::vector<RealNccl::CodeRange> codeRanges(void *handle) {
  struct Search {
    uintptr_t base = 0;
    std::vector<RealNccl::CodeRange> found;
  } search;
  link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return {};
  search.base = map->l_addr;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        if (info->dlpi_addr != s->base)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
            s->found.push_back({info->dlpi_addr + ph.p_vaddr,
                                info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
        }
        return 1;
      },
      &search);
  return search.found;
}

/// Opens `path` as the real NCCL; null with `why` when it is not one.
std::unique_ptr<RealNccl> tryLoad(const std::string &path, std::string *why) {
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kDeepBind);
  if (!h) {
    const char *e = dlerror();
    *why = fmt::format("{}: {}", path, e ? e : "cannot be loaded");
    return nullptr;
  }
  void *probe = dlsym(h, "ncclGetVersion");
  if (!probe || fileOf(probe) == selfFile()) {
    *why = fmt::format("{}: is mscclc's own library", path);
    dlclose(h);
    return nullptr;
  }
  auto real = std::make_unique<RealNccl>();
  real->path = path;
  real->handle = h;
  real->code = codeRanges(h);
  std::string missing;
#define MSCCLC_RESOLVE(name)                                                   \
  real->name =                                                                 \
      reinterpret_cast<decltype(real->name)::Pointer>(dlsym(h, "nccl" #name)); \
  if (!real->name)                                                             \
    missing += " nccl" #name;
  MSCCLC_REAL_NCCL_FUNCTIONS(MSCCLC_RESOLVE)
#undef MSCCLC_RESOLVE
#define MSCCLC_RESOLVE_OPTIONAL(name)                                          \
  real->name =                                                                 \
      reinterpret_cast<decltype(real->name)::Pointer>(dlsym(h, "nccl" #name));
  MSCCLC_REAL_NCCL_OPTIONAL_FUNCTIONS(MSCCLC_RESOLVE_OPTIONAL)
#undef MSCCLC_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    *why = fmt::format("{}: lacks{} (older than NCCL 2.18?)", path, missing);
    dlclose(h);
    return nullptr;
  }
  if (real->GetVersion(&real->version) != ncclSuccess)
    real->version = 0;
  return real;
}

std::once_flag loadOnce;
std::unique_ptr<RealNccl> loaded;
std::string loadFailure;
/// `loaded` once load() finished, for readers that must not trigger it.
std::atomic<const RealNccl *> published{nullptr};

/// Why a library found by searching may not be loaded ("" where it may):
/// another user could change it or its directory (Files.h), and nobody
/// chose it. A bare name is the dynamic loader's choice, from the system's
/// own folders.
std::string untrustedLibrary(const std::string &path) {
  if (path.find('/') == std::string::npos)
    return "";
  rt::Status trusted = rt::checkTrustedFile(path, "NCCL library");
  return trusted.isOk() ? "" : trusted.message();
}

void load() {
  if (std::string forced = rt::get(rt::setting::NcclLibrary); !forced.empty()) {
    // Named by the user: loaded even where others could change it, but the
    // log says so.
    if (std::string why = untrustedLibrary(forced); !why.empty())
      logWarn(fmt::format("mscclc fallback: {}; loading it anyway, because "
                          "MSCCLC_NCCL_LIBRARY names it",
                          why));
    std::string why;
    loaded = tryLoad(forced, &why);
    if (!loaded)
      loadFailure = fmt::format("MSCCLC_NCCL_LIBRARY={} is not usable ({})",
                                forced, why);
    return;
  }
  std::vector<std::string> tried;
  std::vector<FileId> seen = {selfFile()};
  for (const std::string &path : candidateNcclPaths()) {
    bool bare = path.find('/') == std::string::npos;
    FileId file = fileId(path);
    if (!bare && !file.valid)
      continue; // not installed there: not worth listing
    if (!bare && std::find(seen.begin(), seen.end(), file) != seen.end())
      continue; // ours, or a folder listed twice (a link)
    seen.push_back(file);
    std::string why = untrustedLibrary(path);
    if (!why.empty()) {
      tried.push_back(why + ": skipped (set MSCCLC_NCCL_LIBRARY to load it "
                            "anyway)");
      continue;
    }
    loaded = tryLoad(path, &why);
    if (loaded) {
      if (infoEnabled())
        logInfo(fmt::format("mscclc fallback: the real NCCL {} from {}",
                            loaded->version, loaded->path));
      return;
    }
    tried.push_back(why);
  }
  loadFailure = "no real NCCL library was found (set MSCCLC_NCCL_LIBRARY to "
                "NVIDIA's libnccl.so.2, or install PyTorch's nvidia-nccl "
                "wheel); tried: ";
  for (size_t i = 0; i < tried.size(); ++i)
    loadFailure += (i ? "; " : "") + tried[i];
}

} // namespace

std::vector<std::string> candidateNcclPaths() {
  std::vector<std::string> paths;
  for (const std::string &site : sitePackages())
    paths.push_back(site + "/nvidia/nccl/lib/libnccl.so.2");
  for (const std::string &dir : systemLibraryDirs())
    paths.push_back(dir + "/libnccl.so.2");
  paths.push_back("libnccl.so.2"); // whatever else the loader finds
  return paths;
}

const RealNccl *realNccl(std::string *why) {
  std::call_once(loadOnce, [] {
    load();
    published.store(loaded.get(), std::memory_order_release);
  });
  if (!loaded && why)
    *why = loadFailure;
  return loaded.get();
}

const RealNccl *loadedRealNccl() {
  return published.load(std::memory_order_acquire);
}

} // namespace mscclc::nccl
