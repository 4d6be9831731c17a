// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/search.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace rsim::cli {
namespace {

struct CompareOptions {
  ScenarioOptions scenario;
  std::vector<std::string> plans;
};

int compare_command(const ScenarioOptions& options, const std::vector<std::string>& plans,
                    std::ostream& out) {
  std::vector<RunResult> runs;
  runs.push_back(
      run_scenario(load_scenario(options.scenario, scenario_overrides(options)), options));
  for (const std::string& plan : plans) {
    ScenarioOverrides overrides = scenario_overrides(options);
    overrides.sets.emplace_back("plan.preset", plan);
    Scenario scenario = load_scenario(options.scenario, overrides);
    scenario.variant = "plan " + plan;
    runs.push_back(run_scenario(std::move(scenario), options));
  }
  if (plans.empty()) {
    // No --plan: every preset the scenario's mesh takes, each plan once.
    const Scenario& baseline = runs.front().scenario;
    for (const Plan& plan : plans_on_mesh(baseline)) {
      Scenario scenario = load_scenario(options.scenario, scenario_overrides(options));
      scenario.plan = plan;
      scenario.variant = "plan " + plan.name;
      runs.push_back(run_scenario(std::move(scenario), options));
    }
    if (runs.size() == 1) {
      throw InputError(fmt::format(
          "rsim compare: {}'s plan ({}) leaves no other preset on its mesh to compare; give "
          "--plan PRESET, or a plan with a mesh (--set plan={{preset: megatron_tp, mesh: "
          "{{model: \"8 over nvlink\"}}}})",
          options.scenario, baseline.plan.name.empty() ? "single" : baseline.plan.name));
    }
  }
  return emit_runs(options, runs, "Plans: " + runs.front().scenario.name, out);
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  const auto options = std::make_shared<CompareOptions>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Put plan presets side by side on a scenario's mesh (per-device times)");
  add_scenario_options(*compare, options->scenario);
  compare->add_option("--plan", options->plans,
                      "A plan preset to compare against the scenario's own plan (repeatable: "
                      "rsim list plans); none: every preset the scenario's mesh takes, each "
                      "plan once");
  add_runs_chart_options(*compare, options->scenario);
  return {compare, [options](std::ostream& out, std::ostream& /*err*/) {
            return compare_command(options->scenario, options->plans, out);
          }};
}

}  // namespace rsim::cli
