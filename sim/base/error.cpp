// SPDX-License-Identifier: MIT
#include "sim/base/error.hpp"

#include <fmt/format.h>

namespace rsim {

std::string format_diagnostic(const SourceMark& mark, const std::string& message) {
  if (mark.line <= 0) {
    return fmt::format("{}: error: {}", mark.file, message);
  }
  return fmt::format("{}:{}:{}: error: {}", mark.file, mark.line, mark.column, message);
}

ConfigError::ConfigError(SourceMark mark, const std::string& message)
    : InputError(format_diagnostic(mark, message)), mark_(std::move(mark)) {}

}  // namespace rsim
