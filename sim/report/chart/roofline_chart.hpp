// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/measured.hpp"
#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/report/chart/svg.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// A horizontal compute roof; paths with the same peak share one line ("fp8 · int8").
struct RoofLine {
  std::string label;
  FlopsPerSecond peak;
  bool in_play = false;  ///< the precision's path: drawn bold
};

/// A bandwidth slope: attainable = bandwidth × intensity. Network slopes read intensity as FLOPs
/// per network byte.
struct RoofSlope {
  std::string label;
  BytesPerSecond bandwidth;
  bool network = false;
  bool main_memory = false;  ///< DRAM/HBM, the slope ops are placed against
};

/// A point of the chart: an op (or op group) or a measured kernel.
struct ChartPoint {
  std::string label;
  double intensity = 0.0;   ///< FLOP/byte
  double attainable = 0.0;  ///< FLOP/s: FLOPs / lower-bound time, or measured FLOPs / duration
  double share = 0.0;       ///< fraction of the run's lower-bound time (sets the area)
  Bound bound = Bound::memory;
  bool measured = false;
  double radius_px = 0.0;  ///< a fixed size (a lone matmul); 0: sized by share
};

/// Everything a roofline chart shows, independent of how it is drawn (SVG or text).
struct RooflineChart {
  std::string title;
  std::string subtitle;
  std::vector<RoofLine> roofs;    ///< ascending peak
  std::vector<RoofSlope> slopes;  ///< main memory first
  std::vector<ChartPoint> points;
  std::vector<std::string> notes;  ///< footnotes: what is not drawn, and why
};

/// The roofs and slopes of a hardware; `path_in_play` (a compute path) is drawn bold.
RooflineChart roofline_of_roofs(const Roofs& roofs, std::string_view path_in_play);
/// A scenario run: its roofs, and one point per op group (an op's instances across layers and
/// steps are one graph op already; ops of one qualified name are summed), placed at
/// (Σ FLOPs / Σ bytes, Σ FLOPs / Σ lower-bound time). Ops without DRAM bytes or FLOPs cannot sit
/// on log axes and are counted in a note.
RooflineChart roofline_of_run(const RunResult& run);
/// One matmul (`rsim matmul`); split over devices, a second point at its network intensity
/// (FLOPs per byte each device sends), against the network slopes.
RooflineChart roofline_of_matmul(const MatmulResult& result);
/// Adds measured kernels as points (Yang et al., "Hierarchical Roofline Analysis", 2020).
void add_measured(RooflineChart& chart, const std::vector<KernelOnRoofs>& kernels);

/// Where a slope's label sits: rotated by the slope's angle about (x, y), its text baseline.
struct SlopeLabel {
  double x = 0.0;
  double y = 0.0;
  double angle_deg = 0.0;
  Box box;  ///< the axis-aligned bound of the rotated text
};

/// The geometry of a drawn roofline chart, exposed so tests can check pixels and labels.
struct RooflineLayout {
  double width = 1180.0;
  double height = 720.0;
  Box plot;
  LogAxis x;                             ///< intensity, FLOP/byte
  LogAxis y;                             ///< FLOP/s
  std::vector<double> radius;            ///< per point
  std::vector<std::size_t> labelled;     ///< points with a label, most important first
  std::vector<LabelPlacement> labels;    ///< one per `labelled`
  std::vector<Box> fixed_labels;         ///< roof, ridge, then slope labels
  std::vector<SlopeLabel> slope_labels;  ///< one per slope
};

/// Lays the chart out: axis ranges spanning the points, ridges and roofs in whole decades
/// where they fit, point radii (area ∝ share of time), and labels for up to `max_labels` points
/// placed without overlaps.
RooflineLayout layout_roofline(const RooflineChart& chart, std::size_t max_labels = 10);

/// The chart as a standalone SVG document.
std::string render_roofline_svg(const RooflineChart& chart);

}  // namespace rsim
