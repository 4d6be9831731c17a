// SPDX-License-Identifier: MIT
#include "sim/base/csv.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

namespace rsim {

std::vector<std::string> split_csv(const std::string& line, const std::string& file,
                                   int line_number) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t index = 0; index < line.size(); ++index) {
    const char character = line[index];
    if (quoted) {
      if (character == '"' && index + 1 < line.size() && line[index + 1] == '"') {
        fields.back() += '"';
        ++index;
      } else if (character == '"') {
        quoted = false;
      } else {
        fields.back() += character;
      }
    } else if (character == '"') {
      quoted = true;
    } else if (character == ',') {
      fields.emplace_back();
    } else if (character != '\r') {
      fields.back() += character;
    }
  }
  if (quoted) {
    throw InputError(fmt::format("{}:{}: error: a quoted field is not closed", file, line_number));
  }
  return fields;
}

}  // namespace rsim
