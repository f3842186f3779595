//===- KernelEntryFuzzer.cpp - Cache and store entries on any bytes ------===//
//
// Each input is the bytes of a kernel-cache or ahead-of-time store entry
// (KernelEntry.h: magic, key, size, checksum, binary), written to a file
// in a private store directory and looked up as the runtime does: through
// the one file reader (Files.h) and the entry parser, as a kernel and as a
// program bundle, and parsed with the cache's magics. An entry's key is
// its file name: where the input's second line is a key (64 hex digits),
// the file is named by it, so that valid entries reach the checksum and
// the hit.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/KernelEntry.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace {

using namespace mscclc::rt;

/// The private store directory of this process, made once.
const std::string &storeDir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/mscclc-kernel-entry-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) {
      perror("mkdtemp");
      abort();
    }
    return std::string(tmpl);
  }();
  return dir;
}

/// The key the entry names on its second line, else a fixed one.
std::string keyOf(const std::string &entry) {
  size_t first = entry.find('\n');
  std::string key = first == std::string::npos ? "" : entry.substr(first + 1, 64);
  bool hex = key.size() == 64 &&
             key.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? key : std::string(64, 'a');
}

void writeEntry(const std::string &path, const std::string &bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) {
    perror(path.c_str());
    abort();
  }
  close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string entry(reinterpret_cast<const char *>(data), size);
  std::string key = keyOf(entry);
  AotStore store(storeDir());
  for (AotEntry kind : {AotEntry::Kernel, AotEntry::Bundle}) {
    std::string path = store.pathFor(key, kind);
    writeEntry(path, entry);
    std::string binary;
    bool hit = false;
    Status s = store.lookup(key, &binary, &hit, kind);
    if (hit && binary.empty())
      abort(); // a hit always carries the bytes
    (void)s;
    unlink(path.c_str());
  }
  // The user cache reads entries the same way, with magics of its own.
  for (const char *magic : {"MSCCLC-CUBIN-2", "MSCCLC-HSACO-1"}) {
    std::string binary;
    (void)parseKernelEntry(entry, magic, key, &binary);
  }
  return 0;
}
