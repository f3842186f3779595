//===- Files.h - How the runtime opens the files it reads ----------------===//
//
// Every file the runtime reads (kernel-cache and ahead-of-time store
// entries, the stdlib's catalog, selection table and sources) is read here,
// through readRegularFile, so that each is:
//  - a regular file: a directory, FIFO, socket or device (a symlink to
//    /dev/zero) is refused at once, never read until memory runs out or
//    waited on forever (the file is opened non-blocking and checked with
//    fstat on the descriptor read, so it cannot be swapped in between);
//  - bounded in size: each kind of file has a stated limit (below), and a
//    larger one is refused with a message naming it;
//  - where its contents run as code (cache and store entries), trusted:
//    not a symlink, owned by this user or root and writable by no one else.
// The same trust rules apply to the directories holding such files and to
// the programs and libraries the runtime runs or loads (checkTrusted*).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_FILES_H
#define MSCCLC_RUNTIME_FILES_H

#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace mscclc::rt {

/// What a file must be to be read.
struct FileRules {
  const char *what = "file"; ///< for messages: "kernel cache entry"
  uint64_t maxBytes = limits::kMaxTableBytes; ///< size limits: Limits.h
  /// Its contents run as code: refuse a symlink, and a file that another
  /// user owns or that group or others may write.
  bool trusted = false;
};

/// Reads the whole of `path` under `rules`. A refusal names the path, what
/// it is and the rule it breaks. When `found` is given, a path that does not
/// exist is no error: *found is false and *out empty.
Status readRegularFile(const std::string &path, const FileRules &rules,
                       std::string *out, bool *found = nullptr);

/// A text file of at most limits::kMaxTableBytes (readRegularFile's rules).
Status readFile(const std::string &path, std::string *out);

/// Why a file or directory of this stat may be changed by someone other
/// than this user or root ("owned by user 1234", "writable by group and
/// others (mode 0666)"); empty when it may not.
std::string untrustedBecause(uid_t owner, mode_t mode);

/// Ok when `dir` is a directory that only this user or root can change;
/// else Unsupported naming `what`, the path and why. A missing directory
/// is an error too: the caller checks whether it exists first.
Status checkTrustedDirectory(const std::string &dir, const char *what);

/// Ok when `path` (followed through symlinks) is a regular file that only
/// this user or root can change, in a directory only they can change: a
/// program or library this process runs or loads. Else Unsupported naming
/// `what`, the path and why.
Status checkTrustedFile(const std::string &path, const char *what);

bool isRegularFile(const std::string &path);
bool isDirectory(const std::string &path);
bool isExecutableFile(const std::string &path);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_FILES_H
