// SPDX-License-Identifier: MIT
#include "sim/explore/sweep_grid.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rsim {
namespace {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// LO..HI, LO..HI:STEP, LO..HI:log2 → the integer values, ascending.
std::vector<std::string> range_values(std::string_view spec, std::string_view where) {
  const std::size_t dots = spec.find("..");
  const std::size_t colon = spec.find(':');
  const auto low = parse_integer(spec.substr(0, dots));
  const auto high = parse_integer(spec.substr(
      dots + 2, colon == std::string_view::npos ? std::string_view::npos : colon - dots - 2));
  const std::string_view step_text =
      colon == std::string_view::npos ? std::string_view("1") : spec.substr(colon + 1);
  const bool doubling = step_text == "log2";
  const auto step = doubling ? std::optional<std::int64_t>(2) : parse_integer(step_text);
  if (!low || !high || !step || *low < 1 || *high < *low || *step < 1) {
    throw InputError(
        fmt::format("{}: '{}': expected LO..HI, LO..HI:STEP or LO..HI:log2 with "
                    "1 ≤ LO ≤ HI and STEP ≥ 1",
                    where, spec));
  }
  std::vector<std::string> values;
  for (std::int64_t value = *low; value <= *high; value = doubling ? value * 2 : value + *step) {
    values.push_back(std::to_string(value));
    if (values.size() > kMaxSweepPoints) {
      throw InputError(
          fmt::format("{}: '{}' has more than {} values", where, spec, kMaxSweepPoints));
    }
  }
  if (doubling && values.back() != std::to_string(*high)) {
    values.push_back(std::to_string(*high));  // log2 ranges end on HI
  }
  return values;
}

}  // namespace

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

ScenarioOverrides point_overrides(const ScenarioOverrides& base, const std::vector<SweepAxis>& axes,
                                  const std::vector<std::string>& values) {
  ScenarioOverrides overrides = base;
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    const std::string& key = axes[axis].key;
    if (key == "variant") {
      overrides.variant = values[axis] == "baseline" ? std::string() : values[axis];
    } else {
      overrides.sets.emplace_back(key == "plan" ? "plan.preset" : key, values[axis]);
    }
  }
  return overrides;
}

const std::string& grid_value(const std::vector<SweepAxis>& axes, std::size_t index,
                              std::size_t axis) {
  for (std::size_t later = axes.size(); --later > axis;) {
    index /= axes[later].values.size();
  }
  return axes[axis].values[index % axes[axis].values.size()];
}

std::vector<std::string> grid_values(const std::vector<SweepAxis>& axes, std::size_t index) {
  std::vector<std::string> values;
  values.reserve(axes.size());
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    values.push_back(grid_value(axes, index, axis));
  }
  return values;
}

SweepAxis parse_sweep_axis(std::string_view assignment, std::string_view origin) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == assignment.size()) {
    throw InputError(
        fmt::format("{} '{}': expected KEY=VALUES (e.g. workload.batch=1..4096:log2 "
                    "or variant=baseline,bf16)",
                    origin, assignment));
  }
  SweepAxis axis;
  axis.key = std::string(assignment.substr(0, equals));
  const std::string_view spec = assignment.substr(equals + 1);
  const std::string where = fmt::format("{} {}", origin, axis.key);
  axis.values =
      spec.find("..") != std::string_view::npos ? range_values(spec, where) : split(spec, ',');
  for (const std::string& value : axis.values) {
    if (value.empty()) {
      throw InputError(fmt::format("{}: an empty value in '{}'", where, spec));
    }
  }
  axis.numeric = std::all_of(axis.values.begin(), axis.values.end(),
                             [](const std::string& value) { return parse_integer(value); });
  return axis;
}

}  // namespace rsim
