// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace rsim::cli {
namespace {

int whatif_command(const ScenarioOptions& options, std::ostream& out) {
  std::vector<Scenario> scenarios;
  if (options.variant.empty()) {
    scenarios = load_scenario_variants(options.scenario, scenario_overrides(options));
  } else {
    ScenarioOptions baseline = options;
    baseline.variant.clear();
    scenarios.push_back(load_scenario(options.scenario, scenario_overrides(baseline)));
    scenarios.push_back(load_scenario(options.scenario, scenario_overrides(options)));
  }
  if (scenarios.front().serving) {
    return emit_serving(options, scenarios, "What if: " + scenarios.front().name, out);
  }
  std::vector<RunResult> runs;
  for (Scenario& scenario : scenarios) {
    runs.push_back(run_scenario(std::move(scenario), options));
  }
  return emit_runs(options, runs, "What if: " + runs.front().scenario.name, out);
}

}  // namespace

Command add_whatif_command(CLI::App& app) {
  const auto options = std::make_shared<ScenarioOptions>();
  CLI::App* whatif = app.add_subcommand(
      "whatif", "Put a scenario's variants (precision, mode, batch, roofs) beside its baseline");
  add_scenario_options(*whatif, *options);
  whatif->add_option("--variant", options->variant,
                     "Compare one variant with the baseline (default: all)");
  whatif->add_option("--plan", options->plan, "Use a plan preset on the scenario's mesh");
  add_runs_chart_options(*whatif, *options);
  return {whatif, [options](std::ostream& out, std::ostream& /*err*/) {
            return whatif_command(*options, out);
          }};
}

}  // namespace rsim::cli
