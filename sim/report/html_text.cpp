// SPDX-License-Identifier: MIT
#include "sim/report/html_text.hpp"

#include "sim/report/chart/svg.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text_sink.hpp"

#include <fmt/format.h>

#include <sstream>

namespace rsim {
namespace {

class HtmlSink final : public TextSink {
 public:
  explicit HtmlSink(std::ostream& out) : out_(out) {}

  void paragraph(const std::string& lead, const std::string& text) override {
    out_ << "<p>";
    if (!lead.empty()) {
      out_ << "<b>" << escape_xml(lead) << "</b> ";
    }
    out_ << escape_xml(text) << "</p>\n";
  }

  void table(const TextTable& table) override {
    const auto& columns = table.columns();
    out_ << "<table class=\"text-table\"><thead><tr>";
    for (const TextTable::Column& column : columns) {
      out_ << "<th>" << escape_xml(column.header) << "</th>";
    }
    out_ << "</tr></thead><tbody>\n";
    bool rule = false;
    for (const auto& row : table.rows()) {
      if (row.empty()) {
        rule = true;  // the text's horizontal rule: a line above the next row
        continue;
      }
      out_ << (rule ? "<tr class=\"rule\">" : "<tr>");
      rule = false;
      for (std::size_t index = 0; index < row.size(); ++index) {
        out_ << (columns[index].align == TextTable::Align::right ? "<td class=\"num\">" : "<td>")
             << escape_xml(row[index]) << "</td>";
      }
      out_ << "</tr>\n";
    }
    out_ << "</tbody></table>\n";
  }

 private:
  std::ostream& out_;
};

}  // namespace

void write_text_section(std::ostream& out, const std::string& summary,
                        const std::function<void(std::ostream&)>& writer) {
  out << "<section id=\"text\"><h2>Report</h2>\n";
  std::ostringstream html;
  HtmlSink sink(html);
  std::ostringstream discarded;  // what the writers put between paragraphs: blank lines
  discarded << SinkTo{&sink};
  writer(discarded);
  out << html.str();
  std::ostringstream text;
  writer(text);
  out << fmt::format("<details><summary>{} as text</summary><pre>{}</pre></details></section>\n",
                     escape_xml(summary), escape_xml(text.str()));
}

}  // namespace rsim
