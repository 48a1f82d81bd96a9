// Errors as values. A Status is ok or carries a code and a message that names the file, key or
// field at fault and says what to do. Result<T> is a T or a non-ok Status.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tilebank {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,   // malformed file, flag or descriptor
  kNotFound,       // bank, file or key absent
  kRefused,        // a valid request the bank will not carry out (other soc, newer format, read-only)
  kCorrupt,        // stored data fails its checks
  kIoError,        // the operating system or LMDB failed
};

class Status {
 public:
  Status() = default;
  static Status Ok() { return {}; }
  static Status InvalidInput(std::string msg) { return {StatusCode::kInvalidInput, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status Refused(std::string msg) { return {StatusCode::kRefused, std::move(msg)}; }
  static Status Corrupt(std::string msg) { return {StatusCode::kCorrupt, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prefixes the message with context ("importing x.jsonl: ...").
  Status WithContext(const std::string& context) const;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {}
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tilebank

// Early return of a failed Status from a function returning Status or Result<T>.
#define TB_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::tilebank::Status tb_status_ = (expr); \
    if (!tb_status_.ok()) return tb_status_; \
  } while (0)
