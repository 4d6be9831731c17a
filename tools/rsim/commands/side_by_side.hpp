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

}  // namespace rsim::cli
