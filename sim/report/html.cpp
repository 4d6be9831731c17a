// SPDX-License-Identifier: MIT
#include "sim/report/html.hpp"

#include "sim/report/chart/bar_chart.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/chart/svg.hpp"
#include "sim/report/html_document.hpp"
#include "sim/report/html_text.hpp"
#include "sim/report/sweep_report.hpp"
#include "sim/report/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace rsim {
namespace {

using html::Cell;
using html::close_document;
using html::esc;
using html::num;
using html::open_document;
using html::write_table;

Cell seconds(double time_s) { return html::time_cell(time_s); }
Cell bytes(double size) { return num(size, format_quantity(size, Dimension::bytes)); }
Cell count(double value) { return num(value, format_count(value)); }
// What holds a row, in the reports' words, coloured by its roof (grey when fused: no roof).
Cell bound(Bound value, std::string label) {
  const std::string style = label == "fused" ? std::string("fused") : std::string(to_string(value));
  return {std::move(label), std::nullopt, fmt::format("bound-{}", style)};
}

void write_roofs(std::ostream& out, const Roofs& roofs) {
  out << "<section id=\"roofs\"><h2>Hardware roofs</h2>\n";
  std::vector<std::vector<Cell>> compute;
  for (const ComputePath& path : roofs.compute) {
    compute.push_back({{path.name},
                       num(path.peak.si(), format_quantity(path.peak.si(), Dimension::flop_rate)),
                       {std::string(to_string(path.unit))},
                       {path.provenance.derived.empty() ? path.provenance.source
                                                        : "derived: " + path.provenance.derived}});
  }
  write_table(out, "compute-table", {"compute path", "peak#", "unit", "provenance"}, compute);
  std::vector<std::vector<Cell>> tiers;
  for (const MemoryTier& tier : roofs.memory) {
    tiers.push_back({{tier.name},
                     tier.bandwidth
                         ? num(tier.bandwidth->si(),
                               format_quantity(tier.bandwidth->si(), Dimension::byte_rate))
                         : Cell{"(capacity only)", 0.0, "num"},
                     bytes(tier.capacity.si() * static_cast<double>(tier.count))});
  }
  for (const NetworkTier& tier : roofs.network) {
    tiers.push_back(
        {{tier.name + " (network, one way)"},
         num(tier.bandwidth.si(), format_quantity(tier.bandwidth.si(), Dimension::byte_rate)),
         {"-"}});
  }
  write_table(out, "memory-table", {"tier", "bandwidth#", "capacity#"}, tiers);
  std::vector<std::vector<Cell>> ridge_rows;
  for (const Ridge& ridge : ridges(roofs)) {
    ridge_rows.push_back({{ridge.path}, {ridge.tier}, count(ridge.flops_per_byte)});
  }
  write_table(out, "ridges-table", {"compute path", "tier", "ridge FLOP/B#"}, ridge_rows);
  out << "</section>\n";
}

void write_scenario(std::ostream& out, const RunResult& run) {
  const Scenario& scenario = run.scenario;
  const Footprint& footprint = run.footprint;
  out << "<section id=\"scenario\"><h2>Scenario</h2><dl>\n";
  const auto item = [&](const std::string& term, const std::string& text) {
    out << fmt::format("<dt>{}</dt><dd>{}</dd>\n", esc(term), esc(text));
  };
  item("hardware", fmt::format("{}, mode {}", run.roofs.hardware, run.roofs.mode));
  item(
      "model",
      fmt::format("{}: {} parameters{}", scenario.model.name,
                  format_parameters(static_cast<double>(run.parameters.total())),
                  run.parameters.inactive_experts > 0
                      ? fmt::format(" ({} active per token)",
                                    format_parameters(static_cast<double>(run.parameters.active())))
                      : std::string()));
  item("workload",
       fmt::format("{}, batch {}", to_string(scenario.workload.phase), scenario.workload.batch));
  item("precision", describe(scenario.precision));
  item("plan", scenario.plan.devices() > 1
                   ? fmt::format("{} on {} devices", scenario.plan.name, scenario.plan.devices())
                   : std::string("one device"));
  item("memory per device",
       fmt::format("{} of {}: {}", format_quantity(footprint.total().si(), Dimension::bytes),
                   format_quantity(footprint.capacity.si(), Dimension::bytes),
                   footprint.fits() ? "fits" : "does not fit"));
  const Totals& total = run.bounds.total;
  item("bounds",
       fmt::format("{} lower (Σ per-op max) … {} upper (Σ per-op sum), bound by {}",
                   format_quantity(total.t_lower.si(), Dimension::seconds),
                   format_quantity(total.t_upper.si(), Dimension::seconds), bound_label(total)));
  out << "</dl></section>\n";
}

std::vector<Cell> totals_cells(std::string label, const Totals& totals) {
  return {{std::move(label)},
          count(totals.flops.si()),
          bytes(totals.bytes.si()),
          seconds(totals.t_math.si()),
          seconds(totals.t_mem.si()),
          seconds(totals.t_net.si()),
          seconds(totals.t_lower.si()),
          seconds(totals.t_upper.si()),
          bound(totals.bound, bound_label(totals))};
}

void write_stages(std::ostream& out, const RunResult& run) {
  out << "<section id=\"stages\"><h2>Stages and blocks</h2>\n";
  std::vector<std::vector<Cell>> rows;
  for (const GroupBounds& stage : run.bounds.stages) {
    rows.push_back(totals_cells(stage.stage, stage.totals));
  }
  for (const GroupBounds& block : run.bounds.blocks) {
    rows.push_back(
        totals_cells(block.stage + "/" + std::string(to_string(block.block)), block.totals));
  }
  write_table(out, "stages-table",
              {"stage", "FLOPs#", "DRAM bytes#", "ΣT_math#", "ΣT_mem#", "ΣT_net#", "lower#",
               "upper#", "bound"},
              rows);
  out << "</section>\n";
}

// A decode step or a whole request, as tables (issue 25: they hid in the collapsed text): the
// times with their bounds and the expected one, tokens/s, and the memory one device holds.
void write_decode(std::ostream& out, const RunResult& run) {
  const Workload& workload = run.scenario.workload;
  if (workload.phase != Phase::decode) {
    return;
  }
  out << "<section id=\"decode\"><h2>Decode</h2>\n";
  const auto time_row = [](const std::string& name, const PhaseTimes& time) {
    return std::vector<Cell>{name, seconds(time.lower.si()), seconds(time.expected.si()),
                             seconds(time.upper.si())};
  };
  const auto rate_row = [](const std::string& name, double tokens, const PhaseTimes& time) {
    const auto rate = [&](Seconds t) {
      const double value = t.si() > 0.0 ? tokens / t.si() : 0.0;
      return num(value, format_plain(value) + " tokens/s");
    };
    // The lower bound gives the most tokens/s, the upper the fewest.
    return std::vector<Cell>{name, rate(time.lower), rate(time.expected), rate(time.upper)};
  };
  const Totals& total = run.bounds.total;
  const PhaseTimes step{total.t_lower, total.t_upper, total.t_expected};
  const auto batch = static_cast<double>(workload.batch);
  std::vector<std::vector<Cell>> rows{
      time_row(fmt::format("decode step ({} cached tokens)", workload.context), step),
      rate_row("tokens/s, one step", batch, step)};
  if (run.request) {
    const DecodeRequest& request = *run.request;
    rows.push_back(
        time_row(fmt::format("time to first token (prefill of {} tokens)", request.prompt_tokens),
                 request.prefill));
    rows.push_back(time_row("time per output token after the first", request.per_output_token()));
    rows.push_back(time_row(fmt::format("{} decode steps", request.steps), request.decode));
    rows.push_back(time_row("request", request.total()));
    rows.push_back(rate_row("tokens/s, whole request",
                            batch * static_cast<double>(request.steps + 1), request.total()));
  }
  write_table(out, "decode-table", {"", "lower#", "expected#", "upper#"}, rows);
  const Footprint& memory = run.footprint;
  std::vector<std::vector<Cell>> parts;
  for (const auto& [name, size] :
       {std::pair{"weights", memory.weights}, std::pair{"KV cache", memory.kv_cache},
        std::pair{"activations (largest op)", memory.activations},
        std::pair{"total", memory.total()}, std::pair{"capacity", memory.capacity}}) {
    parts.push_back({std::string(name), bytes(size.si())});
  }
  write_table(out, "memory-table", {"per device", "bytes#"}, parts);
  out << "</section>\n";
}

void write_ops(std::ostream& out, const RunResult& run) {
  out << "<section id=\"ops\"><h2>Ops</h2><p class=\"sub\">Per instance, then × count; "
         "click a header to sort.</p>\n";
  std::vector<std::vector<Cell>> rows;
  const double total = run.bounds.total.t_lower.si();
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    const OpCost& cost = run.table.costs[row];
    const double instances = run.table.counts(static_cast<Eigen::Index>(row));
    const double lower = cost.t_lower.si() * instances;
    rows.push_back({{op.qualified_name()},
                    count(static_cast<double>(op.count)),
                    count(cost.flops.si()),
                    bytes(cost.bytes.si()),
                    num(cost.intensity, format_plain(cost.intensity)),
                    seconds(cost.t_math.si()),
                    seconds(cost.t_mem.si()),
                    seconds(cost.t_net.si()),
                    bound(cost.bound, bound_label(op, cost)),
                    seconds(lower),
                    num(lower / total, fmt::format("{:.1f} %", 100.0 * lower / total)),
                    {describe_critical(run.critical[row])}});
  }
  write_table(out, "ops-table",
              {"op", "count#", "FLOPs#", "bytes#", "FLOP/B#", "T_math#", "T_mem#", "T_net#",
               "bound", "lower × count#", "share#", "crit. tokens"},
              rows);
  out << "</section>\n";
}

void write_measured(std::ostream& out, const std::vector<KernelOnRoofs>& kernels) {
  out << "<section id=\"measured\"><h2>Measured kernels (Nsight Compute)</h2>\n";
  std::vector<std::vector<Cell>> rows;
  for (const KernelOnRoofs& kernel : kernels) {
    rows.push_back(
        {{kernel.kernel.name},
         {kernel.flops_source},
         count(kernel.flops.si()),
         bytes(kernel.kernel.dram_bytes.si()),
         seconds(kernel.kernel.duration.si()),
         num(kernel.intensity, format_plain(kernel.intensity)),
         num(kernel.achieved.si(), format_quantity(kernel.achieved.si(), Dimension::flop_rate)),
         num(kernel.dram_fraction, fmt::format("{:.1f} %", 100.0 * kernel.dram_fraction)),
         {kernel.compute_path},
         num(kernel.compute_fraction, fmt::format("{:.1f} %", 100.0 * kernel.compute_fraction))});
  }
  write_table(out, "measured-table",
              {"kernel", "FLOPs from", "FLOPs#", "DRAM bytes#", "duration#", "FLOP/B#", "achieved#",
               "% of DRAM#", "roof", "% of roof#"},
              rows);
  out << "</section>\n";
}

}  // namespace

void write_run_html(std::ostream& out, const RunResult& run,
                    const std::vector<KernelOnRoofs>& kernels) {
  RooflineChart chart = roofline_of_run(run);
  add_measured(chart, kernels);
  open_document(out, chart.title, fmt::format("rsim report · {}", scenario_source(run.scenario)));
  write_scenario(out, run);
  out << "<section id=\"chart\"><h2>Roofline</h2><figure>\n"
      << render_roofline_svg(chart) << "</figure></section>\n";
  write_decode(out, run);
  write_stages(out, run);
  write_ops(out, run);
  if (!kernels.empty()) {
    write_measured(out, kernels);
  }
  write_roofs(out, run.roofs);
  write_text_section(out, "rsim run",
                     [&](std::ostream& stream) { write_run_text(stream, run, TextOptions{0}); });
  close_document(out);
}

void write_runs_html(std::ostream& out, const std::vector<RunResult>& runs,
                     const std::string& title) {
  const RunResult& baseline = runs.front();
  open_document(out, title, fmt::format("rsim report · {}", scenario_source(baseline.scenario)));
  write_scenario(out, baseline);
  out << "<section id=\"bars\"><h2>Time per plan or variant</h2><figure>\n"
      << render_bars_svg(bars_of_runs(runs, title)) << "</figure>\n";
  std::vector<std::vector<Cell>> rows;
  for (const RunResult& run : runs) {
    const Totals& totals = run.bounds.total;
    const Precision& precision = run.scenario.precision;
    rows.push_back({{run.scenario.variant.empty() ? "baseline" : run.scenario.variant},
                    {fmt::format("{} · {}", run.roofs.hardware, run.roofs.mode)},
                    {run.scenario.plan.devices() > 1 ? fmt::format("{} ×{}", run.scenario.plan.name,
                                                                   run.scenario.plan.devices())
                                                     : std::string("single")},
                    {fmt::format("{}/{}/{} → {}", to_string(precision.weights),
                                 to_string(precision.activations), to_string(precision.kv_cache),
                                 precision.compute)},
                    count(static_cast<double>(run.scenario.workload.batch)),
                    seconds(totals.t_math.si()),
                    seconds(totals.t_mem.si()),
                    seconds(totals.t_net.si()),
                    seconds(totals.t_lower.si()),
                    seconds(totals.t_upper.si()),
                    bound(totals.bound, bound_label(totals)),
                    bytes(run.footprint.weights.si()),
                    {run.footprint.fits() ? "yes" : "no"}});
  }
  write_table(
      out, "runs-table",
      {"variant", "hardware · mode", "plan", "precision (W/A/KV → path)", "batch#", "ΣT_math#",
       "ΣT_mem#", "ΣT_net#", "lower#", "upper#", "bound", "weights/device#", "fits"},
      rows);
  out << "</section>\n<section id=\"chart\"><h2>Roofline of the baseline</h2><figure>\n"
      << render_roofline_svg(roofline_of_run(baseline)) << "</figure></section>\n";
  write_roofs(out, baseline.roofs);
  write_text_section(out, "rsim", [&](std::ostream& stream) { write_whatif_text(stream, runs); });
  close_document(out);
}

void write_sweep_html(std::ostream& out, const SweepResult& result) {
  open_document(out, fmt::format("rsim sweep · {}", result.scenario),
                fmt::format("{} points on {} threads", result.points.size(), result.threads));
  if (std::any_of(result.axes.begin(), result.axes.end(),
                  [](const SweepAxis& axis) { return axis.numeric; })) {
    out << "<section id=\"chart\"><h2>Time against the swept parameter</h2><figure>\n"
        << render_series_svg(sweep_chart(result)) << "</figure></section>\n";
  }
  std::vector<std::string> headers;
  for (const SweepAxis& axis : result.axes) {
    headers.push_back(axis.numeric ? axis.key + "#" : axis.key);
  }
  for (const char* name :
       {"lower#", "upper#", "ΣT_math#", "ΣT_mem#", "ΣT_net#", "bound", "memory/device#", "fits"}) {
    headers.emplace_back(name);
  }
  std::vector<std::vector<Cell>> rows;
  for (std::size_t index = 0; index < result.points.size(); ++index) {
    const SweepPoint& point = result.points[index];
    if (!point.valid()) {
      continue;
    }
    std::vector<Cell> row;
    for (std::size_t axis = 0; axis < result.axes.size(); ++axis) {
      const std::string& value = result.value(index, axis);
      row.push_back(result.axes[axis].numeric ? count(std::stod(value)) : Cell{value});
    }
    const SweepFigures& total = point.total;
    for (const Seconds time :
         {total.t_lower, total.t_upper, total.t_math, total.t_mem, total.t_net}) {
      row.push_back(seconds(time.si()));
    }
    row.push_back(bound(total.bound, result.label(total.roof)));
    row.push_back(bytes(point.memory.si()));
    row.push_back({point.fits() ? "yes" : "no"});
    rows.push_back(std::move(row));
  }
  out << "<section id=\"points\"><h2>Grid</h2>\n";
  write_table(out, "points-table", headers, rows);
  out << "</section>\n";
  write_text_section(out, "rsim sweep",
                     [&](std::ostream& stream) { write_sweep_text(stream, result); });
  close_document(out);
}

}  // namespace rsim
