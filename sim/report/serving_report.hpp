// SPDX-License-Identifier: MIT
#pragma once
// A serving run's report: latencies (TTFT, TPOT, end to end) at their mean and percentiles,
// throughput, KV-cache occupancy; as text, JSON (`serving`) and CSV.

#include "sim/explore/serving.hpp"
#include "sim/report/chart/series_chart.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rsim {

/// The simulation at the expected iteration times, and at their lower bounds (the best any
/// engine could do under this scheduler).
struct ServingRun {
  const Scenario* scenario = nullptr;
  ServingResult expected;
  ServingResult lower;
};

/// The JSON record `serving` (SI units).
nlohmann::ordered_json serving_json(const ServingResult& result);
/// The whole document: the scenario, then `serving` (expected) and `serving_at_lower_bound`.
nlohmann::ordered_json serving_run_to_json(const ServingRun& run);
void write_serving_text(std::ostream& out, const ServingRun& run);
/// One row per statistic (metric, mean, p50, p90, p99) for both clocks.
void write_serving_csv(std::ostream& out, const ServingRun& run);

/// The TTFT and TPOT over the requests' percentiles (a CDF turned on its side: x the share of
/// requests, y the latency), each a band from the lower-bound clock to the expected one.
SeriesChart serving_quantile_chart(const ServingRun& run);

/// One scenario of a side-by-side serving comparison (whatif's variants, compare's plans): its
/// simulation at the expected times, or why it could not be simulated.
struct ServingVariant {
  std::string name;  ///< "baseline", a variant's or a plan's name
  const Scenario* scenario = nullptr;
  std::optional<ServingResult> result;
  std::string why_not;  ///< where result is empty
};

/// The table (variant, plan, TTFT and TPOT p50 / p99, tokens/s, per device, goodput), JSON
/// (`variants`, each with its `serving` record) and CSV (one row per variant).
void write_serving_variants_text(std::ostream& out, const std::string& title,
                                 const std::vector<ServingVariant>& variants);
nlohmann::ordered_json serving_variants_to_json(const std::vector<ServingVariant>& variants);
void write_serving_variants_csv(std::ostream& out, const std::vector<ServingVariant>& variants);
/// A serving sweep over one numeric axis (the arrival rate): p99 TTFT and p99 TPOT against it,
/// saturated points left out (their latencies are unbounded); nullopt where the axis is not one
/// numeric key.
std::optional<SeriesChart> serving_sweep_chart(const std::string& title, const std::string& axis,
                                               const std::vector<double>& values,
                                               const std::vector<ServingVariant>& variants);

}  // namespace rsim
