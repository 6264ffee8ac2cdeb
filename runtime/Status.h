//===- Status.h - Error status returned by the runtime ---------*- C++ -*-===//
//
// The runtime never calls exit() or abort() on bad input: every fallible
// function returns a Status, ok or an error with a human-readable message.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_STATUS_H
#define XLNETC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace xlnetc::rt {

/// Success, or an error carrying a message meant for the user.
class [[nodiscard]] Status {
public:
  /// The success value.
  static Status ok() { return Status(); }
  /// An error with `message`.
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }

  bool isOk() const { return !failed_; }
  /// True when ok, so `if (!status) return status;` propagates errors.
  explicit operator bool() const { return isOk(); }
  /// The error message (empty when ok).
  const std::string &message() const { return message_; }

  /// The same status with `prefix` prepended to the message (ok stays ok).
  Status withPrefix(const std::string &prefix) const {
    return isOk() ? *this : error(prefix + message_);
  }

private:
  Status() = default;
  bool failed_ = false;
  std::string message_;
};

} // namespace xlnetc::rt

/// Evaluates `expr` (a Status) and returns it from the enclosing function if
/// it is an error.
#define XLNETC_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::xlnetc::rt::Status xlnetcStatus_ = (expr);                               \
    if (!xlnetcStatus_)                                                        \
      return xlnetcStatus_;                                                    \
  } while (false)

#endif // XLNETC_RUNTIME_STATUS_H
