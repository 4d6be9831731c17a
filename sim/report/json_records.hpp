// SPDX-License-Identifier: MIT
#pragma once
// Record pieces the JSON writers share: json.cpp (runs), json_probes.cpp (matmul, threshold),
// search_report.cpp (a decode request per plan).

#include "sim/analysis/analysis.hpp"
#include "sim/analysis/decode.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace rsim {

/// A phase's lower, expected and upper times: {t_lower_s, t_expected_s, t_upper_s}.
nlohmann::ordered_json phase_json(PhaseTimes times);

/// A critical batch as JSON: its tokens, 1 when always past the ridge, null when never.
nlohmann::ordered_json critical_value(const std::optional<CriticalBatch>& critical);

/// Per memory tier: the bytes it serves and their time (× count), and the tile the tier inside
/// it holds ("tiles" is keyed by that inner tier).
void add_tier_records(nlohmann::ordered_json& record, const OpCost& cost, double count);

}  // namespace rsim
