// SPDX-License-Identifier: MIT
#pragma once
// The pieces every HTML report is made of: one self-contained document (inline style and a
// table-sorting script; no network fetches), tables sortable by any column, their cells.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::html {

std::string esc(std::string_view text);

/// A table cell: text, and for numbers the SI value it sorts by.
struct Cell {
  // Implicit from text: most cells of a row are plain text, written {name}.
  Cell(std::string content) : text(std::move(content)) {}  // NOLINT(google-explicit-constructor)
  Cell(std::string content, std::optional<double> sort_value, std::string css)
      : text(std::move(content)), value(sort_value), css_class(std::move(css)) {}
  std::string text;
  std::optional<double> value;  ///< numeric cells: sorted by this SI value
  std::string css_class;
};

/// A number cell showing `text`, sorted by `value`.
Cell num(double value, std::string text);
Cell time_cell(double time_s);                          ///< in human units ("1.23 ms")
Cell rate_cell(double per_s, const std::string& unit);  ///< "12.5 requests/s"

/// A table.sortable with `id`: headers (a trailing '#' marks a numeric column), then rows.
void write_table(std::ostream& out, const std::string& id, const std::vector<std::string>& headers,
                 const std::vector<std::vector<Cell>>& rows);

/// <!DOCTYPE html> … the style, the title as <h1> and the subtitle; close_document adds the
/// sorting script (which also applies "#sort=TABLE:N[:asc]" on load) and closes the body.
void open_document(std::ostream& out, const std::string& title, const std::string& subtitle);
void close_document(std::ostream& out);

/// A <section id="ID"> headed `heading` holding an inline SVG figure.
void write_figure(std::ostream& out, const std::string& id, const std::string& heading,
                  const std::string& svg);

}  // namespace rsim::html
