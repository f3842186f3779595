//===- Status.h - Error values of the mscclc runtime ----------*- C++ -*-===//
//
// Every fallible runtime function returns a Status: a code and a message
// that names what failed and why. Nothing in the runtime throws or aborts;
// the C API turns a Status into an mscclcResult_t and a thread-local message.
// Messages are built with fmt::format, whose format strings are checked
// against the argument types at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_STATUS_H
#define MSCCLC_RUNTIME_STATUS_H

#include <fmt/format.h>

#include <string>
#include <utility>

namespace mscclc::rt {

/// Error classes; they map one to one onto mscclcResult_t.
enum class Code {
  Ok = 0,
  InvalidArgument,
  CudaError,
  SystemError,
  CompileError,
  DeviceError, ///< The kernel recorded an error (wait time-out, ...).
  Unsupported,
  Timeout,     ///< A host-side wait (bootstrap, proxy) timed out.
  Internal,
};

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == Code::Ok; }
  Code code() const { return code_; }
  const std::string &message() const { return message_; }

  /// Prepends context: "while X: <message>".
  Status &context(const std::string &what) {
    if (!isOk())
      message_ = what + ": " + message_;
    return *this;
  }

private:
  Code code_ = Code::Ok;
  std::string message_;
};

inline Status invalidArgument(std::string m) {
  return Status(Code::InvalidArgument, std::move(m));
}
inline Status systemError(std::string m) {
  return Status(Code::SystemError, std::move(m));
}
inline Status internalError(std::string m) {
  return Status(Code::Internal, std::move(m));
}
inline Status unsupported(std::string m) {
  return Status(Code::Unsupported, std::move(m));
}

} // namespace mscclc::rt

/// Returns the Status of `expr` from the calling function when it failed.
#define MSCCLC_TRY(expr)                                                       \
  do {                                                                         \
    ::mscclc::rt::Status mscclcTryStatus_ = (expr);                            \
    if (!mscclcTryStatus_.isOk())                                              \
      return mscclcTryStatus_;                                                 \
  } while (0)

#endif // MSCCLC_RUNTIME_STATUS_H
