// SPDX-License-Identifier: MIT
#include "sim/report/chart/text_chart.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rsim {
namespace {

// A character grid; row 0 is the top.
class Grid {
 public:
  // columns and rows are positive (render_roofline_text checks), so the casts keep their values.
  Grid(int columns, int rows)
      : columns_(columns),
        cells_(static_cast<std::size_t>(rows),
               std::string(static_cast<std::size_t>(columns), ' ')) {}
  void set(int column, int row, char value) {
    if (column >= 0 && column < columns_ && row >= 0 && row < static_cast<int>(cells_.size())) {
      cells_[static_cast<std::size_t>(row)][static_cast<std::size_t>(column)] = value;
    }
  }
  [[nodiscard]] const std::string& row(int index) const {
    return cells_[static_cast<std::size_t>(index)];
  }

 private:
  int columns_;
  std::vector<std::string> cells_;
};

int cell(const LogAxis& axis, double value) {
  return static_cast<int>(std::lround(axis.to_pixel(value)));
}

}  // namespace

std::string render_roofline_text(const RooflineChart& chart, int columns, int rows) {
  RSIM_CHECK(columns > 1 && rows > 1, "a text chart needs at least 2 columns and 2 rows");
  // The SVG layout's ranges, mapped onto cells: column 0 … columns−1, row rows−1 (bottom) … 0.
  const RooflineLayout layout = layout_roofline(chart, 0);
  const LogAxis x{layout.x.low, layout.x.high, 0.0, static_cast<double>(columns - 1)};
  const LogAxis y{layout.y.low, layout.y.high, static_cast<double>(rows - 1), 0.0};
  Grid grid(columns, rows);
  const double top_peak = chart.roofs.back().peak.si();
  for (const RoofSlope& slope : chart.slopes) {
    for (int column = 0; column < columns; ++column) {
      // The intensity at the cell's centre: invert column = (log I − log low) · scale.
      const double intensity =
          layout.x.low * std::pow(layout.x.high / layout.x.low,
                                  static_cast<double>(column) / static_cast<double>(columns - 1));
      const double attainable = slope.bandwidth.si() * intensity;
      if (attainable <= top_peak && attainable >= y.low) {
        grid.set(column, cell(y, attainable), slope.network ? ':' : '/');
      }
    }
  }
  const double main_bandwidth = chart.slopes.front().bandwidth.si();
  for (const RoofLine& roof : chart.roofs) {
    const int row = cell(y, roof.peak.si());
    for (int column = std::max(0, cell(x, roof.peak.si() / main_bandwidth)); column < columns;
         ++column) {
      grid.set(column, row, roof.in_play ? '=' : '-');
    }
    grid.set(cell(x, roof.peak.si() / main_bandwidth), row, 'o');
  }
  // Points: unlabelled first, then labelled ones on top.
  const RooflineLayout labelled = layout_roofline(chart, 9);
  for (const ChartPoint& point : chart.points) {
    grid.set(cell(x, point.intensity), cell(y, point.attainable), '*');
  }
  std::vector<std::string> key;
  int letter = 0;
  int digit = 0;
  // A cell holds one mark: a labelled point whose cell an earlier one took says so in the key.
  std::vector<std::pair<std::pair<int, int>, char>> taken;
  for (std::size_t index : labelled.labelled) {
    const ChartPoint& point = chart.points[index];
    const char mark =
        point.measured ? static_cast<char>('1' + digit++) : static_cast<char>('A' + letter++);
    const std::pair at{cell(x, point.intensity), cell(y, point.attainable)};
    const auto owner = std::find_if(taken.begin(), taken.end(),
                                    [&](const auto& entry) { return entry.first == at; });
    std::string hidden;
    if (owner == taken.end()) {
      grid.set(at.first, at.second, mark);
      taken.emplace_back(at, mark);
    } else {
      hidden = fmt::format(" (in {}'s cell: drawn as {})", owner->second, owner->second);
    }
    key.push_back(fmt::format("  {} {} — {} FLOP/B, {}{}", mark, point.label,
                              format_plain(point.intensity),
                              format_quantity(point.attainable, Dimension::flop_rate), hidden));
  }
  std::string text = fmt::format("{}\n{}\n\n", chart.title, chart.subtitle);
  const std::string unit = "FLOP/s";
  for (int row = 0; row < rows; ++row) {
    std::string axis_label;
    for (double decade : layout.y.decades()) {
      if (cell(y, decade) == row) {
        axis_label = decade_label(decade);
      }
    }
    std::string roof_label;
    for (const RoofLine& roof : chart.roofs) {
      if (cell(y, roof.peak.si()) == row) {
        roof_label += (roof_label.empty() ? " " : " / ") + roof.label;
      }
    }
    text += fmt::format("{:>7} |{}{}\n", axis_label, grid.row(row), roof_label);
  }
  text += fmt::format("{:>7} +{}\n", unit, std::string(static_cast<std::size_t>(columns), '-'));
  std::string ticks(static_cast<std::size_t>(columns) + 10, ' ');
  for (double decade : layout.x.decades()) {
    const std::string label = decade_label(decade);
    const auto at = static_cast<std::size_t>(
        std::max(0, cell(x, decade) + 9 - static_cast<int>(label.size()) / 2));
    ticks.replace(at, std::min(label.size(), ticks.size() - at), label);
  }
  text += ticks + "\n";
  text += fmt::format("{:>9}{}\n", "",
                      "intensity (FLOP/byte)   / memory slope  : network slope  o ridge  "
                      "= roof in play");
  for (const std::string& line : key) {
    text += line + "\n";
  }
  for (const std::string& note : chart.notes) {
    text += "  " + note + "\n";
  }
  return text;
}

}  // namespace rsim
