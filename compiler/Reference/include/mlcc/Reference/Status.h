//===- Status.h - Error results without exceptions --------------*- C++ -*-===//
//
// LLVM builds without exceptions, so kernels report failure by value.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_STATUS_H
#define MLCC_REFERENCE_STATUS_H

#include <sstream>
#include <string>
#include <utility>

namespace mlcc::ref {

class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  template <typename... Args> static Status error(Args &&...args) {
    std::ostringstream os;
    (os << ... << args);
    Status s;
    s.failed_ = true;
    s.message_ = os.str();
    return s;
  }
  bool ok() const { return !failed_; }
  bool failed() const { return failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

/// Returns early from the enclosing function when `expr` fails.
#define MLCC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::mlcc::ref::Status status_ = (expr);                                      \
    if (status_.failed())                                                      \
      return status_;                                                          \
  } while (0)

/// Fails with a message unless `cond` holds. For checks on user input.
#define MLCC_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::mlcc::ref::Status::error(__VA_ARGS__);                          \
  } while (0)

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_STATUS_H
