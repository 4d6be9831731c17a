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

/// ΣT_math, ΣT_mem, ΣT on the on-chip tiers and ΣT_net per run, stacked (their sum is the
/// no-overlap upper bound, the tables' "upper"), with the lower bound (Σ per-op max) as the
/// marker; runs[0] is the baseline.
StackedBars bars_of_runs(const std::vector<RunResult>& runs, const std::string& title);

/// Where the time axis of the bars ends: at the longest bar, or, when one bar is more than 4×
/// the next (it would squeeze the others to slivers), at 1.25× the next: that bar is drawn
/// broken at the axis's end, its figures still its whole length.
double axis_extent(const StackedBars& bars);

/// The bars as a standalone SVG document: a linear time axis from 0 with 1-2-5 ticks.
std::string render_bars_svg(const StackedBars& bars);
/// The bars as text, `width` characters for the axis (#, =, -, ~ per segment, | marker, // at
/// the end of a broken bar).
std::string render_bars_text(const StackedBars& bars, int width = 50);

}  // namespace rsim
