// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/analysis/threshold_search.hpp"
#include "test_paths.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rsim::test {

/// Runs a shipped scenario through the whole pipeline in its own mode, with `--set` overrides.
inline RunResult run_scenario(const std::string& name,
                              std::vector<std::pair<std::string, std::string>> sets = {}) {
  Scenario scenario =
      load_scenario(source_path("scenarios/" + name + ".yaml"), {std::move(sets), ""});
  Roofs roofs = scenario_roofs(scenario, "");
  return analyze(std::move(scenario), std::move(roofs));
}

/// A training test scenario, tests/data/train/FILE, with `--set` overrides, analyzed.
inline RunResult run_train(const std::string& file,
                           std::vector<std::pair<std::string, std::string>> sets = {}) {
  Scenario scenario = load_scenario(source_path("tests/data/train/" + file), {std::move(sets), ""});
  Roofs roofs = scenario_roofs(scenario, "");
  return analyze(std::move(scenario), std::move(roofs));
}

/// Roofs of a shipped hardware preset.
inline Roofs preset_roofs(const std::string& name, const RoofOverrides& overrides = {}) {
  return resolve_roofs(load_hardware(source_path("hardware/" + name + ".yaml")), "", overrides);
}

}  // namespace rsim::test
