// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/request.hpp"
#include "sim/base/units.hpp"
#include "sim/explore/rank_by.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/scenario.hpp"

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace rsim::cli {

/// `->check(positive_number())`: a finite number > 0. CLI11's PositiveNumber answers
/// "Value 0 not in range 0.000000 to 1797693…"; this says what was expected and what came.
CLI::Validator positive_number();

/// `->check(non_negative_number())`: a finite number ≥ 0.
CLI::Validator non_negative_number();

struct RoofOptions {
  std::string calibration;  ///< --calibration: an overlay of fitted efficiencies (rsim calibrate)
  std::string mode;
  std::vector<std::string> peaks;
  std::vector<std::string> bandwidths;
  std::string format = "table";
};

void add_roof_options(CLI::App& command, RoofOptions& options);

std::pair<std::string, double> parse_assignment(const std::string& flag, const std::string& text,
                                                Dimension dimension);

RoofOverrides parse_overrides(const RoofOptions& options);

Roofs load_roofs(const std::string& hardware, const RoofOptions& options);

struct ScenarioOptions {
  std::string scenario;
  RoofOptions roofs;
  std::vector<std::string> sets;
  std::string precision;
  std::string plan;
  std::string variant;
  std::string plot;  ///< whatif, compare: stacked bars
  std::string html;
};

void add_scenario_options(CLI::App& command, ScenarioOptions& options);

void add_runs_chart_options(CLI::App& command, ScenarioOptions& options);

ScenarioOverrides scenario_overrides(const ScenarioOptions& options);

/// The options `rsim run` shares with the command that was given them (--mode, --peak,
/// --bandwidth, --set, --precision, --plan, --variant), as arguments.
std::vector<std::string> run_arguments(const ScenarioOptions& options);

RunResult run_scenario(Scenario scenario, const ScenarioOptions& options);

/// `--rank-by` on `command` into `text` (search and sweep; default expected).
void add_rank_by_option(CLI::App& command, std::string& text);
/// The option's value, or an InputError naming it and the choices.
RankBy parse_rank_by_option(const std::string& text);

}  // namespace rsim::cli
