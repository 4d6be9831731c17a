// SPDX-License-Identifier: MIT
#include "output.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <fstream>

namespace rsim::cli {

void write_file(const std::string& flag, const std::string& path, const std::string& content) {
  std::ofstream file(path);
  file << content;
  if (!file) {
    throw InputError(fmt::format("{} {}: cannot write the file", flag, path));
  }
}

}  // namespace rsim::cli
