// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/request.hpp"

#include <string>
#include <vector>

namespace rsim {

/// One bar: stacked segments (in seconds) and a marker (the lower bound).
struct Bar {
  std::string label;
  std::vector<double> segments_s;  ///< one per StackedBars::segment_names
  double marker_s = 0.0;           ///< drawn as a tick across the bar; 0: none
  std::string note;                ///< e.g. "does not fit in memory"
};

/// Horizontal stacked bars, one per plan or variant (`rsim compare --plot`).
struct StackedBars {
  std::string title;
  std::string subtitle;
  std::vector<std::string> segment_names;
  std::string marker_name;
  std::vector<Bar> bars;
};

/// ΣT_math, ΣT_mem, ΣT_net per run, stacked (their sum is the no-overlap upper bound), with the
/// lower bound (Σ per-op max) as the marker; runs[0] is the baseline.
StackedBars bars_of_runs(const std::vector<RunResult>& runs, const std::string& title);

/// The bars as a standalone SVG document: a linear time axis from 0 with 1-2-5 ticks.
std::string render_bars_svg(const StackedBars& bars);
/// The bars as text, `width` characters for the longest bar (#, =, ~ per segment, | marker).
std::string render_bars_text(const StackedBars& bars, int width = 50);

}  // namespace rsim
