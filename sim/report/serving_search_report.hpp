// SPDX-License-Identifier: MIT
#pragma once
// The serving search's report: the deployments ranked by goodput per device under the SLO, the
// Pareto front of throughput per device against p99 TTFT, and the rejected plans.

#include "sim/explore/serving_search.hpp"
#include "sim/report/chart/series_chart.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>

namespace rsim {

void write_serving_search_text(std::ostream& out, const Scenario& scenario,
                               const ServingSearchResult& search, std::size_t top);
/// The Pareto front of throughput against latency at each deployment's SLO rate: output
/// tokens/s per device (x) against p99 TPOT (y), the front as a line, the others as points.
SeriesChart serving_pareto_chart(const Scenario& scenario, const ServingSearchResult& search);
nlohmann::ordered_json serving_search_to_json(const Scenario& scenario,
                                              const ServingSearchResult& search, std::size_t top);

}  // namespace rsim
