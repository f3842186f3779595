//===- RtcLibrary.cpp - What NVRTC and hipRTC share, through dlopen ------===//

#include "RtcLibrary.h"

#include "mscclc/jit/Nvrtc.h"

#include <dlfcn.h>

namespace mscclc::jit::rtc {
namespace {

/// Frees a program on every path out of compile().
struct ProgramGuard {
  const Library &lib;
  Program program = nullptr;
  ~ProgramGuard() {
    if (program)
      lib.destroyProgram(&program);
  }
};

std::string statusText(const Library &lib, const char *call, Status status) {
  return lib.prefix + call + ": " + lib.errorString(status);
}

} // namespace

void *Library::lookup(const char *name) {
  std::string symbol = prefix + name;
  void *fn = dlsym(handle, symbol.c_str());
  if (!fn)
    error = path + " lacks " + symbol;
  return fn;
}

void open(Library *lib, const std::vector<std::string> &candidates,
          const std::function<bool(Library &)> &bindRest,
          const std::string &notFound) {
  bool opened = false;
  std::string loaderReason;
  for (const std::string &path : candidates) {
    lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
      const char *why = dlerror();
      loaderReason = why ? why : "dlopen failed";
      continue;
    }
    opened = true;
    lib->path = path;
    bool ok = lib->bind(lib->version, "Version") &&
              lib->bind(lib->createProgram, "CreateProgram") &&
              lib->bind(lib->compileProgram, "CompileProgram") &&
              lib->bind(lib->getLogSize, "GetProgramLogSize") &&
              lib->bind(lib->getLog, "GetProgramLog") &&
              lib->bind(lib->destroyProgram, "DestroyProgram") &&
              lib->bind(lib->errorString, "GetErrorString") && bindRest(*lib);
    if (ok) {
      lib->error.clear();
      return;
    }
    dlclose(lib->handle);
    lib->handle = nullptr;
  }
  if (!opened)
    lib->error = candidates.size() == 1 ? notFound + ": " + loaderReason
                                        : notFound;
}

bool version(const Library &lib, std::string *version) {
  if (!lib.handle) {
    *version = lib.error;
    return false;
  }
  int major = 0, minor = 0;
  if (lib.version(&major, &minor) != 0) {
    *version = lib.prefix + "Version failed";
    return false;
  }
  *version = std::to_string(major) + "." + std::to_string(minor);
  return true;
}

Compiled compile(const Library &lib, const std::string &source,
                 const std::string &sourceName,
                 const std::vector<std::string> &options, CodeSizeFn codeSize,
                 CodeFn code, const char *codeName) {
  Compiled result;
  std::vector<const char *> names, texts;
  for (const DeviceHeader &h : deviceHeaders()) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  ProgramGuard guard{lib};
  Status status = lib.createProgram(&guard.program, source.c_str(),
                                    sourceName.c_str(), int(names.size()),
                                    texts.data(), names.data());
  if (status != 0) {
    result.log = statusText(lib, "CreateProgram", status);
    return result;
  }
  std::vector<const char *> optionPtrs;
  for (const std::string &o : options)
    optionPtrs.push_back(o.c_str());
  status = lib.compileProgram(guard.program, int(optionPtrs.size()),
                              optionPtrs.data());
  size_t logSize = 0;
  if (lib.getLogSize(guard.program, &logSize) == 0 && logSize > 1) {
    result.log.resize(logSize);
    if (lib.getLog(guard.program, result.log.data()) != 0)
      result.log.clear();
    while (!result.log.empty() &&
           (result.log.back() == '\0' || result.log.back() == '\n'))
      result.log.pop_back();
  }
  if (status != 0) {
    if (result.log.empty())
      result.log = statusText(lib, "CompileProgram", status);
    return result;
  }
  size_t size = 0;
  status = codeSize(guard.program, &size);
  if (status == 0 && size > 0) {
    result.binary.resize(size);
    status = code(guard.program, result.binary.data());
  }
  if (status != 0 || size == 0) {
    result.binary.clear();
    result.log = lib.prefix + codeName + ": " +
                 (status != 0 ? lib.errorString(status) : "empty code");
    return result;
  }
  result.ok = true;
  return result;
}

} // namespace mscclc::jit::rtc
