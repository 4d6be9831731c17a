// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace rsim {

/// Where a value came from: a file and a 1-based line and column (0 when unknown).
struct SourceMark {
  std::string file;
  int line = 0;
  int column = 0;
};

/// Any error the user can cause and fix (bad input, bad usage). The CLI exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration error at a position in a YAML file. what() reads like a compiler diagnostic:
/// "hardware/h100.yaml:12:18: error: 'bandwidth': expected a bandwidth like \"273 GB/s\"".
/// A size past 2^63 (tensor elements or bytes) found when a graph is built or costed: the
/// workload is too large for the model. Analysis reports it at the scenario's `workload:` key.
class SizeOverflowError : public InputError {
 public:
  using InputError::InputError;
};

class ConfigError : public InputError {
 public:
  ConfigError(SourceMark mark, const std::string& message);
  [[nodiscard]] const SourceMark& mark() const { return mark_; }

 private:
  SourceMark mark_;
};

/// Formats "file:line:col: error: message" (or "file: error: message" without a line).
std::string format_diagnostic(const SourceMark& mark, const std::string& message);

/// An internal invariant; it stays on in release builds and throws std::logic_error (exit 1).
#define RSIM_CHECK(condition, message)                                     \
  do {                                                                     \
    if (!(condition)) {                                                    \
      throw std::logic_error(std::string("internal error: ") + (message) + \
                             " [" #condition "] at " __FILE__);            \
    }                                                                      \
  } while (false)

}  // namespace rsim
