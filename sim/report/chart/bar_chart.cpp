// SPDX-License-Identifier: MIT
#include "sim/report/chart/bar_chart.hpp"

#include "sim/report/chart/svg.hpp"
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>

namespace rsim {
namespace {

// Segment colours in order: math (compute), main memory, on-chip tiers, network, as the
// roofline's bound colours (on-chip a lighter memory blue).
constexpr std::array<const char*, 4> kSegmentColours{"#d62728", "#1f77b4", "#9ecae1", "#2ca02c"};
constexpr std::array<char, 4> kSegmentChars{'#', '=', '-', '~'};

double bar_total(const Bar& bar) {
  return std::accumulate(bar.segments_s.begin(), bar.segments_s.end(), 0.0);
}

// Whether any bar has time in `segment`: the key lists only what is drawn.
bool drawn(const StackedBars& bars, std::size_t segment) {
  return std::any_of(bars.bars.begin(), bars.bars.end(), [&](const Bar& bar) {
    return segment < bar.segments_s.size() && bar.segments_s[segment] > 0.0;
  });
}

double bar_extent(const Bar& bar) { return std::max(bar_total(bar), bar.marker_s); }

double longest(const StackedBars& bars) {
  double result = 0.0;
  for (const Bar& bar : bars.bars) {
    result = std::max(result, bar_extent(bar));
  }
  return result;
}

}  // namespace

double axis_extent(const StackedBars& bars) {
  std::vector<double> extents;
  for (const Bar& bar : bars.bars) {
    extents.push_back(bar_extent(bar));
  }
  std::sort(extents.begin(), extents.end(), std::greater<>());
  constexpr double kOutlier = 4.0;  // a bar 4× the next would squeeze the rest to a quarter
  if (extents.size() >= 2 && extents[1] > 0.0 && extents[0] > kOutlier * extents[1]) {
    return 1.25 * extents[1];
  }
  return extents.empty() ? 0.0 : extents[0];
}

StackedBars bars_of_runs(const std::vector<RunResult>& runs, const std::string& title) {
  StackedBars bars;
  bars.title = title;
  const RunResult& baseline = runs.front();
  bars.subtitle = fmt::format(
      "{}, mode {} · per device · bar = ΣT_math + ΣT_mem + ΣT on-chip + ΣT_net = the upper "
      "bound (no overlap), tick = Σ per-op max = the lower bound (full overlap)",
      baseline.roofs.hardware, baseline.roofs.mode);
  bars.segment_names = {"ΣT_math", "ΣT_mem", "ΣT on-chip", "ΣT_net"};
  bars.marker_name = "lower bound";
  for (const RunResult& run : runs) {
    const Totals& totals = run.bounds.total;
    const Plan& plan = run.scenario.plan;
    std::string label = run.scenario.variant.empty() ? "baseline" : run.scenario.variant;
    if (plan.devices() > 1) {
      label += fmt::format(" ({} ×{})", plan.name, plan.devices());
    }
    // The upper bound sums every roof of every op: the on-chip tiers' times too (the table's
    // upper column), so the bar's length is the table's figure.
    double on_chip = 0.0;
    for (std::size_t tier = 1; tier < totals.t_by_tier.size(); ++tier) {
      on_chip += totals.t_by_tier[tier].second.si();
    }
    bars.bars.push_back({label,
                         {totals.t_math.si(), totals.t_mem.si(), on_chip, totals.t_net.si()},
                         totals.t_lower.si(),
                         run.footprint.fits() ? "" : "does not fit in memory"});
  }
  return bars;
}

std::string render_bars_svg(const StackedBars& bars) {
  double label_width = 0.0;
  for (const Bar& bar : bars.bars) {
    label_width = std::max(label_width, text_width(bar.label, 12.0));
  }
  const double left = std::max(120.0, label_width + 24.0);
  const double bar_height = 26.0;
  const double gap = 14.0;
  const double top = 96.0;
  const double plot_width = 620.0;
  const double width = left + plot_width + 150.0;
  const double height = top + static_cast<double>(bars.bars.size()) * (bar_height + gap) + 60.0;
  SvgDocument svg(width, height);
  svg.text(16.0, 28.0, bars.title, R"(font-size="18" font-weight="bold" fill="#111")");
  svg.text(16.0, 48.0, bars.subtitle, R"(font-size="12" fill="#555")");
  // Legend on one line under the subtitle.
  double legend_x = 16.0;
  for (std::size_t segment = 0; segment < bars.segment_names.size(); ++segment) {
    if (!drawn(bars, segment)) {
      continue;
    }
    svg.rect({legend_x, 60.0, 14.0, 12.0},
             fmt::format(R"(fill="{}" fill-opacity="0.8")", kSegmentColours.at(segment)));
    svg.text(legend_x + 19.0, 71.0, bars.segment_names[segment], R"(font-size="12" fill="#333")");
    legend_x += 40.0 + text_width(bars.segment_names[segment], 12.0);
  }
  svg.line(legend_x + 6.0, 58.0, legend_x + 6.0, 74.0, R"(stroke="#111" stroke-width="2.5")");
  svg.text(legend_x + 14.0, 71.0, bars.marker_name, R"(font-size="12" fill="#333")");

  const double plot_bottom = top + static_cast<double>(bars.bars.size()) * (bar_height + gap);
  const double extent = axis_extent(bars);
  const bool broken = extent < longest(bars);
  const LinearAxis axis{0.0, nice_ceiling(extent), left, left + plot_width};
  for (double tick : axis.ticks()) {
    const double x = axis.to_pixel(tick);
    svg.line(x, top - 6.0, x, plot_bottom, R"(stroke="#e3e3e3")");
    svg.text(x, plot_bottom + 18.0, seconds(tick),
             R"(font-size="12" text-anchor="middle" fill="#333")");
  }
  svg.line(left, top - 6.0, left, plot_bottom, R"(stroke="#444")");
  svg.text(left + plot_width / 2.0, plot_bottom + 40.0, "time per device",
           R"(font-size="13" text-anchor="middle" fill="#222")");
  for (std::size_t index = 0; index < bars.bars.size(); ++index) {
    const Bar& bar = bars.bars[index];
    const double y = top + static_cast<double>(index) * (bar_height + gap);
    svg.text(left - 10.0, y + bar_height / 2.0 + 4.0, bar.label,
             R"(font-size="12" text-anchor="end" fill="#222")");
    double start = 0.0;
    for (std::size_t segment = 0; segment < bar.segments_s.size(); ++segment) {
      const double end = start + bar.segments_s[segment];
      const double x0 = axis.to_pixel(std::min(start, axis.high));
      svg.rect({x0, y, axis.to_pixel(std::min(end, axis.high)) - x0, bar_height},
               fmt::format(R"(fill="{}" fill-opacity="{}")", kSegmentColours.at(segment),
                           bar.note.empty() ? "0.8" : "0.3"));
      start = end;
    }
    if (bar.marker_s > 0.0 && bar.marker_s <= axis.high) {
      const double x = axis.to_pixel(bar.marker_s);
      svg.line(x, y - 4.0, x, y + bar_height + 4.0, R"(stroke="#111" stroke-width="2.5")");
    }
    const bool cut = start > axis.high;
    if (cut) {
      // A break across the bar's end: it runs past the axis, its figures say how far.
      const double x = axis.to_pixel(axis.high);
      svg.line(x - 9.0, y + bar_height + 3.0, x - 3.0, y - 3.0,
               R"(stroke="#fff" stroke-width="4")");
      svg.line(x - 9.0, y + bar_height + 3.0, x - 3.0, y - 3.0,
               R"(stroke="#111" stroke-width="1.5")");
    }
    svg.text(axis.to_pixel(std::min(start, axis.high)) + 8.0, y + bar_height / 2.0 + 4.0,
             fmt::format("{} … {}{}{}", seconds(bar.marker_s), seconds(start),
                         cut ? " (axis broken)" : "", bar.note.empty() ? "" : " — " + bar.note),
             R"(font-size="12" fill="#333")");
  }
  if (broken) {
    svg.text(left + plot_width, top - 14.0,
             "one bar runs past the axis: its figures are its length",
             R"(font-size="11" text-anchor="end" fill="#555")");
  }
  return svg.str();
}

std::string render_bars_text(const StackedBars& bars, int width) {
  const double extent = axis_extent(bars);
  const double scale = static_cast<double>(width) / extent;
  std::size_t label_width = 0;
  for (const Bar& bar : bars.bars) {
    label_width = std::max(label_width, display_width(bar.label));
  }
  std::string text = bars.title + "\n";
  for (const Bar& bar : bars.bars) {
    std::string row;
    double start = 0.0;
    for (std::size_t segment = 0; segment < bar.segments_s.size(); ++segment) {
      const double end = start + bar.segments_s[segment];
      // Cells from round(start) to round(end): segments tile the bar without gaps.
      const auto from = static_cast<std::size_t>(std::lround(std::min(start, extent) * scale));
      const auto to = static_cast<std::size_t>(std::lround(std::min(end, extent) * scale));
      row.append(to - std::min(from, to), kSegmentChars.at(segment));
      start = end;
    }
    const auto marker = static_cast<std::size_t>(std::lround(bar.marker_s * scale));
    if (bar.marker_s > 0.0 && marker < row.size()) {
      row[marker] = '|';
    }
    if (start > extent) {
      row += "//";  // broken: the bar runs past the axis; its figures give its length
    }
    text += fmt::format("  {}{} {:<{}} {} … {}{}\n", bar.label,
                        std::string(label_width - display_width(bar.label), ' '), row,
                        static_cast<std::size_t>(width) + 3, seconds(bar.marker_s), seconds(start),
                        bar.note.empty() ? "" : " — " + bar.note);
  }
  std::string key = "  ";
  for (std::size_t segment = 0; segment < bars.segment_names.size(); ++segment) {
    if (!drawn(bars, segment)) {
      continue;
    }
    key += fmt::format("{} {}   ", kSegmentChars.at(segment), bars.segment_names[segment]);
  }
  return text + key + "| " + bars.marker_name + "\n";
}

}  // namespace rsim
