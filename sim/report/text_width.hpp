// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace rsim {

/// The width, in terminal columns, that text reports written to a stream must fit; 0 = no limit.
/// It travels with the stream as formatting state (std::ios_base::iword), the way std::setw
/// does, so every writer and table on the stream fits it without a parameter of its own:
/// `out << TextWidth{120};`.
struct TextWidth {
  std::size_t columns = 0;
};

std::ostream& operator<<(std::ostream& out, TextWidth width);

/// The stream's width (0 when none was set: no limit).
std::size_t text_width(std::ostream& out);

/// `text` broken at spaces into lines of at most `width` columns (0 = one line): the first line
/// starts with `first`, the rest with `rest` (a hanging indent). A word longer than a line stays
/// whole. Each line ends with '\n'.
std::string wrap_text(const std::string& text, std::size_t width, const std::string& first,
                      const std::string& rest);

/// Writes `text` wrapped to the stream's width, the continuation lines indented by `rest`.
void write_wrapped(std::ostream& out, const std::string& text, const std::string& first = "",
                   const std::string& rest = "");

}  // namespace rsim
