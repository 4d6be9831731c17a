// SPDX-License-Identifier: MIT
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/roofline_parts.hpp"
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace rsim {
namespace {

using roofline_parts::DrawnRidge;
using roofline_parts::in_play_peak;
using roofline_parts::kLabelHeight;
using roofline_parts::roof_label_lines;
using roofline_parts::slope_segment;

// Colour of a point by the roof that holds it: one entry per Bound value, in enum order.
constexpr std::array<const char*, 3> kBoundColours{"#d62728", "#1f77b4", "#2ca02c"};
constexpr const char* kMeasuredColour = "#7b3294";
// A white outline under the glyphs keeps labels readable over lines and circles.
constexpr const char* kHalo =
    R"(stroke="#ffffff" stroke-width="3.5" stroke-linejoin="round" paint-order="stroke")";
const char* bound_colour(Bound bound) { return kBoundColours.at(static_cast<std::size_t>(bound)); }

void draw_axes(SvgDocument& svg, const RooflineLayout& layout) {
  const Box& plot = layout.plot;
  svg.rect(plot, R"(fill="#fcfcfc" stroke="#444" stroke-width="1")");
  for (double decade : layout.x.decades()) {
    const double x = layout.x.to_pixel(decade);
    svg.line(x, plot.y, x, plot.bottom(), R"(stroke="#e3e3e3" stroke-width="1")");
    svg.text(x, plot.bottom() + 18.0, decade_label(decade),
             R"(font-size="12" text-anchor="middle" fill="#333")");
    for (int step = 2; step <= 9 && decade * step <= layout.x.high; ++step) {
      const double minor = layout.x.to_pixel(decade * step);
      svg.line(minor, plot.bottom(), minor, plot.bottom() - 4.0, R"(stroke="#888")");
    }
  }
  for (double decade : layout.y.decades()) {
    const double y = layout.y.to_pixel(decade);
    svg.line(plot.x, y, plot.right(), y, R"(stroke="#e3e3e3" stroke-width="1")");
    svg.text(plot.x - 8.0, y + 4.0, decade_label(decade),
             R"(font-size="12" text-anchor="end" fill="#333")");
    for (int step = 2; step <= 9 && decade * step <= layout.y.high; ++step) {
      const double minor = layout.y.to_pixel(decade * step);
      svg.line(plot.x, minor, plot.x + 4.0, minor, R"(stroke="#888")");
    }
  }
  svg.text(plot.x + plot.width / 2.0, plot.bottom() + 44.0,
           "arithmetic intensity (FLOP per DRAM byte; network slopes: FLOP per network byte)",
           R"(font-size="13" text-anchor="middle" fill="#222")");
  const double middle = plot.y + plot.height / 2.0;
  svg.text(26.0, middle, "attainable performance (FLOP/s)",
           fmt::format(R"svg(font-size="13" text-anchor="middle" fill="#222" )svg"
                       R"svg(transform="rotate(-90 {:.2f} {:.2f})")svg",
                       26.0, middle));
}

void draw_slopes(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  const double top_peak = chart.roofs.back().peak.si();
  for (std::size_t index = 0; index < chart.slopes.size(); ++index) {
    const RoofSlope& slope = chart.slopes[index];
    const double bandwidth = slope.bandwidth.si();
    const std::string colour = slope.network       ? "#2ca02c"
                               : slope.main_memory ? "#1f77b4"
                                                   : "#6baed6";
    const std::string dash = slope.network ? R"( stroke-dasharray="7 4")" : "";
    const auto [start, end] = slope_segment(layout, bandwidth, in_play_peak(chart));
    svg.line(start.first, start.second, end.first, end.second,
             fmt::format(R"(stroke="{}" stroke-width="2.4"{})", colour, dash));
    const auto [upper_start, upper_end] = slope_segment(layout, bandwidth, top_peak);
    svg.line(end.first, end.second, upper_end.first, upper_end.second,
             fmt::format(R"(stroke="{}" stroke-width="1.2" opacity="0.45"{})", colour, dash));
    const SlopeLabel& label = layout.slope_labels[index];
    svg.text(
        label.x, label.y, slope.label,
        fmt::format(R"svg(font-size="12" fill="{}" transform="rotate({:.2f} {:.2f} {:.2f})" {})svg",
                    colour, label.angle_deg, label.x, label.y, kHalo));
  }
}

void draw_roofs(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  double fastest_memory = 0.0;
  for (const RoofSlope& slope : chart.slopes) {
    if (!slope.network) {
      fastest_memory = std::max(fastest_memory, slope.bandwidth.si());
    }
  }
  for (auto it = chart.roofs.rbegin(); it != chart.roofs.rend(); ++it) {
    const double y = layout.y.to_pixel(it->peak.si());
    // A roof starts where the fastest memory slope meets it (the leftmost ridge).
    const double x_start =
        layout.x.to_pixel(std::max(layout.x.low, it->peak.si() / fastest_memory));
    svg.line(x_start, y, layout.plot.right(), y,
             it->in_play ? R"(stroke="#111" stroke-width="3")"
                         : R"(stroke="#9a9a9a" stroke-width="1.3")");
  }
}

// Outside the plot's clip: the right margin.
void draw_roof_labels(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  std::size_t label = 0;
  for (auto it = chart.roofs.rbegin(); it != chart.roofs.rend(); ++it, ++label) {
    const double y = layout.y.to_pixel(it->peak.si());
    const Box& box = layout.fixed_labels[label];
    const double middle = box.y + box.height / 2.0;
    svg.line(layout.plot.right(), y, box.x - 3.0, middle,
             it->in_play ? R"(stroke="#111" stroke-width="1.5")"
                         : R"(stroke="#bbb" stroke-width="0.8")");
    const char* style = it->in_play ? R"(font-size="12" font-weight="bold" fill="#111")"
                                    : R"(font-size="12" fill="#777")";
    double baseline = box.y + kLabelHeight - 3.5;
    for (const std::string& line : roof_label_lines(it->label)) {
      svg.text(box.x, baseline, line, style);
      baseline += kLabelHeight;
    }
  }
}

void draw_ridges(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  const std::vector<DrawnRidge> ridges = roofline_parts::drawn_ridges(chart);
  for (std::size_t index = 0; index < ridges.size(); ++index) {
    const DrawnRidge& ridge = ridges[index];
    if (ridge.intensity < layout.x.low || ridge.intensity > layout.x.high) {
      continue;
    }
    const double x = layout.x.to_pixel(ridge.intensity);
    const double y = layout.y.to_pixel(ridge.peak);
    svg.circle(x, y, 4.0,
               ridge.in_play ? R"(fill="#fff" stroke="#111" stroke-width="2")"
                             : R"(fill="#fff" stroke="#999" stroke-width="1.2")");
    const Box& box = layout.fixed_labels[chart.roofs.size() + index];
    if (box.width > 0.0) {
      svg.text(box.x, box.bottom() - 3.0, format_count(ridge.intensity),
               fmt::format(R"svg(font-size="10.5" {} {})svg",
                           ridge.in_play ? R"(font-weight="bold" fill="#111")" : R"(fill="#888")",
                           kHalo));
    }
  }
}

void draw_marker(SvgDocument& svg, double x, double y, double radius, const ChartPoint& point) {
  if (point.measured) {
    svg.polygon({{x, y - radius * 1.3},
                 {x + radius * 1.3, y},
                 {x, y + radius * 1.3},
                 {x - radius * 1.3, y}},
                fmt::format(R"(fill="{}" fill-opacity="0.85" stroke="#fff" stroke-width="1")",
                            kMeasuredColour));
    return;
  }
  svg.circle(x, y, radius,
             fmt::format(R"(fill="{0}" fill-opacity="0.5" stroke="{0}" stroke-width="1.2")",
                         bound_colour(point.bound)));
}

void draw_points(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  std::vector<std::size_t> order(chart.points.size());
  for (std::size_t index = 0; index < order.size(); ++index) {
    order[index] = index;
  }
  // Large circles first, so small ones stay visible on top.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return layout.radius[a] > layout.radius[b];
  });
  for (std::size_t index : order) {
    const ChartPoint& point = chart.points[index];
    draw_marker(svg, layout.x.to_pixel(point.intensity), layout.y.to_pixel(point.attainable),
                layout.radius[index], point);
  }
  for (std::size_t label = 0; label < layout.labelled.size(); ++label) {
    const LabelPlacement& placement = layout.labels[label];
    if (!placement.placed) {
      continue;
    }
    const ChartPoint& point = chart.points[layout.labelled[label]];
    const Box& box = placement.box;
    if (placement.leader) {
      const double x = std::clamp(placement.anchor_x, box.x, box.right());
      const double y = std::clamp(placement.anchor_y, box.y, box.bottom());
      svg.line(placement.anchor_x, placement.anchor_y, x, y, R"(stroke="#555" stroke-width="1")");
    }
    svg.text(box.x + 3.0, box.bottom() - 5.0, point.label,
             fmt::format(R"svg(font-size="12" fill="{}" {})svg",
                         point.measured ? kMeasuredColour : "#222", kHalo));
  }
}

void draw_legend(SvgDocument& svg, const RooflineChart& chart, const RooflineLayout& layout) {
  double x = layout.plot.right() + 178.0;
  double y = layout.plot.y + 6.0;
  const auto heading = [&](const std::string& text) {
    svg.text(x, y, text, R"(font-size="12.5" font-weight="bold" fill="#222")");
    y += 20.0;
  };
  const auto entry = [&](const std::string& text) {
    svg.text(x + 26.0, y + 4.0, text, R"(font-size="12" fill="#333")");
    y += 20.0;
  };
  const bool any_measured = std::any_of(chart.points.begin(), chart.points.end(),
                                        [](const ChartPoint& point) { return point.measured; });
  const bool any_ops = std::any_of(chart.points.begin(), chart.points.end(),
                                   [](const ChartPoint& point) { return !point.measured; });
  const bool any_sized = std::any_of(
      chart.points.begin(), chart.points.end(),
      [](const ChartPoint& point) { return !point.measured && point.radius_px == 0.0; });
  if (any_ops) {
    heading("ops: colour = bound");
    constexpr std::array<const char*, 3> kBoundNames{"compute-bound", "memory-bound",
                                                     "network-bound"};
    for (std::size_t bound = 0; bound < kBoundNames.size(); ++bound) {
      // The legend lists only the colours some op is drawn in.
      if (std::none_of(chart.points.begin(), chart.points.end(), [&](const ChartPoint& point) {
            return !point.measured && static_cast<std::size_t>(point.bound) == bound;
          })) {
        continue;
      }
      svg.circle(
          x + 9.0, y, 6.0,
          fmt::format(R"(fill="{0}" fill-opacity="0.5" stroke="{0}")", kBoundColours.at(bound)));
      entry(kBoundNames.at(bound));
    }
  }
  if (any_measured) {
    draw_marker(svg, x + 9.0, y, 6.0, ChartPoint{"", 1.0, 1.0, 0.0, Bound::memory, true, 6.0});
    entry("measured kernel (ncu)");
  }
  if (any_sized) {
    y += 6.0;
    heading("area = share of time");
    for (double share : {0.01, 0.1, 0.3}) {
      const double radius = 4.0 + 24.0 * std::sqrt(share);
      svg.circle(x + 13.0, y + radius - 6.0, radius, R"(fill="none" stroke="#888")");
      svg.text(x + 44.0, y + radius - 2.0, percent(share), R"(font-size="12" fill="#333")");
      y += 2.0 * radius + 6.0;
    }
  }
  y += 6.0;
  heading("roofs");
  svg.line(x, y, x + 20.0, y, R"(stroke="#111" stroke-width="3")");
  entry("compute roof in play");
  // Only what the chart draws.
  if (std::any_of(chart.roofs.begin(), chart.roofs.end(),
                  [](const RoofLine& roof) { return !roof.in_play; })) {
    svg.line(x, y, x + 20.0, y, R"(stroke="#9a9a9a" stroke-width="1.3")");
    entry("other compute paths");
  }
  svg.line(x, y + 4.0, x + 20.0, y - 4.0, R"(stroke="#1f77b4" stroke-width="2.4")");
  entry("memory bandwidth");
  if (std::any_of(chart.slopes.begin(), chart.slopes.end(),
                  [](const RoofSlope& slope) { return slope.network; })) {
    svg.line(x, y + 4.0, x + 20.0, y - 4.0,
             R"(stroke="#2ca02c" stroke-width="2.4" stroke-dasharray="7 4")");
    entry("network bandwidth");
  }
  svg.circle(x + 10.0, y, 4.0, R"(fill="#fff" stroke="#111" stroke-width="2")");
  entry("ridge (FLOP/B)");
  y += 8.0;
  // A point whose label found no room says so: no label is hidden without a note.
  std::vector<std::string> notes = chart.notes;
  std::vector<std::string> unplaced;
  for (std::size_t label = 0; label < layout.labelled.size(); ++label) {
    if (!layout.labels[label].placed) {
      unplaced.push_back(chart.points[layout.labelled[label]].label);
    }
  }
  if (!unplaced.empty()) {
    notes.push_back(
        fmt::format("Not labelled (no room beside the point): {}.", fmt::join(unplaced, "; ")));
  }
  for (const std::string& note : notes) {
    // Wrap at ~44 characters a line.
    std::string line;
    for (std::size_t start = 0; start < note.size();) {
      std::size_t end = note.find(' ', start);
      if (end == std::string::npos) {
        end = note.size();
      }
      const std::string word = note.substr(start, end - start);
      if (!line.empty() && display_width(line + word) + 1 > 34) {
        svg.text(x, y, line, R"(font-size="11" fill="#555")");
        y += 14.0;
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
      start = end + 1;
    }
    svg.text(x, y, line, R"(font-size="11" fill="#555")");
    y += 20.0;
  }
}

}  // namespace

std::string render_roofline_svg(const RooflineChart& chart) {
  const RooflineLayout layout = layout_roofline(chart);
  SvgDocument svg(layout.width, layout.height);
  svg.text(layout.plot.x, 30.0, chart.title, R"(font-size="19" font-weight="bold" fill="#111")");
  svg.text(layout.plot.x, 52.0, chart.subtitle, R"(font-size="12.5" fill="#555")");
  draw_axes(svg, layout);
  svg.raw(
      fmt::format("<clipPath id=\"plot-area\"><rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
                  "height=\"{:.2f}\"/></clipPath>\n",
                  layout.plot.x, layout.plot.y, layout.plot.width, layout.plot.height));
  svg.open_group(R"svg(clip-path="url(#plot-area)")svg");
  draw_slopes(svg, chart, layout);
  draw_roofs(svg, chart, layout);
  draw_ridges(svg, chart, layout);
  draw_points(svg, chart, layout);
  svg.close_group();
  draw_roof_labels(svg, chart, layout);
  draw_legend(svg, chart, layout);
  return svg.str();
}

}  // namespace rsim
