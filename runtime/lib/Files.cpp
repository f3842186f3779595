//===- Files.cpp - How the runtime opens the files it reads --------------===//

#include "mscclc/runtime/Files.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

namespace {

/// "a directory", "a FIFO", ...: what a path names that is not a file.
const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

/// "256 MiB" for a limit in whole MiB, else the bytes.
std::string sizeText(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

/// The parent directory of `path` ("." for a bare name).
std::string parentOf(const std::string &path) {
  size_t slash = path.find_last_not_of('/');
  slash = slash == std::string::npos ? std::string::npos
                                     : path.rfind('/', slash);
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status tooLarge(const std::string &path, const FileRules &rules,
                const std::string &size) {
  return invalidArgument(fmt::format(
      "{} {} is {}, more than the limit of {} for a {}: not read", rules.what,
      path, size, sizeText(rules.maxBytes), rules.what));
}

/// Reads at most rules.maxBytes + 1 bytes of `fd` (a file may grow between
/// fstat and read), refusing when there are more.
Status readBounded(int fd, const std::string &path, const FileRules &rules,
                   std::string *out) {
  std::string data;
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return systemError(
          fmt::format("cannot read {} {}: {}", rules.what, path, strerror(errno)));
    if (n == 0)
      break;
    if (data.size() + size_t(n) > rules.maxBytes)
      return tooLarge(path, rules, "growing past the limit");
    data.append(buf, size_t(n));
  }
  *out = std::move(data);
  return Status::ok();
}

/// Closes a descriptor on every way out.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      close(fd);
  }
};

} // namespace

std::string untrustedBecause(uid_t owner, mode_t mode) {
  if (owner != geteuid() && owner != 0)
    return fmt::format("owned by user {}, neither this user ({}) nor root",
                       unsigned(owner), unsigned(geteuid()));
  const char *who = (mode & S_IWGRP) && (mode & S_IWOTH) ? "group and others"
                    : (mode & S_IWGRP)                   ? "its group"
                    : (mode & S_IWOTH)                   ? "others"
                                                         : nullptr;
  if (who)
    return fmt::format("writable by {} (mode {:04o})", who,
                       unsigned(mode & 07777));
  return "";
}

Status readRegularFile(const std::string &path, const FileRules &rules,
                       std::string *out, bool *found) {
  out->clear();
  if (found)
    *found = true;
  // Non-blocking: opening a FIFO must not wait for a writer. No following
  // of a last-component symlink where the contents run as code.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (rules.trusted)
    flags |= O_NOFOLLOW;
  int fd = open(path.c_str(), flags);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && found) {
      *found = false;
      return Status::ok();
    }
    if (err == ELOOP && rules.trusted)
      return unsupported(fmt::format(
          "{} {} is a symbolic link: not read (its contents run as code, and "
          "a link may lead anywhere)",
          rules.what, path));
    return invalidArgument(
        fmt::format("cannot read {} {}: {}", rules.what, path, strerror(err)));
  }
  FdCloser closer{fd};
  // The descriptor's own stat: what is read is what was checked.
  struct stat st;
  if (fstat(fd, &st) != 0)
    return systemError(
        fmt::format("cannot stat {} {}: {}", rules.what, path, strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return invalidArgument(fmt::format(
        "{} {} is {}, not a regular file: not read", rules.what, path,
        kindOf(st.st_mode)));
  if (rules.trusted) {
    std::string why = untrustedBecause(st.st_uid, st.st_mode);
    if (!why.empty())
      return unsupported(fmt::format(
          "{} {} is {}: not read (its contents run as code; only this user "
          "or root may be able to change it)",
          rules.what, path, why));
  }
  if (uint64_t(st.st_size) > rules.maxBytes)
    return tooLarge(path, rules, fmt::format("{} bytes", uint64_t(st.st_size)));
  return readBounded(fd, path, rules, out);
}

Status readFile(const std::string &path, std::string *out) {
  return readRegularFile(path, FileRules(), out);
}

Status checkTrustedDirectory(const std::string &dir, const char *what) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0)
    return unsupported(
        fmt::format("{} {}: {}", what, dir, strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    return unsupported(fmt::format("{} {} is {}, not a directory", what, dir,
                                   kindOf(st.st_mode)));
  std::string why = untrustedBecause(st.st_uid, st.st_mode);
  if (!why.empty())
    return unsupported(fmt::format(
        "{} {} is {}: other users could put code there that this process "
        "would run",
        what, dir, why));
  return Status::ok();
}

Status checkTrustedFile(const std::string &path, const char *what) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return unsupported(fmt::format("{} {}: {}", what, path, strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return unsupported(fmt::format("{} {} is {}, not a regular file", what,
                                   path, kindOf(st.st_mode)));
  std::string why = untrustedBecause(st.st_uid, st.st_mode);
  if (!why.empty())
    return unsupported(fmt::format(
        "{} {} is {}: another user could change what this process runs",
        what, path, why));
  // Whoever may write its directory may replace it: resolved, so that a
  // symlink's own directory is not mistaken for the file's.
  char resolved[PATH_MAX];
  std::string real = realpath(path.c_str(), resolved) ? resolved : path;
  return checkTrustedDirectory(parentOf(real),
                               fmt::format("the directory of {}", what).c_str());
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isExecutableFile(const std::string &path) {
  return isRegularFile(path) && access(path.c_str(), X_OK) == 0;
}

} // namespace mscclc::rt
