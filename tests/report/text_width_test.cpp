// SPDX-License-Identifier: MIT
#include "sim/report/text_width.hpp"

#include "sim/report/table.hpp"

#include <catch2/catch.hpp>

#include <sstream>

namespace {

using Align = rsim::TextTable::Align;

// name(4..9) time(5) flops(5) count(5): widths 9 + 5 + 5 + 5 + 3 gaps of 2 = 30 columns.
rsim::TextTable four_columns() {
  rsim::TextTable table(
      {{"name", Align::left}, {"time"}, {"FLOPs", Align::right, 1}, {"count", Align::right, 2}});
  table.add_row({"long name", "63 ms", "1.2M", "18"});
  return table;
}

std::string fitted(const rsim::TextTable& table, std::size_t columns) {
  std::ostringstream out;
  out << rsim::TextWidth{columns};
  table.print(out);
  return out.str();
}

}  // namespace

TEST_CASE("a table wider than the stream hides its highest-ranked columns first", "[report]") {
  const auto table = four_columns();
  // 30 columns fit in 30: nothing hidden, no note.
  CHECK(fitted(table, 30) ==
        "name        time  FLOPs  count\n"
        "──────────────────────────────\n"
        "long name  63 ms   1.2M     18\n");
  // In 29 the rank-2 column (count, 5 + 2) goes first: 23 columns remain.
  CHECK(fitted(table, 29) ==
        "name        time  FLOPs\n"
        "───────────────────────\n"
        "long name  63 ms   1.2M\n"
        // The note wraps to the width too, "29 columns;" kept whole.
        "(count hidden to fit\n"
        "29 columns; --wide shows\n"
        "every column)\n");
  // In 20 both ranked columns go (16 columns), listed in the table's order.
  CHECK(fitted(table, 20) ==
        "name        time\n"
        "────────────────\n"
        "long name  63 ms\n"
        "(FLOPs, count hidden\n"
        "to fit 20 columns;\n"
        "--wide shows every\n"
        "column)\n");
  // No width on the stream: every column.
  std::ostringstream wide;
  table.print(wide);
  CHECK(wide.str() == fitted(table, 30));
}

TEST_CASE("a table that still does not fit cuts its widest left column with an ellipsis",
          "[report]") {
  rsim::TextTable table({{"op", Align::left}, {"time"}});
  table.add_row({"prefix/layer/gate_up_proj", "63 ms"});
  std::ostringstream out;
  out << rsim::TextWidth{20};
  table.print(out);
  // 25 + 2 + 5 = 32 columns into 20: the op column loses 12 and keeps 13 = 12 code points + "…".
  CHECK(out.str() ==
        "op              time\n"
        "────────────────────\n"
        "prefix/layer…  63 ms\n");
}

TEST_CASE("wrapped text breaks at spaces, keeps figures with their units", "[report]") {
  // "bound by memory" is 15 columns; "(dram)" would make 22 > 16.
  CHECK(rsim::wrap_text("bound by memory (dram)", 16, "", "  ") ==
        "bound by memory\n"
        "  (dram)\n");
  // "takes 33.53" fits in 12 but "33.53 ms" moves whole to the next line.
  CHECK(rsim::wrap_text("takes 33.53 ms", 12, "", "") == "takes\n33.53 ms\n");
  CHECK(rsim::wrap_text("at 76.2 % of peak", 9, "", "") == "at 76.2 %\nof peak\n");
  // Width 0: one line.
  CHECK(rsim::wrap_text("a b c", 0, "> ", "") == "> a b c\n");
  // A word longer than the width (a path) is cut after a '/' that falls within the 10 columns
  // ("prefix/" 7, "layer/" 6), else at the width ("gate_up_pr" 10), and the next word follows.
  CHECK(rsim::wrap_text("prefix/layer/gate_up_proj x", 10, "", "") ==
        "prefix/\nlayer/\ngate_up_pr\noj x\n");
  // The continuation lines keep their indent: 8 columns of room after "  ".
  CHECK(rsim::wrap_text("see /a/b/c/d/e/f", 10, "", "  ") == "see\n  /a/b/c/\n  d/e/f\n");
}
