// SPDX-License-Identifier: MIT
#include "sim/report/table.hpp"

#include "sim/base/error.hpp"

#include <algorithm>

namespace rsim {

std::size_t display_width(const std::string& text) {
  // Count bytes that do not continue a multi-byte sequence (10xxxxxx).
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char byte) {
    return (static_cast<unsigned char>(byte) & 0xC0U) != 0x80U;
  }));
}

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  RSIM_CHECK(cells.size() == columns_.size(), "row width differs from the header");
  rows_.push_back(std::move(cells));
}

void TextTable::add_rule() { rows_.emplace_back(); }

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) {
    widths.push_back(display_width(column.header));
  }
  for (const auto& row : rows_) {
    for (std::size_t index = 0; index < row.size(); ++index) {
      widths[index] = std::max(widths[index], display_width(row[index]));
    }
  }
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (std::size_t index = 0; index < cells.size(); ++index) {
      const std::string padding(widths[index] - display_width(cells[index]), ' ');
      const bool left = columns_[index].align == Align::left;
      line += left ? cells[index] + padding : padding + cells[index];
      if (index + 1 < cells.size()) {
        line += "  ";
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out << line << '\n';
  };
  std::vector<std::string> header;
  std::size_t total_width = 0;
  for (std::size_t index = 0; index < columns_.size(); ++index) {
    header.push_back(columns_[index].header);
    total_width += widths[index] + (index + 1 < columns_.size() ? 2 : 0);
  }
  std::string rule;
  for (std::size_t index = 0; index < total_width; ++index) {
    rule += "─";
  }
  print_row(header);
  out << indent << rule << '\n';
  for (const auto& row : rows_) {
    if (row.empty()) {
      out << indent << rule << '\n';
    } else {
      print_row(row);
    }
  }
}

}  // namespace rsim
