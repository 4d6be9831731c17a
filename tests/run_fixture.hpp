// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis.hpp"
#include "test_paths.hpp"

#include <string>

namespace rsim::test {

/// Runs a shipped scenario through the whole pipeline in its own mode.
inline RunResult run_scenario(const std::string& name) {
  Scenario scenario = load_scenario(source_path("scenarios/" + name + ".yaml"));
  Roofs roofs = resolve_roofs(scenario.hardware, scenario.mode);
  return analyze(std::move(scenario), std::move(roofs));
}

/// Roofs of a shipped hardware preset.
inline Roofs preset_roofs(const std::string& name, const RoofOverrides& overrides = {}) {
  return resolve_roofs(load_hardware(source_path("hardware/" + name + ".yaml")), "", overrides);
}

}  // namespace rsim::test
