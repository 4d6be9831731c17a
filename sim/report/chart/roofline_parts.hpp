// SPDX-License-Identifier: MIT
#pragma once

// Geometry shared by the roofline layout (roofline_layout.cpp) and its drawing
// (roofline_svg.cpp); internal to sim/report, not part of the report API.

#include "sim/report/chart/roofline_chart.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rsim::roofline_parts {

inline constexpr double kFontPx = 12.0;       ///< labels
inline constexpr double kLabelHeight = 15.0;  ///< one line of a label, px
inline constexpr double kSmallFontPx = 10.5;  ///< ridge labels

/// A ridge marked on the chart: where a roof meets a slope.
struct DrawnRidge {
  double intensity = 0.0;  ///< peak / bandwidth, FLOP/byte
  double peak = 0.0;       ///< FLOP/s
  bool in_play = false;
};

/// Ridges drawn: every roof against main memory, the roofs in play against every slope.
std::vector<DrawnRidge> drawn_ridges(const RooflineChart& chart);

/// "fp8 · int8  517 TFLOP/s" → {"fp8 · int8", "517 TFLOP/s"}: the path names (wrapped at ~22
/// characters, so a long list of paths sharing a peak stays in the margin), then the peak.
std::vector<std::string> roof_label_lines(const std::string& label);

/// A slope's visible part in pixels, from the left or bottom edge up to the roof `top` (FLOP/s).
std::pair<std::pair<double, double>, std::pair<double, double>> slope_segment(
    const RooflineLayout& layout, double bandwidth, double top);

/// The peak slopes are drawn solid up to: the roof in play, or the highest roof without one.
double in_play_peak(const RooflineChart& chart);

}  // namespace rsim::roofline_parts
