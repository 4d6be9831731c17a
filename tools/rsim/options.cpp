// SPDX-License-Identifier: MIT
#include "options.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/catalog.hpp"
#include "sim/spec/efficiency.hpp"
#include "sim/spec/plan.hpp"
#include "sim/spec/presets.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

namespace rsim::cli {

namespace {

CLI::Validator number_at_least(double least, bool strict, const std::string& expected) {
  return CLI::Validator(
      [least, strict, expected](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size();
        if (whole && std::isfinite(value) && (strict ? value > least : value >= least)) {
          return {};
        }
        return fmt::format("expected {}, got '{}'", expected, text);
      },
      expected);
}

}  // namespace

CLI::Validator positive_number() { return number_at_least(0, true, "a number > 0"); }

CLI::Validator non_negative_number() { return number_at_least(0, false, "a number >= 0"); }

void add_roof_options(CLI::App& command, RoofOptions& options) {
  command.add_option("--mode", options.mode, "Power/clock mode (default: the hardware's default)");
  command.add_option("--peak", options.peaks,
                     "Override a compute peak: PATH=RATE, e.g. bf16=1e15 or fp8=\"455 TFLOP/s\"");
  command.add_option(
      "--bandwidth", options.bandwidths,
      "Override a memory bandwidth: TIER=RATE, e.g. hbm=8.1e11 or dram=\"200 GB/s\"");
  command.add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  command.add_option("--calibration", options.calibration,
                     "Apply fitted efficiencies (the YAML rsim calibrate writes) to the expected "
                     "time");
}

std::pair<std::string, double> parse_assignment(const std::string& flag, const std::string& text,
                                                Dimension dimension) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(fmt::format("{} {}: expected NAME=VALUE", flag, text));
  }
  const std::string name = text.substr(0, equals);
  const std::string value_text = text.substr(equals + 1);
  // On the command line a bare number is SI (FLOP/s or B/s), as in the scaling book's tables.
  double value = 0.0;
  const char* const end = value_text.data() + value_text.size();
  const auto [rest, error] = std::from_chars(value_text.data(), end, value);
  if (error == std::errc{} && rest == end && std::isfinite(value) && value > 0.0) {
    return {name, value};
  }
  if (const auto quantity = parse_quantity(value_text, dimension)) {
    return {name, *quantity};
  }
  throw InputError(fmt::format("{} {}: expected {} or a positive number in SI units", flag, text,
                               describe(dimension)));
}

RoofOverrides parse_overrides(const RoofOptions& options) {
  RoofOverrides overrides;
  for (const std::string& text : options.peaks) {
    const auto [name, value] = parse_assignment("--peak", text, Dimension::flop_rate);
    overrides.peaks.emplace_back(name, FlopsPerSecond(value));
  }
  for (const std::string& text : options.bandwidths) {
    const auto [name, value] = parse_assignment("--bandwidth", text, Dimension::byte_rate);
    overrides.bandwidths.emplace_back(name, BytesPerSecond(value));
  }
  return overrides;
}

Roofs load_roofs(const std::string& hardware, const RoofOptions& options) {
  HardwareSpec spec = load_hardware(find_preset(hardware, "hardware", {}));
  if (!options.calibration.empty()) {
    apply_calibration(options.calibration, spec);
  }
  return resolve_roofs(spec, options.mode, parse_overrides(options));
}

void add_scenario_options(CLI::App& command, ScenarioOptions& options) {
  command.add_option("SCENARIO", options.scenario, "Scenario YAML file")->required();
  add_roof_options(command, options.roofs);
  command.add_option("--set", options.sets,
                     "Override a scenario key before validation: KEY.PATH=VALUE, e.g. "
                     "workload.batch=8");
  command.add_option("--precision", options.precision,
                     "Use a precision policy: bf16, fp16, int8_weights, int8, fp8, fp4, nvfp4, "
                     "int4_weights");
}

void add_runs_chart_options(CLI::App& command, ScenarioOptions& options) {
  command.add_option(
      "--plot", options.plot,
      "Write stacked bars of ΣT_math / ΣT_mem / ΣT on-chip / ΣT_net per plan or variant as SVG "
      "to FILE (- draws them as text instead of the report)");
  command.add_option("--html", options.html,
                     "Write a self-contained HTML report (tables, bars, the baseline's roofline)");
}

ScenarioOverrides scenario_overrides(const ScenarioOptions& options) {
  ScenarioOverrides overrides;
  overrides.variant = options.variant;
  for (const std::string& text : options.sets) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError(fmt::format("--set {}: expected KEY.PATH=VALUE", text));
    }
    overrides.sets.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  if (!options.precision.empty()) {
    overrides.sets.emplace_back("precision", options.precision);
  }
  if (!options.plan.empty()) {
    // Checked here: an unknown name used to surface as "missing required key 'plan.mesh'".
    std::vector<std::string> names;
    for (const PlanPreset& preset : plan_presets()) {
      names.emplace_back(preset.name);
    }
    if (std::find(names.begin(), names.end(), options.plan) == names.end()) {
      const auto closest = closest_name(options.plan, names);
      throw InputError(fmt::format("--plan: no plan preset '{}'{} (presets: {})", options.plan,
                                   closest ? fmt::format("; did you mean '{}'?", *closest) : "",
                                   fmt::join(names, ", ")));
    }
    overrides.sets.emplace_back("plan.preset", options.plan);
  }
  if (!options.roofs.calibration.empty()) {
    // Relative to the working directory, as every path on the command line.
    overrides.sets.emplace_back("calibration",
                                std::filesystem::absolute(options.roofs.calibration).string());
  }
  return overrides;
}

RunResult run_scenario(Scenario scenario, const ScenarioOptions& options) {
  Roofs roofs = scenario_roofs(scenario, options.roofs.mode, parse_overrides(options.roofs));
  return analyze(std::move(scenario), std::move(roofs));
}

std::vector<std::string> run_arguments(const ScenarioOptions& options) {
  std::vector<std::string> args;
  const auto add = [&](std::string_view flag, const std::string& value) {
    if (!value.empty()) {
      args.emplace_back(flag);
      args.push_back(value);
    }
  };
  add("--calibration", options.roofs.calibration);
  add("--mode", options.roofs.mode);
  for (const std::string& peak : options.roofs.peaks) {
    add("--peak", peak);
  }
  for (const std::string& bandwidth : options.roofs.bandwidths) {
    add("--bandwidth", bandwidth);
  }
  for (const std::string& set : options.sets) {
    add("--set", set);
  }
  add("--precision", options.precision);
  add("--plan", options.plan);
  add("--variant", options.variant);
  return args;
}

void add_rank_by_option(CLI::App& command, std::string& text) {
  command.add_option("--rank-by", text,
                     "The time plans (search) or series (sweep's fastest) are ranked by: expected "
                     "(default: kernel efficiency, collective latency, the overlaps a plan names), "
                     "lower or upper bound");
}

RankBy parse_rank_by_option(const std::string& text) {
  const std::optional<RankBy> rank_by = parse_rank_by(text);
  if (!rank_by) {
    throw InputError(fmt::format("--rank-by {}: expected lower, expected or upper", text));
  }
  return *rank_by;
}

}  // namespace rsim::cli
