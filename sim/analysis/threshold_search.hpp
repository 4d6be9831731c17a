// SPDX-License-Identifier: MIT
#pragma once
// `rsim threshold`: the value of a scenario key at which T_math reaches a roof, found on the
// real cost model.

#include "sim/analysis/bounds.hpp"
#include "sim/analysis/request.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rsim {

/// `rsim threshold`: the smallest value of an integer scenario key (workload.batch,
/// workload.seq_len) at which ΣT_math reaches ΣT_mem (or ΣT_net) over a scope: the whole run, or
/// one matmul group of one stage ("prefix/mlp"). Found by bracketing (doubling) and bisection on
/// the real cost model, so it agrees with the closed forms where they exist.
struct ThresholdQuery {
  std::string key = "workload.batch";
  Bound roof = Bound::memory;                 ///< memory or network
  std::string scope;                          ///< "" for the whole run, else "stage/group"
  std::int64_t high = std::int64_t{1} << 24;  ///< search up to here
  std::int64_t step = 1;  ///< values searched are multiples of this (a plan's batch split)
};

struct ThresholdResult {
  std::optional<std::int64_t> value;  ///< nullopt: T_math stays below the roof up to `high`
  Seconds t_math;                     ///< at `value` (or where the search stopped)
  Seconds t_roof;
  int evaluations = 0;
  /// The search stopped at the memory: the largest value that fits (0: not even one step), when
  /// a larger one did not fit before T_math reached the roof.
  std::optional<std::int64_t> largest_fitting;
  bool no_traffic = false;  ///< --roof network on a plan with no collectives: nothing to reach
};

/// `load(x)` must return the scenario with the key set to x, and `roofs_of` its roofs.
ThresholdResult find_threshold(const ThresholdQuery& query,
                               const std::function<Scenario(std::int64_t)>& load,
                               const std::function<Roofs(const Scenario&)>& roofs_of);

/// find_threshold for a named parameter of a scenario file: "batch" or "seq_len" (set as
/// workload keys and re-validated; a plan that splits the batch makes the search step by its
/// devices), or "d_model" (every stage's hidden size; stepping by the devices a plan splits
/// `embed` over). `query.key` names the parameter on entry and the key searched on return.
ThresholdResult threshold_scenario(const std::filesystem::path& path,
                                   const ScenarioOverrides& overrides, ThresholdQuery& query,
                                   std::string_view mode, const RoofOverrides& roof_overrides);

}  // namespace rsim
