// SPDX-License-Identifier: MIT
#pragma once
// Record pieces json.cpp (runs) and json_probes.cpp (matmul, threshold) both write.

#include "sim/analysis/analysis.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace rsim {

/// A critical batch as JSON: its tokens, 1 when always past the ridge, null when never.
nlohmann::ordered_json critical_value(const std::optional<CriticalBatch>& critical);

/// Per memory tier: the bytes it serves and their time (× count), and the tile the tier inside
/// it holds ("tiles" is keyed by that inner tier).
void add_tier_records(nlohmann::ordered_json& record, const OpCost& cost, double count);

}  // namespace rsim
