// SPDX-License-Identifier: MIT
#include "sim/explore/calibrate.hpp"

#include "sim/analysis/analysis.hpp"
#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/csv.hpp"
#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/expected.hpp"
#include "sim/cost/gemm_quantization.hpp"
#include "sim/explore/calibrate_ncu.hpp"
#include "sim/explore/calibration_terms.hpp"
#include "sim/spec/presets.hpp"
#include "sim/spec/scenario.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

namespace rsim {
namespace {

using calibration::CollectiveTerm;
using calibration::device_term;
using calibration::DeviceTerm;
using calibration::fail;
using calibration::Measurement;
using calibration::Parameters;

// The expected time of `measurement` at `x`, and (if given) its coefficient per parameter: the
// binding roof of each device op is decided at `x`.
double expected_at(const Measurement& measurement, const Eigen::VectorXd& x,
                   Eigen::VectorXd* coefficients, std::size_t overhead) {
  double total = measurement.fixed;
  for (const DeviceTerm& term : measurement.devices) {
    // A serial term's compute roof always counts; the longest of the rest is added to it.
    const std::size_t first = term.serial ? 1 : 0;
    double math = 0.0;
    if (term.serial) {
      const auto& [parameter, time] = term.roofs.front();
      math = time * x(static_cast<Eigen::Index>(parameter));
      if (coefficients != nullptr) {
        (*coefficients)(static_cast<Eigen::Index>(parameter)) += term.count * time;
      }
    }
    double longest = 0.0;
    std::optional<std::pair<std::size_t, double>> binding;
    for (std::size_t roof = first; roof < term.roofs.size(); ++roof) {
      const auto& [parameter, time] = term.roofs[roof];
      const double scaled = time * x(static_cast<Eigen::Index>(parameter));
      if (scaled > longest) {
        longest = scaled;
        binding = {parameter, time};
      }
    }
    const double busy = math + longest;
    const bool launch = term.launches && busy > 0.0;
    total += term.count * (busy + (launch ? x(static_cast<Eigen::Index>(overhead)) : 0.0));
    if (coefficients != nullptr && binding) {
      (*coefficients)(static_cast<Eigen::Index>(binding->first)) += term.count * binding->second;
    }
    if (coefficients != nullptr && launch) {
      (*coefficients)(static_cast<Eigen::Index>(overhead)) += term.count;
    }
  }
  for (const CollectiveTerm& term : measurement.collectives) {
    total += term.count * (x(static_cast<Eigen::Index>(term.latency)) +
                           term.bandwidth * x(static_cast<Eigen::Index>(term.fraction)));
    if (coefficients != nullptr) {
      (*coefficients)(static_cast<Eigen::Index>(term.latency)) += term.count;
      (*coefficients)(static_cast<Eigen::Index>(term.fraction)) += term.count * term.bandwidth;
    }
  }
  return total;
}

void add_run(const RunResult& run, Measurement& measurement, Parameters& parameters) {
  const CostTable& table = run.table;
  const Roofs& roofs = run.roofs;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const auto index = static_cast<Eigen::Index>(row);
    const Op& op = run.graph.op(table.order[row]);
    const double count = table.counts(index);
    if (op.kind == OpKind::collective) {
      const std::vector<const NetworkTier*> tiers = roofs.find_networks(op.network);
      if (tiers.size() != 1) {
        measurement.fixed += count * table.expected(index);
        continue;
      }
      const NetworkTier& tier = *tiers.front();
      const CollectiveCost cost = collective_cost(op.collective, tiers, false);
      CollectiveTerm term;
      term.count = count;
      term.bandwidth = cost.bandwidth_time.si();
      measurement.fixed +=
          count *
          (tier.hop_latency ? tier.hop_latency->si() * static_cast<double>(cost.hops) : 0.0);
      term.fraction = parameters.index("network." + tier.name, true, tier.efficiency);
      term.latency =
          parameters.index("network." + tier.name + ".latency", false, tier.call_latency.si());
      measurement.collectives.push_back(term);
      continue;
    }
    std::vector<double> tiers(roofs.memory.size());
    for (std::size_t tier = 0; tier < tiers.size(); ++tier) {
      tiers[tier] = table.times(index, CostTable::tier_column(tier));
    }
    measurement.devices.push_back(device_term(op, count, table.times(index, CostTable::kMathColumn),
                                              tiers, roofs, parameters));
  }
}

struct Layout {
  enum class Kind { matmul, scenario } kind = Kind::matmul;
  std::map<std::string, std::size_t> columns;
};

Layout read_header(const std::vector<std::string>& header, const std::string& file) {
  Layout layout;
  for (std::size_t column = 0; column < header.size(); ++column) {
    layout.columns[header[column]] = column;
  }
  const auto has = [&](std::initializer_list<const char*> names) {
    return std::all_of(names.begin(), names.end(),
                       [&](const char* name) { return layout.columns.contains(name); });
  };
  if (has({"hardware", "b", "d", "f", "dtype", "measured_s"})) {
    layout.kind = Layout::Kind::matmul;
  } else if (has({"scenario", "set", "measured_s"})) {
    layout.kind = Layout::Kind::scenario;
  } else {
    fail(file, 1,
         fmt::format("header '{}': expected the columns hardware,b,d,f,dtype,measured_s (one GEMM "
                     "per row) or scenario,set,measured_s (one scenario per row)",
                     fmt::join(header, ",")));
  }
  return layout;
}

double positive_number(const std::string& text, const std::string& column, const std::string& file,
                       int line) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value) || value <= 0.0) {
    fail(file, line, fmt::format("{} '{}': expected a positive number", column, text));
  }
  return value;
}

std::int64_t positive_count(const std::string& text, const std::string& column,
                            const std::string& file, int line) {
  const double value = positive_number(text, column, file, line);
  if (value != std::floor(value) || value > 9.0e15) {
    fail(file, line, fmt::format("{} '{}': expected a whole number ≥ 1", column, text));
  }
  return static_cast<std::int64_t>(value);
}

// One GEMM row: its roofs and expected time as `rsim matmul` costs it.
Roofs add_matmul_row(const std::vector<std::string>& fields, const Layout& layout,
                     const std::filesystem::path& csv, int line, Measurement& measurement,
                     Parameters& parameters) {
  const std::string file = csv.string();
  const auto field = [&](const char* name) { return fields[layout.columns.at(name)]; };
  Roofs roofs;
  try {
    roofs = resolve_roofs(load_hardware(find_preset(field("hardware"), "hardware", csv)), "", {});
  } catch (const InputError& error) {
    fail(file, line, error.what());
  }
  MatmulShape shape;
  shape.batch = positive_count(field("b"), "b", file, line);
  shape.contract = positive_count(field("d"), "d", file, line);
  shape.out = positive_count(field("f"), "f", file, line);
  const std::optional<DType> dtype = parse_dtype(field("dtype"));
  if (!dtype) {
    fail(file, line,
         fmt::format("dtype '{}': expected one of {}", field("dtype"),
                     fmt::join(dtype_names(), ", ")));
  }
  shape.input = shape.weights = shape.output = *dtype;
  shape.compute_path = std::string(default_compute_path(*dtype));
  MatmulResult result;
  try {
    result = analyze_matmul(shape, roofs);
  } catch (const InputError& error) {
    fail(file, line, error.what());
  }
  std::vector<double> tiers;
  for (const TierCost& tier : result.cost.tiers) {
    tiers.push_back(tier.time.si());
  }
  measurement.label = fmt::format("{}:{} ({} {}×{}×{} {})", file, line, field("hardware"),
                                  shape.batch, shape.contract, shape.out, field("dtype"));
  measurement.devices.push_back(
      device_term(result.op, 1.0, result.cost.t_math.si(), tiers, result.roofs, parameters));
  return result.roofs;
}

// One scenario row: an inference run's per-op expected times.
Roofs add_scenario_row(const std::vector<std::string>& fields, const Layout& layout,
                       const std::filesystem::path& csv, int line, Measurement& measurement,
                       Parameters& parameters) {
  const std::string file = csv.string();
  std::filesystem::path path = fields[layout.columns.at("scenario")];
  if (path.is_relative()) {
    path = csv.parent_path() / path;
  }
  ScenarioOverrides overrides;
  const std::string& sets = fields[layout.columns.at("set")];
  for (std::size_t start = 0; start < sets.size();) {
    const std::size_t end = std::min(sets.find(';', start), sets.size());
    const std::string assignment = sets.substr(start, end - start);
    const std::size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      fail(file, line, fmt::format("set '{}': expected KEY=VALUE[;KEY=VALUE…]", assignment));
    }
    overrides.sets.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
    start = end + 1;
  }
  Scenario scenario;
  try {
    scenario = load_scenario(path, overrides);
  } catch (const InputError& error) {
    fail(file, line, error.what());
  }
  if (scenario.workload.phase == Phase::train || scenario.workload.decode_steps > 0) {
    fail(file, line,
         fmt::format("{}: a {} is a schedule of its ops, not their sum; calibrate from GEMMs, "
                     "prefills or single decode steps",
                     path.string(),
                     scenario.workload.phase == Phase::train ? "training step" : "decode request"));
  }
  measurement.label = fmt::format("{}:{} ({}{}{})", file, line, path.filename().string(),
                                  sets.empty() ? "" : " ", sets);
  try {
    Roofs roofs = scenario_roofs(scenario, "", {});
    const RunResult run = analyze(std::move(scenario), std::move(roofs));
    add_run(run, measurement, parameters);
    return run.roofs;
  } catch (const InputError& error) {
    fail(file, line, error.what());
  }
}

std::vector<Measurement> read_measurements(const std::filesystem::path& csv, Parameters& parameters,
                                           std::string& hardware, double& kernel_overhead) {
  const std::string file = csv.string();
  std::ifstream in(csv);
  if (!in) {
    throw InputError(fmt::format("{}: error: cannot open file", file));
  }
  std::string text;
  int line = 0;
  std::optional<Layout> layout;
  std::vector<Measurement> measurements;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text == "\r" || text.front() == '#') {
      continue;
    }
    const std::vector<std::string> fields = split_csv(text, file, line);
    if (!layout) {
      layout = read_header(fields, file);
      continue;
    }
    if (fields.size() != layout->columns.size()) {
      fail(file, line,
           fmt::format("{} fields, the header has {}", fields.size(), layout->columns.size()));
    }
    Measurement measurement;
    measurement.measured =
        positive_number(fields[layout->columns.at("measured_s")], "measured_s", file, line);
    const Roofs roofs = layout->kind == Layout::Kind::matmul
                            ? add_matmul_row(fields, *layout, csv, line, measurement, parameters)
                            : add_scenario_row(fields, *layout, csv, line, measurement, parameters);
    if (hardware.empty()) {
      hardware = roofs.hardware;
      kernel_overhead = roofs.kernel_overhead.si();
    } else if (roofs.hardware != hardware) {
      fail(file, line,
           fmt::format("runs on {}, the rows above on {}: one calibration is for one hardware",
                       roofs.hardware, hardware));
    }
    measurements.push_back(std::move(measurement));
  }
  if (measurements.empty()) {
    throw InputError(
        fmt::format("{}: error: no measurements (a header and one row at least)", file));
  }
  return measurements;
}

double rms(const std::vector<CalibrationRow>& rows, double CalibrationRow::*field) {
  double sum = 0.0;
  for (const CalibrationRow& row : rows) {
    const double error = (row.*field - row.measured) / row.measured;
    sum += error * error;
  }
  return std::sqrt(sum / static_cast<double>(rows.size()));
}

}  // namespace

CalibrationResult calibrate(const std::filesystem::path& csv, const NcuCalibration& ncu) {
  Parameters parameters;
  CalibrationResult result;
  result.file = csv.string();
  double kernel_overhead = 0.0;
  const bool ncu_export = calibration::is_ncu_export(csv);
  if (!ncu_export && !ncu.empty()) {
    throw InputError(fmt::format(
        "{}: error: --hardware, --scenario and --match are for an Nsight Compute export; this "
        "CSV's rows name their own GEMM hardware or scenario",
        result.file));
  }
  const std::vector<Measurement> measurements =
      ncu_export ? calibration::read_ncu_measurements(csv, ncu, parameters, result.hardware,
                                                      kernel_overhead)
                 : read_measurements(csv, parameters, result.hardware, kernel_overhead);
  const std::size_t overhead = parameters.index("kernel_overhead", false, kernel_overhead);
  const auto count = static_cast<Eigen::Index>(parameters.list().size());
  const auto rows = static_cast<Eigen::Index>(measurements.size());
  Eigen::VectorXd prior(count);
  for (Eigen::Index k = 0; k < count; ++k) {
    prior(k) = parameters.values()[static_cast<std::size_t>(k)];
  }
  // Each pass: the least-squares x of Σ ((A·x − (t − fixed)) / t)² with the binding roofs as at
  // the last x, plus a faint pull (1e-6) towards the hardware's own values, which holds a
  // parameter no measurement moves (or that moves only with another) where it was.
  constexpr double kPull = 1e-6;
  Eigen::VectorXd x = prior;
  const auto scale = [&](Eigen::Index k) { return std::max(std::abs(prior(k)), 1e-9); };
  // Σ of the squared relative errors at `at`: each pass's least squares holds the binding roofs of
  // the last x, so a pass can end worse when roofs change; the best x seen (the preset's
  // included) is the fit.
  const auto objective = [&](const Eigen::VectorXd& at) {
    double sum = 0.0;
    for (const Measurement& measurement : measurements) {
      const double error =
          (expected_at(measurement, at, nullptr, overhead) - measurement.measured) /
          measurement.measured;
      sum += error * error;
    }
    return sum;
  };
  Eigen::VectorXd best = x;
  double least = objective(x);
  for (result.iterations = 1; result.iterations <= 100; ++result.iterations) {
    Eigen::MatrixXd design = Eigen::MatrixXd::Zero(rows + count, count);
    Eigen::VectorXd target(rows + count);
    for (Eigen::Index i = 0; i < rows; ++i) {
      const Measurement& measurement = measurements[static_cast<std::size_t>(i)];
      Eigen::VectorXd coefficients = Eigen::VectorXd::Zero(count);
      expected_at(measurement, x, &coefficients, overhead);
      design.row(i) = coefficients.transpose() / measurement.measured;
      target(i) = (measurement.measured - measurement.fixed) / measurement.measured;
    }
    for (Eigen::Index k = 0; k < count; ++k) {
      design(rows + k, k) = kPull / scale(k);
      target(rows + k) = kPull * prior(k) / scale(k);
    }
    Eigen::VectorXd next = design.colPivHouseholderQr().solve(target);
    for (Eigen::Index k = 0; k < count; ++k) {
      // A fraction stays in [0.001, 1] of its roof (1/η in [1, 1000]); a time is not negative.
      next(k) = parameters.list()[static_cast<std::size_t>(k)].fraction
                    ? std::clamp(next(k), 1.0, 1000.0)
                    : std::max(next(k), 0.0);
    }
    const double change = (next - x).cwiseAbs().maxCoeff();
    x = next;
    if (const double at_x = objective(x); at_x < least) {
      least = at_x;
      best = x;
    }
    if (change <= 1e-12 * std::max(1.0, x.cwiseAbs().maxCoeff())) {
      break;
    }
  }
  result.iterations = std::min(result.iterations, 100);
  x = best;
  // What each parameter moves, at the fit.
  for (const Measurement& measurement : measurements) {
    Eigen::VectorXd coefficients = Eigen::VectorXd::Zero(count);
    CalibrationRow row;
    row.label = measurement.label;
    row.measured = measurement.measured;
    row.before = expected_at(measurement, prior, nullptr, overhead);
    row.after = expected_at(measurement, x, &coefficients, overhead);
    result.rows.push_back(row);
    for (Eigen::Index k = 0; k < count; ++k) {
      if (coefficients(k) > 0.0) {
        ++parameters.list()[static_cast<std::size_t>(k)].measurements;
      }
    }
  }
  std::size_t moved = 0;
  std::vector<std::string> keys;
  for (Eigen::Index k = 0; k < count; ++k) {
    CalibratedParameter& parameter = parameters.list()[static_cast<std::size_t>(k)];
    parameter.after = parameter.fraction ? 1.0 / x(k) : x(k);
    if (parameter.measurements > 0) {
      ++moved;
      keys.push_back(parameter.key);
      result.parameters.push_back(parameter);
    }
  }
  if (measurements.size() < moved) {
    throw InputError(fmt::format(
        "{}: error: {} measurements cannot fit the {} parameters they move ({}): measure more "
        "shapes",
        result.file, measurements.size(), moved, fmt::join(keys, ", ")));
  }
  result.rms_before = rms(result.rows, &CalibrationRow::before);
  result.rms_after = rms(result.rows, &CalibrationRow::after);
  return result;
}

}  // namespace rsim
