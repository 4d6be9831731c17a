// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/measured_kernels.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/explain.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/chart/text_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/html.hpp"
#include "sim/report/json.hpp"
#include "sim/report/measured_report.hpp"
#include "sim/report/serving_html.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/report/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace rsim::cli {
namespace {

struct RunOptions {
  ScenarioOptions scenario;
  std::string explain;
  std::size_t top = 15;
  std::string plot;
  std::string html;
  std::string measured;
  std::vector<std::string> matches;
};

// A serving scenario: the simulation at the iterations' expected times and at their bounds.
int serve_command(const RunOptions& options, const Scenario& scenario, std::ostream& out) {
  for (const auto& [flag, given] : {std::pair{"--explain", !options.explain.empty()},
                                    std::pair{"--plot -", options.plot == "-"},
                                    std::pair{"--measured", !options.measured.empty()}}) {
    if (given) {
      throw InputError(
          fmt::format("{}: {} is for a step; a serving scenario reports its "
                      "request stream (see --format json, --html FILE, --plot FILE.svg)",
                      scenario.file, flag));
    }
  }
  const Roofs roofs = scenario_roofs(scenario, options.scenario.roofs.mode,
                                     parse_overrides(options.scenario.roofs));
  ServingRun run;
  run.scenario = &scenario;
  const ServingCosts costs = build_serving_costs(scenario, roofs);
  run.expected = simulate_serving(scenario, roofs, costs, ServingClock::expected);
  run.lower = simulate_serving(scenario, roofs, costs, ServingClock::lower);
  write_html(options.html, [&](std::ostream& stream) {
    write_serving_html(stream, run, serving_load_curve(scenario, roofs, costs));
  });
  if (!options.plot.empty()) {
    // The TTFT and TPOT quantile curves (an SVG file; the report is printed as well).
    write_file("--plot", options.plot, render_series_svg(serving_quantile_chart(run)));
  }
  return emit(
      options.scenario.roofs.format, out, [&] { return serving_run_to_json(run); },
      [&](std::ostream& stream) { write_serving_csv(stream, run); },
      [&](std::ostream& stream) { write_serving_text(stream, run); });
}

int run_command(const RunOptions& options, std::ostream& out) {
  Scenario scenario =
      load_scenario(options.scenario.scenario, scenario_overrides(options.scenario));
  if (scenario.serving) {
    return serve_command(options, scenario, out);
  }
  const RunResult result = run_scenario(std::move(scenario), options.scenario);
  if (!options.explain.empty()) {
    const Op& op =
        result.graph.op(find_explained_op(result.graph, result.table.order, options.explain));
    for (const std::string& line : explain_op(op, result.roofs, result.scenario.tiles)) {
      out << line << '\n';
    }
    return kExitOk;
  }
  const std::vector<KernelOnRoofs> kernels =
      measured_kernels(options.measured, options.matches, result.roofs, &result);
  write_html(options.html, [&](std::ostream& stream) { write_run_html(stream, result, kernels); });
  RooflineChart chart = roofline_of_run(result);
  add_measured(chart, kernels);
  if (plot(
          options.plot, out, [&] { return render_roofline_svg(chart); },
          [&] { return render_roofline_text(chart); })) {
    return kExitOk;
  }
  return emit(
      options.scenario.roofs.format, out,
      [&] {
        nlohmann::ordered_json json = run_to_json(result);
        if (!options.measured.empty()) {
          json["measured"] = measured_to_json(kernels);
        }
        return json;
      },
      [&](std::ostream& stream) { write_run_csv(stream, result); },
      [&](std::ostream& stream) {
        write_run_text(stream, result, TextOptions{options.top});
        if (!kernels.empty()) {
          stream << '\n';
          write_measured_text(stream, kernels, result.roofs);
        }
      });
}

}  // namespace

Command add_run_command(CLI::App& app) {
  const auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Cost a scenario op by op against its roofs");
  add_scenario_options(*run, options->scenario);
  run->add_option("--variant", options->scenario.variant, "Run one of the scenario's variants");
  run->add_option("--plan", options->scenario.plan,
                  "Use a plan preset on the scenario's mesh (e.g. megatron_tp, fsdp, shard_d)");
  run->add_option("--explain", options->explain,
                  "Print one op's formulas with the numbers put in (e.g. prefix/layer/qkv_proj)");
  run->add_option("--top", options->top, "Rows in the top-ops table (0 = all)");
  run->add_option("--plot", options->plot,
                  "Write the roofline chart as SVG to FILE (- draws a text chart on stdout "
                  "instead of the report)");
  run->add_option("--html", options->html,
                  "Write a self-contained HTML report: scenario, roofs, chart, sortable tables");
  run->add_option("--measured", options->measured,
                  "Place Nsight Compute kernels on the roofs: an ncu --csv export (long layout) "
                  "with gpu__time_duration.sum, dram__bytes_read.sum, dram__bytes_write.sum");
  run->add_option("--match", options->matches,
                  "Give kernels whose name contains PATTERN the FLOPs of rsim op OP: "
                  "PATTERN=OP, e.g. gemm_0=prefix/layer/gate_up_proj (repeatable)");
  return {run, [options](std::ostream& out, std::ostream& /*err*/) {
            return run_command(*options, out);
          }};
}

}  // namespace rsim::cli
