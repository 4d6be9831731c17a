// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/request.hpp"
#include "sim/explore/rank_by.hpp"
#include "sim/explore/shard.hpp"
#include "sim/explore/sweep_grid.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// What a sweep keeps of a point's whole-run sums (compute_totals'): the bounds and the roof,
/// not the per-tier and per-network breakdowns, so that millions of points stay small.
struct SweepFigures {
  Seconds t_lower;     ///< Σ max per op
  Seconds t_upper;     ///< Σ sum per op
  Seconds t_expected;  ///< Σ expected per op (or the training step's schedule of them)
  Seconds t_math;
  Seconds t_mem;
  Seconds t_net;
  Bound bound = Bound::memory;
  /// SweepResult::label of bound_label: "compute", "network", "memory (hbm)", "memory (l2)".
  std::uint32_t roof = 0;
};

/// What one grid point costs (the whole run, per device). It owns no storage: its values are its
/// place in the grid (SweepResult::value) and its roof and error are labels (SweepResult::label),
/// so that a million points are one allocation of fixed-size records, not a million strings.
struct SweepPoint {
  SweepFigures total;  ///< the whole run's sums
  Bytes memory;        ///< per device: Footprint::total (weights, KV cache, activations, …)
  Bytes capacity;      ///< per device: Footprint::capacity
  /// A decode request's (decode_steps > 0) expected time to first token, mean time per output
  /// token and whole request; zero for a step.
  Seconds ttft;
  Seconds tpot;
  Seconds request;
  double request_tokens = 0.0;  ///< its output tokens: batch × (decode_steps + 1)
  [[nodiscard]] double tokens_per_s() const {
    return request.si() > 0.0 ? request_tokens / request.si() : 0.0;
  }
  std::uint32_t error = 0;  ///< label of why the point is not a valid scenario; 0: it is valid
  bool evaluated = false;   ///< false if the sweep was cancelled first

  [[nodiscard]] bool fits() const { return memory <= capacity; }
  /// Evaluated, and a valid scenario.
  [[nodiscard]] bool valid() const { return evaluated && error == 0; }
};

/// The point where the fastest of two series swaps along a numeric axis, or where one series
/// changes its bound; found by bisection on the cost model between two grid values.
struct SweepCrossover {
  enum class Kind { roof, fastest };
  Kind kind = Kind::roof;
  std::string what;                ///< "bf16 → fp8 fastest", "memory → compute"
  std::string from;                ///< the old bound, or the old winner's series value
  std::string to;                  ///< the new one
  std::vector<std::string> fixed;  ///< the values of the other axes ("" for the swept ones)
  std::int64_t at = 0;             ///< the first integer value where the new order holds
  /// Roof change: the series' lower bound at `at` − 1 and at `at`. Winner change: the old and the
  /// new winner's ranked times (SweepResult::rank_by) at `at`.
  Seconds t_before;
  Seconds t_after;
  int evaluations = 0;
};

struct SweepResult {
  std::string scenario;
  std::string scenario_name;  ///< its `name:` (charts are titled by it)
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;  ///< the cartesian grid, the last axis fastest
  std::vector<SweepCrossover> crossovers;
  /// The time the fastest series is picked by (SweepOptions::rank_by).
  RankBy rank_by = RankBy::expected;
  std::int64_t threads = 1;
  bool cancelled = false;
  /// The slice of the grid evaluated (SweepOptions::shard); the others are not evaluated, and
  /// crossovers are left to `rsim merge`, which sees every point.
  Shard shard;

  /// The text of the points' roofs and errors, each once; label 0 is "".
  std::vector<std::string> labels{""};

  /// The value of `axis` at grid point `index` (the last axis fastest).
  [[nodiscard]] const std::string& value(std::size_t index, std::size_t axis) const;
  /// Every axis' value at grid point `index`, in axis order.
  [[nodiscard]] std::vector<std::string> values(std::size_t index) const;
  /// A point's roof (`point.total.roof`) or error (`point.error`) as text.
  [[nodiscard]] const std::string& label(std::uint32_t id) const { return labels.at(id); }
};

struct SweepOptions {
  std::int64_t threads = 0;  ///< 0: all hardware threads (TBB's default)
  std::function<void(std::size_t, std::size_t)> progress;  ///< (done, total), any thread
  const std::atomic<bool>* cancel = nullptr;               ///< set (by Ctrl-C) to stop early
  bool crossovers = true;
  /// The time that decides the fastest series at a grid value (its winner changes).
  RankBy rank_by = RankBy::expected;
  /// Evaluate points along the batch with a BatchLine where one is usable (off: analyze() at
  /// every point; the output is the same, bit for bit, which tests check).
  bool batch_lines = true;
  /// Evaluate only this slice of the grid (in grid order: the last axis fastest).
  Shard shard;
  /// (loaded, total) as the scenarios are loaded and validated before the points (one per
  /// combination of the axes other than workload.batch, and the baseline), any thread; a set
  /// `cancel` stops the loading too, and then no point is evaluated.
  std::function<void(std::size_t, std::size_t)> loading_progress;
};

/// Evaluates the grid of `axes` over a scenario file (each point validated like `--set`), in
/// parallel with TBB; points keep grid order whatever the thread count. Then, along the first
/// numeric axis, the crossovers between the series of the first non-numeric axis and the roof
/// changes of each series. InputError for an empty or oversized grid.
SweepResult run_sweep(const std::filesystem::path& path, const ScenarioOverrides& overrides,
                      const std::vector<SweepAxis>& axes, std::string_view mode,
                      const RoofOverrides& roof_overrides, const SweepOptions& options = {});

/// The crossovers of a sweep merged from its shards (`rsim merge`), found on the merged points
/// as run_sweep finds them: `result` holds every point of the grid, labelled by
/// `result.labels`; the scenario is loaded again with the options the shards ran with. The
/// points' labels are renumbered as the new search meets them.
void find_merged_crossovers(SweepResult& result, const ScenarioOverrides& overrides,
                            std::string_view mode, const RoofOverrides& roof_overrides,
                            const SweepOptions& options = {});

}  // namespace rsim
