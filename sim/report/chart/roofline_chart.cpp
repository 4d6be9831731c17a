// SPDX-License-Identifier: MIT
#include "sim/report/chart/roofline_chart.hpp"

#include "sim/report/format.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace rsim {

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
    line.label += "  " + rate(line.peak);
    chart.roofs.push_back(line);
  }
  for (const MemoryTier& tier : roofs.memory) {
    if (tier.bandwidth) {
      chart.slopes.push_back({fmt::format("{} {}", tier.name, rate(*tier.bandwidth)),
                              *tier.bandwidth, false, &tier == &roofs.main_memory()});
    }
  }
  for (const NetworkTier& tier : roofs.network) {
    chart.slopes.push_back({fmt::format("{} {} (network)", tier.name, rate(tier.bandwidth)),
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
  return op.block == Block::layer ? op.stage + "/" + op.name : op.qualified_name();
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
      "(bound by {})",
      run.roofs.hardware, run.roofs.mode, to_string(precision.weights),
      to_string(precision.activations), to_string(precision.kv_cache), precision.compute,
      scenario.workload.phase == Phase::decode ? "decode" : "prefill", scenario.workload.batch,
      format_quantity(total.t_lower.si(), Dimension::seconds), bound_label(total));
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
      "mode {} · {} path · {} · lower bound {} (bound by {})", result.roofs.mode,
      result.op.compute_path,
      result.plan.devices > 1 ? fmt::format("per device of {}, split over {}", result.plan.devices,
                                            to_string(result.plan.shard))
                              : std::string("one device"),
      format_quantity(result.t_lower.si(), Dimension::seconds),
      bound_label(result.bound,
                  result.bound == Bound::network ? result.plan.network : result.cost.bound_tier));
  const OpCost& cost = result.cost;
  constexpr double kMatmulRadius = 9.0;
  if (cost.flops.si() > 0.0 && cost.bytes.si() > 0.0) {
    chart.points.push_back(
        {fmt::format("matmul: {} FLOP per DRAM byte", format_plain(cost.intensity)), cost.intensity,
         cost.flops.si() / result.t_lower.si(), 1.0, result.bound, false, kMatmulRadius});
  }
  if (result.collective_cost && result.collective_cost->bytes_per_device.si() > 0.0) {
    const double intensity = cost.flops.si() / result.collective_cost->bytes_per_device.si();
    chart.points.push_back({fmt::format("matmul: {} FLOP per {} byte sent", format_plain(intensity),
                                        result.plan.network),
                            intensity, cost.flops.si() / result.t_lower.si(), 1.0, result.bound,
                            false, kMatmulRadius});
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

}  // namespace rsim
