//===- TestFiles.h - Temporary directories and whole files for tests -*- C++ -*-===//
//
// The runtime's tests (unit and GPU) write caches, stores, logs and staged
// sources: each gets a TempDir, a fresh private directory that removes
// itself and everything in it when it goes out of scope, so test runs
// leave nothing under /tmp.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TEST_RUNTIME_TESTFILES_H
#define MSCCLC_TEST_RUNTIME_TESTFILES_H

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace mscclc::test {

/// A fresh directory under $TMPDIR (else /tmp), mode 0700, removed with
/// its contents on destruction. Aborts the test binary when none can be
/// made: every test using it would fail for that reason anyway.
class TempDir {
public:
  explicit TempDir(const std::string &prefix = "mscclc-test") {
    const char *tmp = getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      perror(("mkdtemp " + tmpl).c_str());
      abort();
    }
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ignored; // a test that failed half-way left what it left
    // A test may have made it read-only or writable by all: make it ours
    // to empty again.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  /// The path of `name` inside it.
  std::string operator/(const std::string &name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

/// The whole file (empty when it cannot be read).
inline std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Replaces the file with `bytes`; false when it cannot be written.
inline bool writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return bool(out);
}

} // namespace mscclc::test

#endif // MSCCLC_TEST_RUNTIME_TESTFILES_H
