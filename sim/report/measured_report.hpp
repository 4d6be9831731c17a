// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/measured.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

namespace rsim {

/// Measured kernels against the roofs: FLOPs and where they came from, DRAM bytes, duration,
/// intensity, achieved FLOP/s and bandwidth, % of the DRAM slope and of the compute roof.
void write_measured_text(std::ostream& out, const std::vector<KernelOnRoofs>& kernels,
                         const Roofs& roofs);
/// The same as JSON records (SI units).
nlohmann::ordered_json measured_to_json(const std::vector<KernelOnRoofs>& kernels);

}  // namespace rsim
