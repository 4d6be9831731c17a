// SPDX-License-Identifier: MIT
#include "sim/explore/sweep.hpp"

#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "sim/base/error.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/html.hpp"
#include "sim/report/sweep_report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>

namespace rsim::cli {
namespace {

struct SweepOptionsCli {
  ScenarioOptions scenario;
  std::vector<std::string> over;
  std::int64_t threads = 0;
  bool no_crossovers = false;
  std::string rank_by = "expected";
  std::string plot;
  std::string html;
  std::string shard;
};

// A serving scenario's sweep (the throughput–latency curve over workload.arrivals.rate, the
// scheduler's caps): every grid point simulated, one row each.
int sweep_serving(const SweepOptionsCli& options, const std::vector<SweepAxis>& axes,
                  std::ostream& out) {
  if (axes.empty()) {
    throw InputError(
        "a sweep needs at least one axis: --over KEY=VALUES (e.g. "
        "workload.arrivals.rate=1,2,4,8)");
  }
  if (!options.shard.empty()) {
    throw InputError("--shard: a serving sweep runs in one process");
  }
  std::size_t points = 1;
  for (const SweepAxis& axis : axes) {
    points *= axis.values.size();
    if (points > 10'000) {
      throw InputError(
          fmt::format("a serving sweep of more than 10,000 points ({}...): each "
                      "point simulates the whole request stream",
                      points));
    }
  }
  std::vector<Scenario> scenarios;
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::size_t point = 0; point < points; ++point) {
    ScenarioOverrides overrides = scenario_overrides(options.scenario);
    std::vector<std::string> name;
    for (std::size_t axis = 0; axis < axes.size(); ++axis) {
      const std::string& value = axes[axis].values[index[axis]];
      overrides.sets.emplace_back(axes[axis].key, value);
      name.push_back(fmt::format("{}={}", axes[axis].key, value));
    }
    Scenario scenario = load_scenario(options.scenario.scenario, overrides);
    scenario.variant = fmt::format("{}", fmt::join(name, " "));
    scenarios.push_back(std::move(scenario));
    // The last axis fastest, as the step sweeps order their grid.
    for (std::size_t axis = axes.size(); axis-- > 0;) {
      if (++index[axis] < axes[axis].values.size()) {
        break;
      }
      index[axis] = 0;
    }
  }
  ScenarioOptions scenario_options = options.scenario;
  scenario_options.plot = options.plot;
  scenario_options.html = options.html;
  std::optional<ServingAxis> axis;
  if (axes.size() == 1) {
    axis = ServingAxis{axes.front().key, {}};
    for (const std::string& value : axes.front().values) {
      double number = 0.0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (error != std::errc{} || end != value.data() + value.size()) {
        axis.reset();
        break;
      }
      axis->values.push_back(number);
    }
  }
  return emit_serving(scenario_options, scenarios, "Sweep: " + scenarios.front().name, out,
                      axis ? &*axis : nullptr);
}

int sweep_command(const SweepOptionsCli& options, std::ostream& out, std::ostream& err) {
  std::vector<SweepAxis> axes;
  for (const std::string& text : options.over) {
    axes.push_back(parse_sweep_axis(text, "--over"));
  }
  const Scenario baseline =
      load_scenario(options.scenario.scenario, scenario_overrides(options.scenario));
  if (axes.empty()) {
    for (const auto& [assignment, origin] : baseline.sweep) {
      axes.push_back(parse_sweep_axis(assignment, origin));
    }
  }
  if (baseline.serving) {
    return sweep_serving(options, axes, out);
  }
  SweepOptions sweep;
  sweep.threads = options.threads;
  sweep.crossovers = !options.no_crossovers;
  sweep.rank_by = parse_rank_by_option(options.rank_by);
  sweep.progress = progress_bar(err);
  sweep.loading_progress = progress_bar(err, "scenarios loaded");
  sweep.shard = options.shard.empty() ? Shard{} : parse_shard(options.shard, "--shard");
  if (sweep.shard.requested && options.scenario.roofs.format != "json") {
    throw InputError(fmt::format(
        "--shard {}: a shard writes JSON for rsim merge; add --format json", options.shard));
  }
  if (sweep.shard.requested && (!options.plot.empty() || !options.html.empty())) {
    throw InputError(
        "--shard: a shard has a slice of the grid; draw --plot and --html from "
        "rsim merge's output");
  }
  sweep.cancel = &sweep_interrupted;
  SweepResult result;
  {
    const InterruptScope interrupt;
    result = run_sweep(options.scenario.scenario, scenario_overrides(options.scenario), axes,
                       options.scenario.roofs.mode, parse_overrides(options.scenario.roofs), sweep);
  }
  if (options.plot == "-") {
    throw InputError(
        "--plot -: sweeps draw SVG only (--plot FILE.svg); the table is the text view");
  }
  if (!options.plot.empty()) {
    write_file("--plot", options.plot, render_series_svg(sweep_chart(result)));
  }
  write_html(options.html, [&](std::ostream& stream) { write_sweep_html(stream, result); });
  const int code = emit(
      options.scenario.roofs.format, out,
      [&] {
        nlohmann::ordered_json json = sweep_to_json(result);
        if (json.contains("shard")) {
          // What rsim merge needs to find the crossovers on the whole grid.
          json["shard"]["arguments"] = run_arguments(options.scenario);
          json["shard"]["crossovers"] = sweep.crossovers;
        }
        return json;
      },
      [&](std::ostream& stream) { write_sweep_csv(stream, result); },
      [&](std::ostream& stream) { write_sweep_text(stream, result); });
  if (result.cancelled) {
    return kExitInterrupted;
  }
  // A grid of nothing but invalid points answers nothing (issue 23 #6: it exited 0); the
  // report above says why each failed.
  // A shard answers for its slice only (which may be empty: more shards than points).
  const auto [first, end] = result.shard.slice(result.points.size());
  const auto begin = result.points.begin();
  const bool any_valid = std::any_of(
      begin + static_cast<std::ptrdiff_t>(first), begin + static_cast<std::ptrdiff_t>(end),
      [](const SweepPoint& point) { return point.evaluated && point.error == 0; });
  if (end > first && !any_valid) {
    err << fmt::format(
        "rsim: error: every one of the {} points is invalid (see each point's "
        "reason above)\n",
        end - first);
    return kExitInput;
  }
  return code;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  const auto options = std::make_shared<SweepOptionsCli>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Evaluate a scenario over a grid of parameters (in parallel) and find crossovers");
  add_scenario_options(*sweep, options->scenario);
  sweep->add_option("--variant", options->scenario.variant, "Start from one of the variants");
  sweep->add_option("--plan", options->scenario.plan, "Use a plan preset on the mesh");
  sweep->add_option("--over", options->over,
                    "A swept parameter KEY=VALUES (repeatable; the grid is their product). KEY: a "
                    "scenario key (workload.batch, precision, plan, mode, hardware, …) or variant; "
                    "VALUES: a,b,c or LO..HI, LO..HI:STEP, LO..HI:log2. Default: the scenario's "
                    "sweep: block");
  sweep->add_option("--threads", options->threads, "Worker threads (default: all cores)")
      ->check(non_negative_number());
  add_rank_by_option(*sweep, options->rank_by);
  sweep->add_flag("--no-crossovers", options->no_crossovers,
                  "Skip the crossover search between grid values");
  sweep->add_option("--shard", options->shard,
                    "Evaluate only the K-th of N contiguous slices of the grid (K/N, K from 1), "
                    "as JSON; rsim merge joins the N outputs");
  sweep->add_option("--plot", options->plot,
                    "Write the time-vs-parameter chart (SVG): a lower…upper band per series along "
                    "the first numeric axis, crossovers marked");
  sweep->add_option("--html", options->html,
                    "Write a self-contained HTML report: the chart and the grid, sortable");
  return {sweep, [options](std::ostream& out, std::ostream& err) {
            return sweep_command(*options, out, err);
          }};
}

}  // namespace rsim::cli
