// SPDX-License-Identifier: MIT
#pragma once

// The grid of a sweep: its axes, the values they take, and the grid points in index order (the
// last axis fastest), with the scenario overrides of a point.

#include "sim/spec/scenario.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// One swept parameter: a dotted scenario key (`workload.batch`, `precision`, `plan.preset`,
/// `mode`, `hardware`) or `variant`, and the values it takes, in order.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  bool numeric = false;  ///< every value an integer: crossovers are searched along it
};

/// Parses `KEY=SPEC`: SPEC is a list `a,b,c`, a range `LO..HI` (step 1), `LO..HI:STEP`, or
/// `LO..HI:log2` (LO, 2·LO, 4·LO, …, and HI). InputError naming `origin` otherwise.
SweepAxis parse_sweep_axis(std::string_view assignment, std::string_view origin);

/// A sweep over more points than this is almost certainly a typo in a range.
constexpr std::size_t kMaxSweepPoints = 1'000'000;

/// The whole number `text` is, if it is one.
std::optional<std::int64_t> parse_integer(std::string_view text);

/// The scenario overrides of one grid point: `variant` picks a variant, `plan` a plan preset,
/// every other key is a `--set` path.
ScenarioOverrides point_overrides(const ScenarioOverrides& base, const std::vector<SweepAxis>& axes,
                                  const std::vector<std::string>& values);

/// The value of `axis` at grid point `index` of `axes` (the last axis fastest).
const std::string& grid_value(const std::vector<SweepAxis>& axes, std::size_t index,
                              std::size_t axis);
/// Every axis' value at grid point `index` of `axes`, in axis order.
std::vector<std::string> grid_values(const std::vector<SweepAxis>& axes, std::size_t index);

}  // namespace rsim
