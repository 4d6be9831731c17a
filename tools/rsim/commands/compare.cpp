// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/search.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <tuple>

namespace rsim::cli {
namespace {

// A variant that changes nothing but the plan: it belongs among the plans compared.
bool same_but_plan(const Scenario& variant, const Scenario& baseline) {
  const auto& [a, b] = std::tie(variant.precision, baseline.precision);
  return variant.hardware.file == baseline.hardware.file && variant.mode == baseline.mode &&
         variant.model.name == baseline.model.name &&
         variant.workload.phase == baseline.workload.phase &&
         variant.workload.batch == baseline.workload.batch &&
         variant.workload.seq_len == baseline.workload.seq_len &&
         variant.workload.context == baseline.workload.context &&
         variant.workload.decode_steps == baseline.workload.decode_steps &&
         a.weights == b.weights && a.activations == b.activations && a.kv_cache == b.kv_cache &&
         a.compute == b.compute && variant.roof_overrides.peaks.empty() &&
         variant.roof_overrides.bandwidths.empty() &&
         variant.plan.devices() == baseline.plan.devices();
}

struct CompareOptions {
  ScenarioOptions scenario;
  std::vector<std::string> plans;
};

int compare_command(const ScenarioOptions& options, const std::vector<std::string>& plans,
                    std::ostream& out) {
  std::vector<Scenario> scenarios;
  scenarios.push_back(load_scenario(options.scenario, scenario_overrides(options)));
  for (const std::string& plan : plans) {
    ScenarioOverrides overrides = scenario_overrides(options);
    overrides.sets.emplace_back("plan.preset", plan);
    Scenario scenario = load_scenario(options.scenario, overrides);
    scenario.variant = "plan " + plan;
    scenarios.push_back(std::move(scenario));
  }
  if (plans.empty()) {
    // No --plan: every preset the scenario's mesh takes and every variant of the file that
    // changes the plan alone, each plan once, named by all that make it.
    const Scenario baseline = scenarios.front();
    std::vector<MeshPlan> mesh_plans = plans_on_mesh(baseline);
    std::vector<std::vector<std::string>> variants(mesh_plans.size());
    const std::vector<Scenario> declared =
        load_scenario_variants(options.scenario, scenario_overrides(options));
    for (std::size_t index = 1; index < declared.size(); ++index) {
      const Scenario& variant = declared[index];
      if (!same_but_plan(variant, baseline)) {
        continue;
      }
      const std::string signature = plan_signature(variant.plan);
      const auto found = std::find_if(mesh_plans.begin(), mesh_plans.end(), [&](const auto& plan) {
        return plan_signature(plan.plan) == signature;
      });
      if (found == mesh_plans.end()) {
        mesh_plans.push_back({variant.plan, {}});
        variants.push_back({variant.variant});
      } else {
        variants[static_cast<std::size_t>(found - mesh_plans.begin())].push_back(variant.variant);
      }
    }
    const auto name = [&](std::size_t index) {
      std::vector<std::string> names;
      for (const std::string& preset : mesh_plans[index].presets) {
        names.push_back("plan " + preset);
      }
      for (const std::string& variant : variants[index]) {
        if (std::find(mesh_plans[index].presets.begin(), mesh_plans[index].presets.end(),
                      variant) == mesh_plans[index].presets.end()) {
          names.push_back("variant " + variant);
        }
      }
      return fmt::format("{}", fmt::join(names, " = "));
    };
    // The baseline row says its plan: the plan column is the first a narrow table hides.
    const std::string own = name(0);
    scenarios.front().variant = "baseline = " + (own.empty() ? "plan " + baseline.plan.name : own);
    for (std::size_t index = 1; index < mesh_plans.size(); ++index) {
      Scenario scenario = load_scenario(options.scenario, scenario_overrides(options));
      scenario.plan = mesh_plans[index].plan;
      scenario.variant = name(index);
      scenarios.push_back(std::move(scenario));
    }
    if (scenarios.size() == 1) {
      throw InputError(fmt::format(
          "rsim compare: {}'s plan ({}) leaves no other preset on its mesh to compare; give "
          "--plan PRESET, or a plan with a mesh (--set plan={{preset: megatron_tp, mesh: "
          "{{model: \"8 over nvlink\"}}}})",
          options.scenario, baseline.plan.name.empty() ? "single" : baseline.plan.name));
    }
  }
  const std::string title = "Plans: " + scenarios.front().name;
  if (scenarios.front().serving) {
    return emit_serving(options, scenarios, title, out);
  }
  std::vector<RunResult> runs;
  for (Scenario& scenario : scenarios) {
    runs.push_back(run_scenario(std::move(scenario), options));
  }
  return emit_runs(options, runs, title, out);
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
