// SPDX-License-Identifier: MIT
#pragma once
// The serving search's report: the deployments ranked by goodput per device under the SLO, the
// Pareto front of throughput per device against p99 TTFT, and the rejected plans.

#include "sim/explore/serving_search.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>

namespace rsim {

void write_serving_search_text(std::ostream& out, const Scenario& scenario,
                               const ServingSearchResult& search, std::size_t top);
nlohmann::ordered_json serving_search_to_json(const Scenario& scenario,
                                              const ServingSearchResult& search, std::size_t top);

}  // namespace rsim
