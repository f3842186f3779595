//===- KernelEntry.h - The file format of a stored kernel -----*- C++ -*-===//
//
// One compiled kernel on disk, in the user's kernel cache and in the
// ahead-of-time store alike:
//   magic '\n' key '\n' size '\n' sha256(bytes) '\n' bytes
// The header repeats the key the file is named by, so an entry copied or
// renamed to another key is refused, and the checksum catches truncation
// and damage.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_KERNELENTRY_H
#define MSCCLC_RUNTIME_KERNELENTRY_H

#include "mscclc/runtime/Status.h"

#include <string>

namespace mscclc::rt {

/// The bytes of an entry holding `binary` under `key`.
std::string formatKernelEntry(const std::string &magic, const std::string &key,
                              const std::string &binary);

enum class EntryCheck {
  Ok,
  OtherFormat, ///< another magic: an older format, or not an entry at all
  WrongKey,    ///< the entry of another key
  Truncated,
  Corrupt, ///< checksum mismatch
};

/// Why an entry was refused, for messages ("truncated", ...).
const char *entryCheckReason(EntryCheck check);

/// Checks `contents` as the entry of `key` and on success moves its binary
/// into *binary.
EntryCheck parseKernelEntry(const std::string &contents,
                            const std::string &magic, const std::string &key,
                            std::string *binary);

/// Writes the entry of `binary` under `key` to `path`, an entry of the
/// folder `dir`, through a temporary file there renamed over it: concurrent
/// readers never see half an entry.
Status writeKernelEntry(const std::string &dir, const std::string &path,
                        const std::string &magic, const std::string &key,
                        const std::string &binary);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_KERNELENTRY_H
