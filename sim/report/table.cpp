// SPDX-License-Identifier: MIT
#include "sim/report/table.hpp"

#include "sim/base/error.hpp"
#include "sim/report/text_sink.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

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

namespace {

// The first `width` code points of UTF-8 `text`, the last replaced by "…" when it was cut.
std::string cut_to_width(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) {
    return text;
  }
  std::string result;
  std::size_t points = 0;
  for (const char byte : text) {
    const bool starts_point = (static_cast<unsigned char>(byte) & 0xC0U) != 0x80U;
    if (starts_point && ++points > width - 1) {
      break;
    }
    result += byte;
  }
  return result + "…";
}

}  // namespace

void TextTable::print(std::ostream& out, const std::string& indent) const {
  if (TextSink* sink = text_sink(out)) {
    sink->table(*this);
    return;
  }
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) {
    widths.push_back(display_width(column.header));
  }
  for (const auto& row : rows_) {
    for (std::size_t index = 0; index < row.size(); ++index) {
      widths[index] = std::max(widths[index], display_width(row[index]));
    }
  }
  std::vector<bool> shown(columns_.size(), true);
  const auto total_width = [&] {
    std::size_t total = 0;
    std::size_t count = 0;
    for (std::size_t index = 0; index < columns_.size(); ++index) {
      if (shown[index]) {
        total += widths[index];
        ++count;
      }
    }
    return total + (count > 0 ? 2 * (count - 1) : 0);
  };
  const std::size_t limit = text_width(out);
  const std::size_t indent_width = display_width(indent);
  // Per column, the value every row has (two rows or more), if they all agree.
  std::vector<std::optional<std::string>> common(columns_.size());
  const auto filled =
      std::count_if(rows_.begin(), rows_.end(), [](const auto& cells) { return !cells.empty(); });
  for (std::size_t index = 0; index < columns_.size() && filled > 1; ++index) {
    for (const auto& row : rows_) {
      if (row.empty()) {
        continue;
      }
      if (!common[index]) {
        common[index] = row[index];
      } else if (*common[index] != row[index]) {
        common[index].reset();
        break;
      }
    }
  }
  if (limit > 0) {
    // A droppable column whose rows all say the same goes first: the note below keeps its value.
    const auto rank = [&](std::size_t index) {
      constexpr int kUniform = 1000;
      return columns_[index].drop > 0 && common[index] ? kUniform : columns_[index].drop;
    };
    while (indent_width + total_width() > limit) {
      std::optional<std::size_t> victim;  // the highest rank, the rightmost of equal ranks
      for (std::size_t index = 0; index < columns_.size(); ++index) {
        if (shown[index] && rank(index) > 0 && (!victim || rank(index) >= rank(*victim))) {
          victim = index;
        }
      }
      if (!victim) {
        break;
      }
      shown[*victim] = false;
    }
    std::optional<std::size_t> widest;
    for (std::size_t index = 0; index < columns_.size(); ++index) {
      if (shown[index] && columns_[index].align == Align::left &&
          (!widest || widths[index] > widths[*widest])) {
        widest = index;
      }
    }
    constexpr std::size_t kNarrowest = 8;  // "prefix/…" still says where an op lives
    const std::size_t over = indent_width + total_width();
    if (widest && over > limit && widths[*widest] > kNarrowest) {
      const std::size_t excess = over - limit;
      widths[*widest] =
          widths[*widest] > kNarrowest + excess ? widths[*widest] - excess : kNarrowest;
    }
  }
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    bool first = true;
    for (std::size_t index = 0; index < cells.size(); ++index) {
      if (!shown[index]) {
        continue;
      }
      if (!first) {
        line += "  ";
      }
      first = false;
      const std::string cell = cut_to_width(cells[index], widths[index]);
      const std::string padding(widths[index] - display_width(cell), ' ');
      const bool left = columns_[index].align == Align::left;
      line += left ? cell + padding : padding + cell;
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out << line << '\n';
  };
  std::vector<std::string> header;
  for (const Column& column : columns_) {
    header.push_back(column.header);
  }
  std::string rule;
  for (std::size_t index = 0, total = total_width(); index < total; ++index) {
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
  std::vector<std::string> hidden;  // in the table's order
  std::vector<std::string> same;    // hidden, with the value every row has
  for (std::size_t index = 0; index < columns_.size(); ++index) {
    if (shown[index]) {
      continue;
    }
    if (common[index]) {
      same.push_back(fmt::format("{} {}", columns_[index].header, *common[index]));
    } else {
      hidden.push_back(columns_[index].header);
    }
  }
  if (!same.empty()) {
    write_wrapped(out, fmt::format("(every row: {})", fmt::join(same, "; ")), indent, indent);
  }
  if (!hidden.empty()) {
    write_wrapped(out,
                  fmt::format("({} hidden to fit {} columns; --wide shows every column)",
                              fmt::join(hidden, ", "), limit),
                  indent, indent);
  }
}

}  // namespace rsim
