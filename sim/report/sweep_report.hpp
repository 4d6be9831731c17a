// SPDX-License-Identifier: MIT
#pragma once

#include "sim/explore/sweep.hpp"
#include "sim/report/chart/series_chart.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

namespace rsim {

/// The grid as a table (one row per point: the swept values, bounds, roof, memory) and the
/// crossovers found between grid values.
void write_sweep_text(std::ostream& out, const SweepResult& result);
/// Every point and crossover in SI units.
nlohmann::ordered_json sweep_to_json(const SweepResult& result);
/// One line per point: the swept values, then the figures in SI units.
void write_sweep_csv(std::ostream& out, const SweepResult& result);

/// Time against the first numeric axis, one band (lower … upper) per combination of the other
/// axes, at the values where every series is a valid scenario; the crossovers of the fastest
/// series that the sweep found by bisection are marked. InputError without a numeric axis.
SeriesChart sweep_chart(const SweepResult& result);

}  // namespace rsim
