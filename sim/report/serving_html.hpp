// SPDX-License-Identifier: MIT
#pragma once
// A serving run's HTML report: the latencies at both clocks as a sortable table, the TTFT / TPOT
// quantile chart (a CDF on its side), the throughput–latency curve over the load, and the text
// report. Side-by-side serving runs (whatif, compare, sweep) get their table and, for a sweep
// over the arrival rate, its curve.

#include "sim/report/serving_report.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rsim {

void write_serving_html(std::ostream& out, const ServingRun& run,
                        const std::vector<ServingLoadPoint>& curve);
void write_serving_variants_html(std::ostream& out, const std::string& title,
                                 const std::vector<ServingVariant>& variants,
                                 const std::optional<SeriesChart>& chart);

}  // namespace rsim
