// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace rsim {

/// A text table with a header row, aligned columns (text left, numbers right) and an optional
/// rule before chosen rows. Widths count UTF-8 code points, so "µs" and "Σ" align.
///
/// It fits the stream's TextWidth: columns with a `drop` rank are hidden, the highest rank
/// first, until the table fits, and a line after it names them; if it is still too wide, the
/// widest left-aligned column (names) is cut with "…". Rank 0 is never hidden.
class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align = Align::right;
    int drop = 0;  ///< 0: always shown; higher: hidden sooner when the table must narrow
  };

  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  void add_rule();  ///< a horizontal rule before the next row
  /// Prints the table fitted to the stream's width, or hands it to the stream's TextSink.
  void print(std::ostream& out, const std::string& indent = "") const;
  [[nodiscard]] const std::vector<Column>& columns() const { return columns_; }
  /// The rows in order; an empty one is a rule.
  [[nodiscard]] const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

/// Display width of UTF-8 text in code points.
std::size_t display_width(const std::string& text);

}  // namespace rsim
