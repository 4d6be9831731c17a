// SPDX-License-Identifier: MIT
#include "sim/explore/sweep_evaluator.hpp"

#include "sim/base/error.hpp"
#include "sim/base/parallel.hpp"
#include "sim/spec/workload.hpp"

#include <algorithm>
#include <atomic>

namespace rsim {
namespace {

// The key a sweep can vary without re-reading YAML: the batch is validated only as a whole
// number ≥ 1, so a validated scenario with its batch replaced is what `--set` would build.
constexpr std::string_view kBatchKey = "workload.batch";

}  // namespace

SweepEvaluator::SweepEvaluator(const std::filesystem::path& path,
                               const ScenarioOverrides& overrides,
                               const std::vector<SweepAxis>& axes, std::string_view mode,
                               const RoofOverrides& roof_overrides, const SweepOptions& options)
    : path_(path),
      overrides_(overrides),
      axes_(axes),
      mode_(mode),
      roofs_(roof_overrides),
      batch_lines_(options.batch_lines) {
  const auto batch = std::find_if(axes.begin(), axes.end(),
                                  [](const SweepAxis& axis) { return axis.key == kBatchKey; });
  if (batch != axes.end()) {
    batch_axis_ = static_cast<std::size_t>(batch - axes.begin());
  }
  load_bases(options);
}

SweepPoint SweepEvaluator::evaluate(const std::vector<std::string>& values,
                                    SweepThread& thread) const {
  SweepPoint point;
  if (const Base* base = base_for(values)) {
    evaluate_batch(*base, *parse_integer(values[*batch_axis_]), point, thread);
  } else {
    evaluate_values(values, point, thread);
  }
  return point;
}

std::size_t SweepEvaluator::grid_index(std::size_t position) const {
  if (!batch_axis_) {
    return position;
  }
  const std::size_t batches = axes_[*batch_axis_].values.size();
  const std::size_t batch = position % batches;
  std::size_t rest = position / batches;
  std::size_t index = 0;
  std::size_t stride = 1;
  for (std::size_t axis = axes_.size(); axis-- > 0;) {
    const std::size_t size = axes_[axis].values.size();
    std::size_t value = batch;
    if (axis != *batch_axis_) {
      value = rest % size;
      rest /= size;
    }
    index += value * stride;
    stride *= size;
  }
  return index;
}

void SweepEvaluator::evaluate_grid(std::size_t index, SweepPoint& point,
                                   SweepThread& thread) const {
  if (batch_axis_) {
    std::size_t rest = index;
    std::size_t base_id = 0;
    std::size_t base_stride = 1;
    std::size_t batch_value = 0;
    for (std::size_t axis = axes_.size(); axis-- > 0;) {
      const std::size_t size = axes_[axis].values.size();
      const std::size_t value = rest % size;
      rest /= size;
      if (axis == *batch_axis_) {
        batch_value = value;
      } else {
        base_id += value * base_stride;
        base_stride *= size;
      }
    }
    // A base is missing where an axis repeats a value (its key was loaded once, for the
    // first): such points take the slow path, as do batches that are not whole numbers ≥ 1.
    const std::optional<std::int64_t> batch = batch_values_[batch_value];
    const Base* base = base_by_id_[base_id];
    if (base != nullptr && batch && *batch >= 1) {
      evaluate_batch(*base, *batch, point, thread);
      return;
    }
  }
  evaluate_values(grid_values(axes_, index), point, thread);
}

// A point of a loaded base at `batch` ≥ 1: along its batch line where the line answers, else
// analyze() on the base's scenario with the batch replaced.
void SweepEvaluator::evaluate_batch(const Base& base, std::int64_t batch, SweepPoint& point,
                                    SweepThread& thread) const {
  point.evaluated = true;
  if (!base.error.empty()) {
    point.error = labels_.intern(base.error);
    return;
  }
  // The checks the file's batch passes at load (issue 23 #6: this path skipped them).
  if (base.scenario->workload.phase == Phase::train) {
    if (const auto error =
            microbatch_split_error(batch, base.scenario->workload.training.microbatches)) {
      point.error = labels_.intern("workload.batch: " + *error);
      return;
    }
  }
  try {
    if (base.line && base.line->usable()) {
      if (const auto* fast = base.line->evaluate(batch, thread.workspace(base.id, *base.line))) {
        fill(point, fast->total, fast->footprint, thread);
        return;
      }
    }
    Scenario scenario = *base.scenario;
    scenario.workload.batch = batch;
    const RunResult run = analyze(std::move(scenario), *base.roofs, &thread.cache);
    fill(point, run, thread);
  } catch (const InputError& error) {
    point.error = labels_.intern(error.what());
  }
}

// A point no base covers (no batch axis, or a batch that is not a whole number ≥ 1): its
// scenario loaded from its values, which reports a bad value exactly as --set does.
void SweepEvaluator::evaluate_values(const std::vector<std::string>& values, SweepPoint& point,
                                     SweepThread& thread) const {
  point.evaluated = true;
  try {
    Scenario scenario = load_scenario(path_, point_overrides(overrides_, axes_, values), &files_);
    Roofs roofs = scenario_roofs(scenario, mode_, roofs_);
    const RunResult run = analyze(std::move(scenario), std::move(roofs), &thread.cache);
    fill(point, run, thread);
  } catch (const InputError& error) {
    point.error = labels_.intern(error.what());
  }
}

void SweepEvaluator::fill(SweepPoint& point, const Totals& totals, const Footprint& footprint,
                          SweepThread& thread) const {
  point.total = {totals.t_lower, totals.t_upper, totals.t_expected, totals.t_math,
                 totals.t_mem,   totals.t_net,   totals.bound,      thread.roof(totals, labels_)};
  point.memory = footprint.total();
  point.capacity = footprint.capacity;
}

void SweepEvaluator::fill(SweepPoint& point, const RunResult& run, SweepThread& thread) const {
  fill(point, run.bounds.total, run.footprint, thread);
  if (run.request) {
    point.ttft = run.request->prefill.expected;
    point.tpot = run.request->per_output_token().expected;
    point.request = run.request->total().expected;
    point.request_tokens = static_cast<double>(run.scenario.workload.batch) *
                           static_cast<double>(run.request->steps + 1);
  }
}

std::vector<std::string> SweepEvaluator::base_key(std::vector<std::string> values) const {
  values[*batch_axis_].clear();
  return values;
}

// Before the points, in parallel (each loads YAML and builds its batch line's probes): the
// baseline, validated, and every combination of the axes other than the batch.
void SweepEvaluator::load_bases(const SweepOptions& options) {
  std::size_t combinations = 1;
  for (std::size_t axis = 0; batch_axis_ && axis < axes_.size(); ++axis) {
    combinations *= axis == *batch_axis_ ? 1 : axes_[axis].values.size();
  }
  std::vector<Base> loaded(batch_axis_ ? combinations : 0);
  std::vector<std::vector<std::string>> keys(loaded.size());
  // Index 0 (first on one thread) validates the baseline; base b is index b + 1.
  std::atomic<bool> validated{false};
  const ParallelRun run = parallel_indexed<char>(
      options.threads, loaded.size() + 1,
      [&](std::size_t index, char&) {
        if (index == 0) {
          load_scenario(path_, overrides_, &files_);  // throws the baseline's error
          validated = true;
          return;
        }
        keys[index - 1] = base_values(index - 1);
        loaded[index - 1] = load_base(index - 1, keys[index - 1]);
      },
      options.loading_progress, options.cancel);
  if (run.finished < loaded.size() + 1) {
    if (!validated) {  // cancelled before it ran: a bad file is still one error
      load_scenario(path_, overrides_, &files_);
    }
    cancelled_ = true;
    return;
  }
  for (std::size_t index = 0; index < loaded.size(); ++index) {
    bases_.emplace(std::move(keys[index]), std::move(loaded[index]));
  }
  // The map's nodes stay put: index them by id, and parse the batch values once.
  base_by_id_.resize(loaded.size());
  for (const auto& [values, base] : bases_) {
    base_by_id_[base.id] = &base;
  }
  if (batch_axis_) {
    for (const std::string& value : axes_[*batch_axis_].values) {
      batch_values_.push_back(parse_integer(value));
    }
  }
}

// The values of base `index` (the batch's left empty), the last other axis fastest.
std::vector<std::string> SweepEvaluator::base_values(std::size_t index) const {
  std::vector<std::string> values(axes_.size());
  for (std::size_t axis = axes_.size(); axis-- > 0;) {
    if (axis != *batch_axis_) {
      values[axis] = axes_[axis].values[index % axes_[axis].values.size()];
      index /= axes_[axis].values.size();
    }
  }
  return values;
}

SweepEvaluator::Base SweepEvaluator::load_base(std::size_t index,
                                               const std::vector<std::string>& values) const {
  // The other axes' keys and this base's values (not the batch axis' many values).
  std::vector<SweepAxis> others;
  std::vector<std::string> other_values;
  for (std::size_t axis = 0; axis < axes_.size(); ++axis) {
    if (axis != *batch_axis_) {
      others.push_back({axes_[axis].key, {}, axes_[axis].numeric});
      other_values.push_back(values[axis]);
    }
  }
  Base base;
  base.id = index;
  try {
    Scenario scenario =
        load_scenario(path_, point_overrides(overrides_, others, other_values), &files_);
    base.roofs = scenario_roofs(scenario, mode_, roofs_);
    if (batch_lines_) {
      base.line.emplace(scenario, *base.roofs);
    }
    base.scenario = std::move(scenario);
  } catch (const InputError& error) {
    base.error = error.what();
  }
  return base;
}

// The loaded base of a point whose batch is a whole number ≥ 1; else nullptr (slow path,
// which reports a bad value exactly as --set does).
const SweepEvaluator::Base* SweepEvaluator::base_for(const std::vector<std::string>& values) const {
  if (!batch_axis_) {
    return nullptr;
  }
  const auto batch = parse_integer(values[*batch_axis_]);
  const auto base = bases_.find(base_key(values));
  return batch && *batch >= 1 && base != bases_.end() ? &base->second : nullptr;
}

}  // namespace rsim
