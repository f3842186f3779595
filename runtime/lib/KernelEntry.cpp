//===- KernelEntry.cpp - The file format of a stored kernel ---------------===//

#include "mscclc/runtime/KernelEntry.h"
#include "mscclc/runtime/Hash.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

std::string formatKernelEntry(const std::string &magic, const std::string &key,
                              const std::string &binary) {
  return magic + "\n" + key + "\n" + std::to_string(binary.size()) + "\n" +
         sha256Hex(binary) + "\n" + binary;
}

const char *entryCheckReason(EntryCheck check) {
  switch (check) {
  case EntryCheck::Ok:
    return "valid";
  case EntryCheck::OtherFormat:
    return "of another format";
  case EntryCheck::WrongKey:
    return "not the entry of its key";
  case EntryCheck::Truncated:
    return "truncated";
  case EntryCheck::Corrupt:
    return "corrupt (checksum mismatch)";
  }
  return "invalid";
}

EntryCheck parseKernelEntry(const std::string &contents,
                            const std::string &magic, const std::string &key,
                            std::string *binary) {
  if (contents.compare(0, magic.size() + 1, magic + "\n") != 0)
    return EntryCheck::OtherFormat;
  std::string header = magic + "\n" + key + "\n";
  if (contents.compare(0, header.size(), header) != 0)
    return EntryCheck::WrongKey;
  size_t sizeEnd = contents.find('\n', header.size());
  size_t sumEnd = sizeEnd == std::string::npos
                      ? std::string::npos
                      : contents.find('\n', sizeEnd + 1);
  if (sumEnd == std::string::npos)
    return EntryCheck::Truncated;
  unsigned long long size = strtoull(
      contents.substr(header.size(), sizeEnd - header.size()).c_str(), nullptr,
      10);
  if (size == 0 || contents.size() - sumEnd - 1 != size)
    return EntryCheck::Truncated;
  std::string bytes = contents.substr(sumEnd + 1);
  if (sha256Hex(bytes) != contents.substr(sizeEnd + 1, sumEnd - sizeEnd - 1))
    return EntryCheck::Corrupt;
  *binary = std::move(bytes);
  return EntryCheck::Ok;
}

Status writeKernelEntry(const std::string &dir, const std::string &path,
                        const std::string &magic, const std::string &key,
                        const std::string &binary) {
  std::random_device rd;
  std::string tmp =
      fmt::format("{}/.{}.{}.{}.tmp", dir, key, int(getpid()), rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return systemError(
          fmt::format("cannot write {}: {}", tmp, strerror(errno)));
    std::string entry = formatKernelEntry(magic, key, binary);
    out.write(entry.data(), std::streamsize(entry.size()));
    if (!out) {
      unlink(tmp.c_str());
      return systemError(fmt::format("short write to {}", tmp));
    }
  }
  // Readers refuse an entry its group or others may write (Files.h): not
  // left to the umask.
  if (chmod(tmp.c_str(), 0644) != 0) {
    unlink(tmp.c_str());
    return systemError(
        fmt::format("cannot chmod {}: {}", tmp, strerror(errno)));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return systemError(
        fmt::format("cannot rename {}: {}", tmp, strerror(errno)));
  }
  return Status::ok();
}

} // namespace mscclc::rt
