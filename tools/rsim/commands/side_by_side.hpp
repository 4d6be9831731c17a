// SPDX-License-Identifier: MIT
#pragma once

#include "options.hpp"
#include "sim/analysis/request.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace rsim::cli {

// Runs side by side (whatif, compare): their charts, or the table / JSON / CSV.
int emit_runs(const ScenarioOptions& options, const std::vector<RunResult>& runs,
              const std::string& title, std::ostream& out);

// Serving scenarios side by side: each simulated (one that cannot be says why), then the table /
// JSON / CSV of their latencies and throughput.
// The numeric axis of a one-axis serving sweep, whose --plot draws p99 latency against it.
struct ServingAxis {
  std::string key;
  std::vector<double> values;  ///< one per scenario
};
int emit_serving(const ScenarioOptions& options, const std::vector<Scenario>& scenarios,
                 const std::string& title, std::ostream& out, const ServingAxis* axis = nullptr);

// Refuses a serving scenario for a command that costs a step (exit 2, naming what serves).
void refuse_serving(const Scenario& scenario, std::string_view command);

}  // namespace rsim::cli
