//===- RtcLibrary.h - What NVRTC and hipRTC share, through dlopen --------===//
//
// NVRTC and hipRTC have one C API under two prefixes ("nvrtc", "hiprtc"): a
// program made from a source and named headers, compiled with options, its
// log and its code read back. One table of those entry points, one loader
// and one compile routine serve both. Nvrtc.cpp and Hiprtc.cpp keep what
// differs: where the library is found, the option list, and which code is
// read (PTX or CUBIN; an AMDGPU code object).
//
// Internal to mscclc_jit; the entry points are declared here, so building
// needs neither CUDA nor ROCm headers.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_JIT_RTCLIBRARY_H
#define MSCCLC_JIT_RTCLIBRARY_H

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mscclc::jit::rtc {

typedef int Status; ///< 0 is success in both APIs
typedef struct ProgramImpl *Program;
using CodeSizeFn = Status (*)(Program, size_t *);
using CodeFn = Status (*)(Program, char *);

struct Library {
  std::string prefix; ///< "nvrtc" or "hiprtc"
  void *handle = nullptr;
  std::string path;  ///< the file it came from
  std::string error; ///< why it did not load
  Status (*version)(int *, int *) = nullptr;
  Status (*createProgram)(Program *, const char *, const char *, int,
                          const char *const *, const char *const *) = nullptr;
  Status (*compileProgram)(Program, int, const char *const *) = nullptr;
  Status (*getLogSize)(Program, size_t *) = nullptr;
  Status (*getLog)(Program, char *) = nullptr;
  Status (*destroyProgram)(Program *) = nullptr;
  const char *(*errorString)(Status) = nullptr;

  /// Binds the entry point prefix + `name` to `fn`; false, with `error`
  /// set, when the library lacks it.
  template <class F> bool bind(F &fn, const char *name) {
    fn = reinterpret_cast<F>(lookup(name));
    return fn != nullptr;
  }

private:
  void *lookup(const char *name);
};

/// Opens into `lib` the first of `candidates` (names for the loader's
/// search, or paths) that has every shared entry point and those `bindRest`
/// binds. When none has, `lib->handle` stays null and `lib->error` says
/// why: `notFound` when none could be opened (followed by the loader's
/// reason when `candidates` is a single file), else what the last one
/// lacks.
void open(Library *lib, const std::vector<std::string> &candidates,
          const std::function<bool(Library &)> &bindRest,
          const std::string &notFound);

/// "major.minor" in `version`, or the reason there is none.
bool version(const Library &lib, std::string *version);

/// What compile() gives: the code when `ok`, and the compiler's log (or why
/// it could not run).
struct Compiled {
  bool ok = false;
  std::string binary;
  std::string log;
};

/// Compiles `source` (named `sourceName` in messages) with the embedded
/// device headers and `options`, then reads the code with `codeSize` and
/// `code` (`codeName` names them in messages). Empty code is an error.
Compiled compile(const Library &lib, const std::string &source,
                 const std::string &sourceName,
                 const std::vector<std::string> &options, CodeSizeFn codeSize,
                 CodeFn code, const char *codeName);

} // namespace mscclc::jit::rtc

#endif // MSCCLC_JIT_RTCLIBRARY_H
