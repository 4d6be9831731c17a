// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/analysis/request.hpp"
#include "sim/analysis/threshold_search.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/json.hpp"
#include "sim/report/text.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace rsim::cli {
namespace {

struct ThresholdOptions {
  ScenarioOptions scenario;
  std::string param = "batch";
  std::string roof = "memory";
  std::string scope;
  std::int64_t high = std::int64_t{1} << 24;
};

int threshold_command(const ThresholdOptions& options, std::ostream& out) {
  refuse_serving(load_scenario(options.scenario.scenario, scenario_overrides(options.scenario)),
                 "threshold");
  ThresholdQuery query;
  query.key = options.param;
  query.roof = options.roof == "network" ? Bound::network : Bound::memory;
  query.scope = options.scope;
  query.high = options.high;
  const ThresholdResult result =
      threshold_scenario(options.scenario.scenario, scenario_overrides(options.scenario), query,
                         options.scenario.roofs.mode, parse_overrides(options.scenario.roofs));
  return emit(
      options.scenario.roofs.format, out, [&] { return threshold_to_json(query, result); },
      [&](std::ostream& stream) { write_record_csv(stream, threshold_to_json(query, result)); },
      [&](std::ostream& stream) { write_threshold_text(stream, query, result); });
}

}  // namespace

Command add_threshold_command(CLI::App& app) {
  const auto options = std::make_shared<ThresholdOptions>();
  CLI::App* threshold = app.add_subcommand(
      "threshold",
      "Find where ΣT_math reaches the memory or network roof as batch or seq_len grows");
  add_scenario_options(*threshold, options->scenario);
  threshold->add_option("--variant", options->scenario.variant, "Use one of the variants");
  threshold->add_option("--plan", options->scenario.plan,
                        "Use a plan preset on the scenario's mesh");
  threshold->add_option("--param", options->param,
                        "batch (default), seq_len, or d_model (every stage's width)");
  threshold->add_option("--roof", options->roof, "memory (default) or network")
      ->check(CLI::IsMember({"memory", "network"}));
  threshold->add_option("--scope", options->scope,
                        "A matmul group of a stage, e.g. prefix/mlp (default: the whole run)");
  threshold->add_option("--max", options->high, "Search up to this value (default 2^24)")
      ->check(positive_number());
  return {threshold, [options](std::ostream& out, std::ostream& /*err*/) {
            return threshold_command(*options, out);
          }};
}

}  // namespace rsim::cli
