// SPDX-License-Identifier: MIT
#include "sim/explore/sweep.hpp"

#include "sim/base/error.hpp"
#include "sim/base/parallel.hpp"
#include "sim/explore/sweep_crossovers.hpp"
#include "sim/explore/sweep_evaluator.hpp"

#include <fmt/format.h>

namespace rsim {

const std::string& SweepResult::value(std::size_t index, std::size_t axis) const {
  return grid_value(axes, index, axis);
}

std::vector<std::string> SweepResult::values(std::size_t index) const {
  return grid_values(axes, index);
}

SweepResult run_sweep(const std::filesystem::path& path, const ScenarioOverrides& overrides,
                      const std::vector<SweepAxis>& axes, std::string_view mode,
                      const RoofOverrides& roof_overrides, const SweepOptions& options) {
  if (axes.empty()) {
    throw InputError("a sweep needs at least one axis: --over KEY=VALUES");
  }
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    for (std::size_t earlier = 0; earlier < axis; ++earlier) {
      if (axes[earlier].key == axes[axis].key) {
        throw InputError(fmt::format(
            "the sweep varies {} twice (in --over or the sweep: block); give all its values in "
            "one axis, e.g. --over {}=1,2,4",
            axes[axis].key, axes[axis].key));
      }
    }
  }
  std::size_t total = 1;
  for (const SweepAxis& axis : axes) {
    total *= axis.values.size();
    if (total > kMaxSweepPoints) {
      throw InputError(fmt::format("the sweep grid has more than {} points", kMaxSweepPoints));
    }
  }
  const SweepEvaluator evaluator(path, overrides, axes, mode, roof_overrides, options);
  SweepResult result;
  result.scenario = path.string();
  result.scenario_name = load_scenario(path, overrides).name;
  result.axes = axes;
  result.points.resize(total);
  // Cancelled while loading: no point is evaluated (each stays `evaluated` false).
  // A shard evaluates its slice of the grid in the same evaluation order (batch lines in a row).
  const bool sliced = !options.shard.whole();
  std::vector<std::size_t> positions;
  if (sliced) {
    const auto [first, end] = options.shard.slice(total);
    positions.reserve(end - first);
    for (std::size_t position = 0; position < total; ++position) {
      const std::size_t index = evaluator.grid_index(position);
      if (index >= first && index < end) {
        positions.push_back(index);
      }
    }
  }
  const std::size_t count = sliced ? positions.size() : total;
  const ParallelRun run = parallel_indexed<SweepThread>(
      options.threads, evaluator.cancelled() ? 0 : count,
      [&](std::size_t position, SweepThread& thread) {
        const std::size_t index = sliced ? positions[position] : evaluator.grid_index(position);
        evaluator.evaluate_grid(index, result.points[index], thread);
      },
      options.progress, options.cancel);
  result.threads = run.threads;
  result.cancelled = run.finished < count;
  result.rank_by = options.rank_by;
  result.shard = options.shard;
  if (options.crossovers && !result.cancelled && !sliced) {
    result.crossovers = find_sweep_crossovers(evaluator, result);
  }
  result.labels = evaluator.take_labels();
  return result;
}

void find_merged_crossovers(SweepResult& result, const ScenarioOverrides& overrides,
                            std::string_view mode, const RoofOverrides& roof_overrides,
                            const SweepOptions& options) {
  const SweepEvaluator evaluator(result.scenario, overrides, result.axes, mode, roof_overrides,
                                 options);
  for (SweepPoint& point : result.points) {
    point.total.roof = evaluator.intern(result.label(point.total.roof));
    point.error = evaluator.intern(result.label(point.error));
  }
  result.crossovers = find_sweep_crossovers(evaluator, result);
  result.labels = evaluator.take_labels();
}

}  // namespace rsim
