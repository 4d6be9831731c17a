// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rsim {

/// What a plan search ranks by: the lower bound (latency), sequences per device-second
/// (throughput), or device-seconds per sequence (cost: devices × lower bound / batch, the
/// reciprocal of throughput, reported as what a sequence costs in accelerator time).
enum class SearchObjective { latency, throughput, cost };
std::optional<SearchObjective> parse_search_objective(std::string_view name);
std::string_view to_string(SearchObjective objective);

/// One costed plan of a search: `devices` run one copy of the scenario's batch, and the N
/// devices of the search hold N / devices such replicas.
struct SearchCandidate {
  std::string preset;
  std::string mesh;  ///< "data: 4 over ib, model: 8 over nvlink"
  std::int64_t devices = 1;
  std::int64_t replicas = 1;
  Totals total;
  Footprint footprint;
  double sequences_per_device_s = 0.0;  ///< batch / (lower bound × devices)
  bool pareto = false;  ///< no other plan is both faster and does more work per device
};

/// A plan the search could not cost, and why (one of a few stated reasons).
struct SearchRejection {
  std::string preset;
  std::string mesh;
  std::string reason;  ///< "does not divide", "does not fit in memory", "mesh does not fit"
  std::string detail;  ///< the error message or the numbers
};

struct SearchResult {
  std::string scenario;
  std::int64_t devices = 1;
  SearchObjective objective = SearchObjective::latency;
  std::int64_t seen = 0;
  std::vector<SearchCandidate> ranked;  ///< best first (ties: upper bound, then preset, mesh)
  std::vector<SearchRejection> rejected;
};

/// Every inference plan for `devices` devices: each n dividing `devices` (n devices per
/// replica), each factorization n = data × model, the model (tensor) axis placed inside the
/// innermost network tier first (NVLink node, ICI slice), the data axis on what is left, and each
/// plan preset that fits the mesh's shape; plans that do not divide the model or do not fit in
/// memory are rejected with their reason, the rest costed, ranked and marked on the Pareto front
/// of latency against sequences per device-second. Deterministic: same input, same ranking.
SearchResult search_plans(const Scenario& scenario, const Roofs& roofs, std::int64_t devices,
                          SearchObjective objective);

}  // namespace rsim
