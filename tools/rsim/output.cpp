// SPDX-License-Identifier: MIT
#include "output.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rsim::cli {

std::size_t report_width(bool wide) {
  if (wide) {
    return 0;
  }
  constexpr std::size_t kDefault = 120;  // a report piped to a file or a pager
  constexpr std::size_t kNarrowest = 60;
  std::size_t columns = 0;
  if (const char* variable = std::getenv("COLUMNS"); variable != nullptr) {
    const char* end = variable + std::strlen(variable);
    std::size_t parsed = 0;
    const auto [stop, error] = std::from_chars(variable, end, parsed);
    if (error == std::errc() && stop == end) {
      columns = parsed;
    }
  }
  if (columns == 0 && isatty(STDOUT_FILENO) != 0) {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) {
      columns = size.ws_col;
    }
  }
  return columns == 0 ? kDefault : std::max(columns, kNarrowest);
}

void write_file(const std::string& flag, const std::string& path, const std::string& content) {
  std::ofstream file(path);
  file << content;
  if (!file) {
    throw InputError(fmt::format("{} {}: cannot write the file", flag, path));
  }
}

}  // namespace rsim::cli
