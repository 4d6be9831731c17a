// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/measured.hpp"
#include "sim/analysis/request.hpp"
#include "sim/spec/hardware.hpp"

#include <string>
#include <vector>

namespace rsim::cli {

// --measured KERNELS.csv and --match PATTERN=OP (run, roofs): the kernels placed on the roofs,
// none without --measured.
std::vector<KernelOnRoofs> measured_kernels(const std::string& csv,
                                            const std::vector<std::string>& match_texts,
                                            const Roofs& roofs, const RunResult* run);

}  // namespace rsim::cli
