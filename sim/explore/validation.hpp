// SPDX-License-Identifier: MIT
#pragma once
// `rsim validate`: published measurements of real runs (validation/cases.yaml), each an rsim input
// and a measured time with its citation, held against the lower bound (which must not exceed it)
// and the expected time (which should land near it).

#include "sim/base/error.hpp"
#include "sim/base/units.hpp"
#include "sim/graph/transformer.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// What of a scenario's run a case compares.
enum class ValidationQuantity {
  step,              ///< totals: one prefill pass, one decode step or one training step
  request,           ///< a decode request's total (prefill + every decode step)
  prefill,           ///< a decode request's prefill: the time to the first token
  per_output_token,  ///< a decode request's mean time per output token after the first
  op,                ///< Σ over the named ops (a kernel timed alone: attention)
};
std::string_view to_string(ValidationQuantity quantity);

/// One published measurement: `rsim matmul` (hardware + shape) or a scenario, and what ran it.
struct ValidationCase {
  std::string name;
  std::string category;  ///< gemm, attention, decode, prefill, training, …
  SourceMark mark;       ///< where the case is written
  bool matmul = false;
  std::filesystem::path hardware;  ///< matmul: the hardware file
  MatmulShape shape;               ///< matmul
  std::filesystem::path scenario;  ///< scenario cases
  ValidationQuantity quantity = ValidationQuantity::step;
  std::vector<std::string> ops;  ///< quantity op: "stage/block/name"
  Seconds measured;
  std::string source;
  std::string engine;
  /// Why the engine is known to run far from its roofline (empty: not so): the case still holds
  /// the lower bound, but its expected error is left out of the accuracy figures.
  std::string off_roofline;
};

/// Reads a cases file (`validation/cases.yaml`, or a folder holding one). Paths in it are relative
/// to it. Every key is checked; errors name file:line:col.
std::vector<ValidationCase> load_validation_cases(const std::filesystem::path& path);

/// One case run through rsim.
struct ValidationResult {
  ValidationCase item;
  Seconds lower;
  Seconds expected;
  std::string error;  ///< an input error running it (the case could not be costed)
  [[nodiscard]] double lower_ratio() const { return lower / item.measured; }
  /// (expected − measured) / measured
  [[nodiscard]] double expected_error() const { return expected / item.measured - 1.0; }
  [[nodiscard]] bool bound_holds() const { return error.empty() && lower <= item.measured; }
};

/// One category's share of the accuracy figures (`scored`: its cases not marked off the
/// roofline and costed).
struct CategorySummary {
  std::string category;
  std::size_t cases = 0;
  std::size_t scored = 0;
  std::size_t within = 0;     ///< of the scored, expected within ±ValidationSummary::tolerance
  double median_error = 0.0;  ///< median |expected − measured| / measured
  double median_ratio = 0.0;  ///< median expected / measured: below 1, rsim expects too little
};

/// The set's figures: bound violations and the expected time's error over the cases not marked
/// off the roofline, in all and by category (in the order the categories first appear).
struct ValidationSummary {
  std::size_t cases = 0;
  std::size_t failed = 0;            ///< could not be costed
  std::size_t bound_violations = 0;  ///< lower bound above the measurement
  std::size_t scored = 0;            ///< cases in the accuracy figures
  std::size_t within = 0;            ///< of those, expected within ±`tolerance`
  double tolerance = 0.15;
  double median_error = 0.0;  ///< median |expected − measured| / measured
  double max_error = 0.0;
  std::vector<CategorySummary> categories;
  [[nodiscard]] bool passed() const { return failed == 0 && bound_violations == 0; }
};

/// Runs every case (in parallel on `threads`, 0: all) and summarizes them.
std::vector<ValidationResult> run_validation(
    const std::vector<ValidationCase>& cases, std::int64_t threads = 0,
    const std::function<void(std::size_t, std::size_t)>& progress = {},
    const std::atomic<bool>* cancel = nullptr);
ValidationSummary summarize_validation(const std::vector<ValidationResult>& results);

}  // namespace rsim
