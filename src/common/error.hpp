#pragma once
// Errors that reach the command line carry the documented exit code, so the CLI
// maps any failure to one line and the right status without knowing its origin.
#include <stdexcept>
#include <string>

#include "common/terminal_text.hpp"

namespace fusetune {

enum class ExitCode : int {
  ok = 0,
  failure = 1,     // a check failed, no verified winner
  bad_input = 2,   // bad usage, spec, flags, database file
  no_gpu = 3,      // a GPU command on a machine without GPU or driver
  not_found = 4,   // nothing stored for a query or export
};

// The message is made one printable line here, once for every error: messages quote text from
// outside (database strings, dump lines, file names), and a newline or an escape sequence in
// it must not reach the terminal ("Every error is one line", docs/output.md).
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(text::single_line(what)), code_(code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Bad user input: a spec, a flag, a file. Exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(ExitCode::bad_input, what) {}
};

// No GPU or no driver for a command that needs one. Exit code 3.
class NoGpuError : public Error {
 public:
  explicit NoGpuError(const std::string& what) : Error(ExitCode::no_gpu, what) {}
};

// Nothing stored for a query or export. Exit code 4.
class NotFoundError : public Error {
 public:
  explicit NotFoundError(const std::string& what) : Error(ExitCode::not_found, what) {}
};

}  // namespace fusetune
