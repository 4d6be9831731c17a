// SPDX-License-Identifier: MIT
#include "sim/report/roofline_chart.hpp"

#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>

namespace rsim {
namespace {

std::string rate_label(FlopsPerSecond peak) {
  return format_quantity(peak.si(), Dimension::flop_rate);
}
std::string rate_label(BytesPerSecond bandwidth) {
  return format_quantity(bandwidth.si(), Dimension::byte_rate);
}

// Colour of a point by the roof that holds it: one entry per Bound value, in enum order.
constexpr std::array<const char*, 3> kBoundColours{"#d62728", "#1f77b4", "#2ca02c"};
constexpr const char* kMeasuredColour = "#7b3294";
// A white outline under the glyphs keeps labels readable over lines and circles.
constexpr const char* kHalo =
    R"(stroke="#ffffff" stroke-width="3.5" stroke-linejoin="round" paint-order="stroke")";
const char* bound_colour(Bound bound) { return kBoundColours.at(static_cast<std::size_t>(bound)); }

}  // namespace

RooflineChart roofline_of_roofs(const Roofs& roofs, std::string_view path_in_play) {
  RooflineChart chart;
  chart.title = fmt::format("{} — roofline", roofs.hardware);
  chart.subtitle = path_in_play.empty()
                       ? fmt::format(
                             "mode {} · no compute path in play (rsim roofs --compute "
                             "PATH draws one bold with its ridges)",
                             roofs.mode)
                       : fmt::format("mode {} · roof in play: {}", roofs.mode, path_in_play);
  // Paths with one peak share a line: Thor's bf16 and fp16, fp8 and int8, fp8_sparse and fp4.
  std::map<double, RoofLine> by_peak;
  for (const ComputePath& path : roofs.compute) {
    RoofLine& line = by_peak[path.peak.si()];
    line.peak = path.peak;
    line.label += (line.label.empty() ? "" : " · ") + path.name;
    line.in_play = line.in_play || path.name == path_in_play;
  }
  for (auto& [peak, line] : by_peak) {
    line.label += "  " + rate_label(line.peak);
    chart.roofs.push_back(line);
  }
  for (const MemoryTier& tier : roofs.memory) {
    if (tier.bandwidth) {
      chart.slopes.push_back({fmt::format("{} {}", tier.name, rate_label(*tier.bandwidth)),
                              *tier.bandwidth, false, &tier == &roofs.main_memory()});
    }
  }
  for (const NetworkTier& tier : roofs.network) {
    chart.slopes.push_back({fmt::format("{} {} (network)", tier.name, rate_label(tier.bandwidth)),
                            tier.bandwidth, true, false});
  }
  return chart;
}

namespace {

struct OpGroup {
  std::string label;
  double flops = 0.0;
  double bytes = 0.0;
  double t_math = 0.0;
  double t_mem = 0.0;
  double t_net = 0.0;
  double t_lower = 0.0;
};

// "prefix/gate_up_proj": the layer block is implied, other blocks (embed, head) are named.
std::string group_label(const Op& op) {
  return op.block == "layer" ? op.stage + "/" + op.name : op.qualified_name();
}

Bound larger_roof(const OpGroup& group) {
  if (group.t_net > std::max(group.t_math, group.t_mem)) {
    return Bound::network;
  }
  return group.t_math > group.t_mem ? Bound::compute : Bound::memory;
}

std::vector<OpGroup> op_groups(const RunResult& run) {
  std::vector<OpGroup> groups;
  std::map<std::string, std::size_t> index;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    const OpCost& cost = run.table.costs[row];
    const double count = run.table.counts(static_cast<Eigen::Index>(row));
    const auto [it, inserted] = index.emplace(op.qualified_name(), groups.size());
    if (inserted) {
      groups.push_back({group_label(op)});
    }
    OpGroup& group = groups[it->second];
    group.flops += cost.flops.si() * count;
    group.bytes += cost.bytes.si() * count;
    group.t_math += cost.t_math.si() * count;
    group.t_mem += cost.t_mem.si() * count;
    group.t_net += cost.t_net.si() * count;
    group.t_lower += cost.t_lower.si() * count;
  }
  return groups;
}

std::string percent(double fraction) { return fmt::format("{:.1f} %", 100.0 * fraction); }
std::string op_groups_text(std::size_t count) {
  return fmt::format("{} op group{}", count, count == 1 ? "" : "s");
}

}  // namespace

RooflineChart roofline_of_run(const RunResult& run) {
  const Scenario& scenario = run.scenario;
  const Precision& precision = scenario.precision;
  RooflineChart chart = roofline_of_roofs(run.roofs, precision.compute);
  const Totals& total = run.bounds.total;
  chart.title = scenario.variant.empty()
                    ? scenario.name
                    : fmt::format("{} — variant {}", scenario.name, scenario.variant);
  chart.subtitle = fmt::format(
      "{}, mode {} · precision W/A/KV {}/{}/{} on the {} roof · {} batch {} · lower bound {} "
      "({}-bound)",
      run.roofs.hardware, run.roofs.mode, to_string(precision.weights),
      to_string(precision.activations), to_string(precision.kv_cache), precision.compute,
      scenario.workload.phase == "decode" ? "decode" : "prefill", scenario.workload.batch,
      format_quantity(total.t_lower.si(), Dimension::seconds), to_string(total.bound));
  double no_bytes_share = 0.0;
  double no_flops_share = 0.0;
  std::size_t no_bytes = 0;
  std::size_t no_flops = 0;
  std::vector<std::vector<std::string>> merged;  // the op groups behind each point
  for (const OpGroup& group : op_groups(run)) {
    const double share = group.t_lower / total.t_lower.si();
    if (group.flops <= 0.0) {
      ++no_flops;
      no_flops_share += share;
      continue;
    }
    if (group.bytes <= 0.0) {
      ++no_bytes;
      no_bytes_share += share;
      continue;
    }
    const ChartPoint point{group.label, group.flops / group.bytes, group.flops / group.t_lower,
                           share,       larger_roof(group),        false};
    // Ops of one stage at the same spot (q_proj and o_proj, the two norms) are one point with
    // one label: "action/q_proj + o_proj", or "… + 2 more" past two names.
    const std::string stage = group.label.substr(0, group.label.find('/'));
    const auto same = std::find_if(chart.points.begin(), chart.points.end(), [&](const auto& p) {
      return p.label.starts_with(stage + "/") && p.bound == point.bound &&
             std::abs(p.intensity / point.intensity - 1.0) < 1e-9 &&
             std::abs(p.attainable / point.attainable - 1.0) < 1e-9;
    });
    if (same == chart.points.end()) {
      chart.points.push_back(point);
      merged.push_back({group.label});
    } else {
      same->share += share;
      merged[static_cast<std::size_t>(same - chart.points.begin())].push_back(
          group.label.substr(stage.size() + 1));
    }
  }
  for (std::size_t index = 0; index < chart.points.size(); ++index) {
    const std::vector<std::string>& names = merged[index];
    chart.points[index].label =
        (names.size() <= 2 ? fmt::format("{}", fmt::join(names, " + "))
                           : fmt::format("{} + {} more", names.front(), names.size() - 1)) +
        " " + percent(chart.points[index].share);
  }
  if (no_bytes > 0) {
    chart.notes.push_back(fmt::format(
        "Not drawn: {} with no DRAM traffic (fused into a matmul; {} of the time): their "
        "intensity is infinite.",
        op_groups_text(no_bytes), percent(no_bytes_share)));
  }
  if (no_flops > 0) {
    chart.notes.push_back(
        fmt::format("Not drawn: {} without FLOPs (KV-cache writes, collectives; {} of the time).",
                    op_groups_text(no_flops), percent(no_flops_share)));
  }
  return chart;
}

RooflineChart roofline_of_matmul(const MatmulResult& result) {
  RooflineChart chart = roofline_of_roofs(result.roofs, result.op.compute_path);
  const MatmulShape& shape = result.global;
  chart.title = fmt::format("X[{}, {}]·W[{}, {}] on {}", shape.batch, shape.contract,
                            shape.contract, shape.out, result.roofs.hardware);
  chart.subtitle = fmt::format(
      "mode {} · {} path · {} · lower bound {} ({}-bound)", result.roofs.mode,
      result.op.compute_path,
      result.plan.devices > 1 ? fmt::format("per device of {}, split over {}", result.plan.devices,
                                            to_string(result.plan.shard))
                              : std::string("one device"),
      format_quantity(result.t_lower.si(), Dimension::seconds), to_string(result.bound));
  const OpCost& cost = result.cost;
  constexpr double kMatmulRadius = 9.0;
  if (cost.flops.si() > 0.0 && cost.bytes.si() > 0.0) {
    chart.points.push_back({fmt::format("matmul: {:.4g} FLOP per DRAM byte", cost.intensity),
                            cost.intensity, cost.flops.si() / result.t_lower.si(), 1.0,
                            result.bound, false, kMatmulRadius});
  }
  if (result.collective_cost && result.collective_cost->bytes_per_device.si() > 0.0) {
    const double intensity = cost.flops.si() / result.collective_cost->bytes_per_device.si();
    chart.points.push_back(
        {fmt::format("matmul: {:.4g} FLOP per {} byte sent", intensity, result.plan.network),
         intensity, cost.flops.si() / result.t_lower.si(), 1.0, result.bound, false,
         kMatmulRadius});
  }
  return chart;
}

void add_measured(RooflineChart& chart, const std::vector<KernelOnRoofs>& kernels) {
  std::size_t skipped = 0;
  for (const KernelOnRoofs& kernel : kernels) {
    if (kernel.flops.si() <= 0.0 || kernel.kernel.dram_bytes.si() <= 0.0) {
      ++skipped;
      continue;
    }
    std::string name = kernel.kernel.name;
    if (name.size() > 28) {
      name = name.substr(0, 27) + "…";
    }
    chart.points.push_back(
        {fmt::format("{} ({} of DRAM)", name, percent(kernel.dram_fraction)), kernel.intensity,
         kernel.achieved.si(), 0.0,
         kernel.compute_fraction > kernel.dram_fraction ? Bound::compute : Bound::memory, true,
         6.0});
  }
  if (skipped > 0) {
    chart.notes.push_back(fmt::format(
        "{} measured kernels without FLOPs or DRAM bytes are in the table, not on the chart.",
        skipped));
  }
}

namespace {

constexpr double kFontPx = 12.0;
constexpr double kLabelHeight = 15.0;
constexpr double kSmallFontPx = 10.5;
constexpr double kRoofLabelHeight = 30.0;

// "fp8 · int8  517 TFLOP/s" → {"fp8 · int8", "517 TFLOP/s"}: the path names (wrapped at ~22
// characters, so a long list of paths sharing a peak stays in the margin), then the peak.
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

// The slope's visible part, from the left or bottom edge up to the roof `top` (FLOP/s).
std::pair<std::pair<double, double>, std::pair<double, double>> slope_segment(
    const RooflineLayout& layout, double bandwidth, double top) {
  const double x_start = std::max(layout.x.low, layout.y.low / bandwidth);
  const double x_end = std::min(layout.x.high, top / bandwidth);
  return {{layout.x.to_pixel(x_start), layout.y.to_pixel(bandwidth * x_start)},
          {layout.x.to_pixel(x_end), layout.y.to_pixel(bandwidth * x_end)}};
}

// The peak slopes are drawn solid up to: the roof in play, or the highest roof without one.
double in_play_peak(const RooflineChart& chart) {
  for (const RoofLine& roof : chart.roofs) {
    if (roof.in_play) {
      return roof.peak.si();
    }
  }
  return chart.roofs.back().peak.si();
}

// A slope's label rides the slope 18 px after it enters the plot, 5 px above it; its box is the
// axis-aligned bound of the rotated text.
SlopeLabel slope_label(const RooflineLayout& layout, const RoofSlope& slope, double top) {
  const auto [start, end] = slope_segment(layout, slope.bandwidth.si(), top);
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

struct DrawnRidge {
  double intensity;
  double peak;
  bool in_play;
};

// Ridges drawn: every roof against main memory, the roofs in play against every slope.
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
  for (const DrawnRidge& ridge : drawn_ridges(chart)) {
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
    const std::vector<std::string> lines = roof_label_lines(it->label);
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
    layout.slope_labels.push_back(slope_label(layout, slope, in_play_peak(chart)));
  }
  // Ridge labels next to their markers.
  std::vector<LabelRequest> ridge_requests;
  for (const DrawnRidge& ridge : drawn_ridges(chart)) {
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

namespace {

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
  const std::vector<DrawnRidge> ridges = drawn_ridges(chart);
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
  svg.line(x, y, x + 20.0, y, R"(stroke="#9a9a9a" stroke-width="1.3")");
  entry("other compute paths");
  svg.line(x, y + 4.0, x + 20.0, y - 4.0, R"(stroke="#1f77b4" stroke-width="2.4")");
  entry("memory bandwidth");
  svg.line(x, y + 4.0, x + 20.0, y - 4.0,
           R"(stroke="#2ca02c" stroke-width="2.4" stroke-dasharray="7 4")");
  entry("network bandwidth");
  svg.circle(x + 10.0, y, 4.0, R"(fill="#fff" stroke="#111" stroke-width="2")");
  entry("ridge (FLOP/B)");
  y += 8.0;
  for (const std::string& note : chart.notes) {
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
