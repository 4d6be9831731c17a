// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace rsim {

/// One plan or variant over a swept parameter: time bounds at each x.
struct Series {
  std::string name;
  std::vector<double> x;        ///< the swept parameter, ascending
  std::vector<double> lower_s;  ///< lower bound (full overlap) at each x
  std::vector<double> upper_s;  ///< upper bound (no overlap) at each x
  /// Per x (empty: every point fits): whether the point fits in memory; one that does not is
  /// drawn apart (a hollow grey marker).
  std::vector<bool> fits;
  /// Per x (empty: none): the roof that holds the point; where it changes the chart marks it.
  std::vector<std::string> roofs;
  /// A scatter: markers only, no band or lines (points that are not a curve).
  bool markers_only = false;
};

/// Where the lower bounds of two series cross: between two samples whose difference changes
/// sign, at the root of the linear interpolation (in log space on a log axis).
struct Crossover {
  std::size_t first = 0;  ///< series indices
  std::size_t second = 0;
  double x = 0.0;
  double time_s = 0.0;
};

/// Time against a swept parameter for several plans: a band from lower to upper per series.
/// Generic on purpose: a sweep fills it (batch, seq_len, devices ...).
struct SeriesChart {
  std::string title;
  std::string subtitle;
  std::string x_label;           ///< e.g. "batch (sequences)"
  std::string y_label = "time";  ///< what the time is, e.g. "time per step, per device"
  bool log_x = false;
  bool log_y = false;
  std::vector<Series> series;
  /// Crossovers found elsewhere (a sweep's bisection on the cost model) to mark instead of the
  /// interpolated ones; empty: find_crossovers.
  std::vector<Crossover> marked;
  /// false: no crossovers marked (series of different quantities, e.g. TTFT beside TPOT).
  bool crossovers = true;
};

/// Every crossover of every pair of series (the series must share their x values).
std::vector<Crossover> find_crossovers(const SeriesChart& chart);

/// The chart as a standalone SVG document: bands, lower (solid) and upper (dashed) lines, a
/// marker at every grid point (hollow and grey where it does not fit in memory), roof changes
/// and crossovers marked and labelled with their x; the legend as wide as its longest name.
std::string render_series_svg(const SeriesChart& chart);

}  // namespace rsim
