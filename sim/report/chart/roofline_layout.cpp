// SPDX-License-Identifier: MIT
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/roofline_parts.hpp"
#include "sim/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace rsim {
namespace roofline_parts {

std::vector<DrawnRidge> drawn_ridges(const RooflineChart& chart) {
  std::vector<DrawnRidge> result;
  for (const RoofLine& roof : chart.roofs) {
    for (const RoofSlope& slope : chart.slopes) {
      if (slope.main_memory || roof.in_play) {
        result.push_back({roof.peak.si() / slope.bandwidth.si(), roof.peak.si(), roof.in_play});
      }
    }
  }
  return result;
}

std::vector<std::string> roof_label_lines(const std::string& label) {
  const std::size_t gap = label.find("  ");
  const std::string names = label.substr(0, gap);
  std::vector<std::string> lines(1);
  for (std::size_t start = 0; start <= names.size();) {
    std::size_t end = names.find(" · ", start);
    if (end == std::string::npos) {
      end = names.size();
    }
    const std::string name = names.substr(start, end - start);
    if (!lines.back().empty() && display_width(lines.back() + " · " + name) > 22) {
      lines.emplace_back();
    }
    lines.back() += (lines.back().empty() ? "" : " · ") + name;
    start = end + std::string_view(" · ").size();
  }
  lines.push_back(label.substr(gap + 2));
  return lines;
}

std::pair<std::pair<double, double>, std::pair<double, double>> slope_segment(
    const RooflineLayout& layout, double bandwidth, double top) {
  const double x_start = std::max(layout.x.low, layout.y.low / bandwidth);
  const double x_end = std::min(layout.x.high, top / bandwidth);
  return {{layout.x.to_pixel(x_start), layout.y.to_pixel(bandwidth * x_start)},
          {layout.x.to_pixel(x_end), layout.y.to_pixel(bandwidth * x_end)}};
}

double in_play_peak(const RooflineChart& chart) {
  for (const RoofLine& roof : chart.roofs) {
    if (roof.in_play) {
      return roof.peak.si();
    }
  }
  return chart.roofs.back().peak.si();
}

}  // namespace roofline_parts

namespace {

using roofline_parts::DrawnRidge;
using roofline_parts::kFontPx;
using roofline_parts::kLabelHeight;
using roofline_parts::kSmallFontPx;

// A slope's label rides the slope 18 px after it enters the plot, 5 px above it; its box is the
// axis-aligned bound of the rotated text.
SlopeLabel slope_label(const RooflineLayout& layout, const RoofSlope& slope, double top) {
  const auto [start, end] = roofline_parts::slope_segment(layout, slope.bandwidth.si(), top);
  const double angle = std::atan2(end.second - start.second, end.first - start.first);
  SlopeLabel label;
  label.angle_deg = angle * 180.0 / std::numbers::pi;
  label.x = start.first + 18.0 * std::cos(angle);
  label.y = start.second + 18.0 * std::sin(angle) - 5.0;
  const double width = text_width(slope.label, kFontPx);
  double left = label.x;
  double right = label.x;
  double top_px = label.y;
  double bottom = label.y;
  for (const auto& [dx, dy] : {std::pair{width, 0.0}, {0.0, -kFontPx}, {width, -kFontPx}}) {
    const double x = label.x + dx * std::cos(angle) - dy * std::sin(angle);
    const double y = label.y + dx * std::sin(angle) + dy * std::cos(angle);
    left = std::min(left, x);
    right = std::max(right, x);
    top_px = std::min(top_px, y);
    bottom = std::max(bottom, y);
  }
  label.box = {left, top_px, right - left, bottom - top_px};
  return label;
}

double floor_decade(double value) { return std::pow(10.0, std::floor(std::log10(value))); }
double ceil_decade(double value) { return std::pow(10.0, std::ceil(std::log10(value))); }
}  // namespace

RooflineLayout layout_roofline(const RooflineChart& chart, std::size_t max_labels) {
  RooflineLayout layout;
  layout.plot = {90.0, 80.0, layout.width - 90.0 - 370.0, layout.height - 80.0 - 72.0};
  const Box& plot = layout.plot;
  // x: whole decades around the points and ridges (a ridge needs room on both sides).
  double x_min = 1e300;
  double x_max = 0.0;
  double y_min = chart.roofs.front().peak.si() / 30.0;
  for (const DrawnRidge& ridge : roofline_parts::drawn_ridges(chart)) {
    x_min = std::min(x_min, ridge.intensity / 30.0);
    x_max = std::max(x_max, ridge.intensity * 2.0);
  }
  for (const ChartPoint& point : chart.points) {
    x_min = std::min(x_min, point.intensity / 1.5);
    x_max = std::max(x_max, point.intensity * 3.0);
    y_min = std::min(y_min, point.attainable / 2.0);
  }
  layout.x = {floor_decade(x_min), ceil_decade(x_max), plot.x, plot.right()};
  // y: from a whole decade below everything up to 2.5 × the highest roof (room for its label).
  layout.y = {y_min, chart.roofs.back().peak.si() * 2.5, plot.bottom(), plot.y};

  for (const ChartPoint& point : chart.points) {
    // Area ∝ share of time: r = 4 px + 24 px · √share (a 25 % op gets 16 px).
    layout.radius.push_back(point.radius_px > 0.0 ? point.radius_px
                            : point.measured      ? 6.0
                                                  : 4.0 + 24.0 * std::sqrt(point.share));
  }
  // Labels: measured kernels first (the user's own data), then ops by share (≥ 0.5 %).
  std::vector<std::size_t> order(chart.points.size());
  for (std::size_t index = 0; index < order.size(); ++index) {
    order[index] = index;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const ChartPoint& left = chart.points[a];
    const ChartPoint& right = chart.points[b];
    return std::pair{left.measured, left.share} > std::pair{right.measured, right.share};
  });
  for (std::size_t index : order) {
    const ChartPoint& point = chart.points[index];
    if (layout.labelled.size() < max_labels && (point.measured || point.share >= 0.005)) {
      layout.labelled.push_back(index);
    }
  }

  // Roof labels sit in the right margin (path names, then the peak) centred on their roof,
  // pushed apart when roofs are close.
  double next_top = 0.0;
  for (auto it = chart.roofs.rbegin(); it != chart.roofs.rend(); ++it) {
    const std::vector<std::string> lines = roofline_parts::roof_label_lines(it->label);
    double width = 0.0;
    for (const std::string& line : lines) {
      width = std::max(width, text_width(line, kFontPx));
    }
    const double height = kLabelHeight * static_cast<double>(lines.size());
    const double top = std::max(layout.y.to_pixel(it->peak.si()) - height / 2.0, next_top);
    layout.fixed_labels.push_back({plot.right() + 10.0, top, width, height});
    next_top = top + height + 2.0;
  }
  for (const RoofSlope& slope : chart.slopes) {
    layout.slope_labels.push_back(slope_label(layout, slope, roofline_parts::in_play_peak(chart)));
  }
  // Ridge labels next to their markers.
  std::vector<LabelRequest> ridge_requests;
  for (const DrawnRidge& ridge : roofline_parts::drawn_ridges(chart)) {
    const std::string text = format_count(ridge.intensity);
    ridge_requests.push_back({layout.x.to_pixel(ridge.intensity), layout.y.to_pixel(ridge.peak),
                              4.0, text_width(text, kSmallFontPx), 13.0, kBelowRight});
  }
  std::vector<Box> circles;
  for (std::size_t index = 0; index < chart.points.size(); ++index) {
    const double x = layout.x.to_pixel(chart.points[index].intensity);
    const double y = layout.y.to_pixel(chart.points[index].attainable);
    const double radius = layout.radius[index];
    circles.push_back({x - radius, y - radius, 2.0 * radius, 2.0 * radius});
  }
  for (const SlopeLabel& label : layout.slope_labels) {
    circles.push_back(label.box);
  }
  for (const LabelPlacement& placement : place_labels(ridge_requests, plot, circles)) {
    layout.fixed_labels.push_back(placement.placed ? placement.box : Box{});
  }
  for (const SlopeLabel& label : layout.slope_labels) {
    layout.fixed_labels.push_back(label.box);
  }
  std::vector<Box> obstacles = layout.fixed_labels;
  // Labels keep off the roofs and the ridge markers: a roof's line, from its leftmost ridge to
  // the plot's right edge, as a band 6 px high; a ridge as its marker's box.
  for (const RoofLine& roof : chart.roofs) {
    double left = plot.right();
    for (const DrawnRidge& ridge : roofline_parts::drawn_ridges(chart)) {
      if (ridge.peak == roof.peak.si()) {
        left = std::min(left, layout.x.to_pixel(ridge.intensity));
      }
    }
    left = std::max(left, plot.x);
    obstacles.push_back({left, layout.y.to_pixel(roof.peak.si()) - 3.0, plot.right() - left, 6.0});
  }
  for (const DrawnRidge& ridge : roofline_parts::drawn_ridges(chart)) {
    obstacles.push_back({layout.x.to_pixel(ridge.intensity) - 6.0,
                         layout.y.to_pixel(ridge.peak) - 6.0, 12.0, 12.0});
  }
  std::vector<LabelRequest> requests;
  for (std::size_t index : layout.labelled) {
    const ChartPoint& point = chart.points[index];
    const double x = layout.x.to_pixel(point.intensity);
    const double y = layout.y.to_pixel(point.attainable);
    const double radius = layout.radius[index];
    obstacles.push_back({x - radius, y - radius, 2.0 * radius, 2.0 * radius});
    requests.push_back({x, y, radius, text_width(point.label, kFontPx) + 6.0, kLabelHeight + 2.0});
  }
  layout.labels = place_labels(requests, plot, obstacles);
  return layout;
}

}  // namespace rsim
