// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/analysis/threshold_search.hpp"

#include <nlohmann/json.hpp>

namespace rsim {

/// The version of the run and what-if JSON documents' layout (their `schema_version`).
inline constexpr int kRunJsonSchemaVersion = 1;

/// Machine-readable run: SI numbers, keys suffixed with their unit where not FLOPs or bytes.
nlohmann::ordered_json run_to_json(const RunResult& result);
nlohmann::ordered_json roofs_to_json(const Roofs& roofs);
nlohmann::ordered_json matmul_to_json(const MatmulResult& result);
nlohmann::ordered_json collective_to_json(const CollectiveResult& result);
nlohmann::ordered_json threshold_to_json(const ThresholdQuery& query,
                                         const ThresholdResult& result);
/// The baseline and its variants side by side (`rsim whatif`); runs[0] is the baseline.
nlohmann::ordered_json whatif_to_json(const std::vector<RunResult>& runs);
/// The flat record of one what-if row (a JSON "variants" entry less its critical batches; a CSV
/// row).
nlohmann::ordered_json variant_record(const RunResult& run, const RunResult& baseline);

/// The flat record of one op (totals over its `count` instances; `expected`: one instance's
/// expected time); rsim's JSON "ops" entries and CSV rows are both this record.
nlohmann::ordered_json op_record(const Op& op, const OpCost& cost, double expected,
                                 const std::optional<CriticalBatch>& critical);
/// A stage's, block's or run's totals: FLOPs, bytes and times (Σ over its ops), the bound, and
/// the bytes and times per memory and network tier.
nlohmann::ordered_json totals_json(const Totals& totals);
/// The flat record of one (compute path, memory tier) ridge.
nlohmann::ordered_json ridge_record(const Roofs& roofs, const Ridge& ridge);

/// The key path ("ops[3].t_math_s") of the first inf or NaN in `json`, or nullopt. A JSON writer
/// prints both as null, which a reader takes for "not applicable" (issue 23: no inf or NaN may
/// reach an output); the CLI refuses to print a document that has one.
std::optional<std::string> find_non_finite(const nlohmann::ordered_json& json);

}  // namespace rsim
