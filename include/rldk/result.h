// Result<T>: the value of an operation a user can make fail (unreadable file, bad arguments), or the reason why.
// Errors are translated once at each boundary: an exit code and a stderr line in the CLI, an exception in Python.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace rldk {

enum class ErrorCode {
  not_found,         // the path does not exist
  unreadable,        // exists but cannot be read (permissions, I/O error, a directory where a file was expected)
  unrecognized,      // readable, but no known run format in it
  invalid_argument,  // a bad option or value given by the caller
  io,                // writing failed
};

struct Error {
  ErrorCode code;
  std::string message;  // what is wrong, for a person
  std::string context;  // where: a path, or path:line
};

// Renders "context: message" (or just the message), the form used on stderr and in exception texts.
std::string to_string(const Error& error);

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor): returned implicitly
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& value() const& { return std::get<0>(state_); }
  const Error& error() const { return std::get<1>(state_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace rldk
