// SPDX-License-Identifier: MIT
#include "sim/report/html_document.hpp"

#include "sim/report/chart/svg.hpp"
#include "sim/report/format.hpp"

#include <fmt/format.h>

namespace rsim::html {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px 32px; color: #222; }
h1 { font-size: 22px; margin-bottom: 2px; } h2 { font-size: 17px; margin-top: 28px; }
.sub { color: #666; margin-top: 0; }
dl { display: grid; grid-template-columns: max-content auto; gap: 3px 16px; }
dt { font-weight: bold; } dd { margin: 0; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e4e4e4; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
.bound-compute { color: #d62728; } .bound-memory { color: #1f77b4; }
.bound-network { color: #2ca02c; } .bound-fused { color: #7f7f7f; }
figure { margin: 8px 0; } figure svg { width: 100%; max-width: 1800px; height: auto; }
table.text-table tr.rule td { border-top: 2px solid #999; }
pre { font-size: 12px; background: #f8f8f8; padding: 10px; overflow-x: auto; }
)css";

// Sorts a table.sortable by the clicked column (data-v holds the SI value of number cells).
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  function key(cell, numeric) {
    var value = cell.getAttribute('data-v');
    if (value === null) { value = cell.textContent; }
    return numeric ? parseFloat(value) : value.toLowerCase();
  }
  function sortTable(table, column, descending) {
    var header = table.tHead.rows[0].cells[column];
    if (!header) { return; }
    var numeric = header.getAttribute('data-type') === 'num';
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[column], numeric);
      var y = key(b.cells[column], numeric);
      if (x === y) { return 0; }
      return (x < y) === descending ? 1 : -1;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute('aria-sort');
    });
    header.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.addEventListener('click', function () {
        sortTable(table, column, th.getAttribute('aria-sort') !== 'descending');
      });
    });
    table.setAttribute('data-sortable', 'ready');
  });
  var match = /^#sort=([\w-]+):(\d+)(:asc)?$/.exec(window.location.hash);
  if (match) {
    var table = document.getElementById(match[1]);
    if (table) { sortTable(table, parseInt(match[2], 10), !match[3]); }
  }
})();
)js";

}  // namespace

std::string esc(std::string_view text) { return escape_xml(text); }

Cell num(double value, std::string text) { return {std::move(text), value, "num"}; }

Cell time_cell(double time_s) { return num(time_s, format_quantity(time_s, Dimension::seconds)); }

Cell rate_cell(double per_s, const std::string& unit) {
  return num(per_s, fmt::format("{} {}", format_plain(per_s), unit));
}

void write_table(std::ostream& out, const std::string& id, const std::vector<std::string>& headers,
                 const std::vector<std::vector<Cell>>& rows) {
  out << fmt::format("<table id=\"{}\" class=\"sortable\"><thead><tr>", id);
  for (const std::string& header : headers) {
    const bool numeric = header.ends_with('#');
    out << fmt::format("<th{}>{}</th>", numeric ? " data-type=\"num\"" : "",
                       esc(numeric ? header.substr(0, header.size() - 1) : header));
  }
  out << "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (const Cell& cell : row) {
      out << "<td";
      if (!cell.css_class.empty()) {
        out << fmt::format(" class=\"{}\"", cell.css_class);
      }
      if (cell.value) {
        out << fmt::format(" data-v=\"{:.17g}\"", *cell.value);
      }
      out << '>' << esc(cell.text) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void open_document(std::ostream& out, const std::string& title, const std::string& subtitle) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(title), kStyle)
      << fmt::format("<h1>{}</h1>\n<p class=\"sub\">{}</p>\n", esc(title), esc(subtitle));
}

void close_document(std::ostream& out) {
  out << "<script>" << kScript << "</script>\n</body>\n</html>\n";
}

void write_figure(std::ostream& out, const std::string& id, const std::string& heading,
                  const std::string& svg) {
  out << fmt::format("<section id=\"{}\"><h2>{}</h2><figure>\n", id, esc(heading)) << svg
      << "</figure></section>\n";
}

}  // namespace rsim::html
