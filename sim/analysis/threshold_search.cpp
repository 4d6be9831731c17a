// SPDX-License-Identifier: MIT
#include "sim/analysis/threshold_search.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rsim {
namespace {

// T_math and the chosen roof's time over the query's scope.
std::pair<Seconds, Seconds> scope_times(const RunResult& run, const ThresholdQuery& query) {
  const auto roof_of = [&](const Totals& totals) {
    return query.roof == Bound::network ? totals.t_net : totals.t_mem;
  };
  if (query.scope.empty()) {
    return {run.bounds.total.t_math, roof_of(run.bounds.total)};
  }
  const std::size_t slash = query.scope.find('/');
  const std::string stage = query.scope.substr(0, slash);
  const std::string group = slash == std::string::npos ? "" : query.scope.substr(slash + 1);
  Seconds t_math;
  Seconds t_roof;
  bool found = false;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    if (op.stage != stage || op.group != group) {
      continue;
    }
    found = true;
    const OpCost& cost = run.table.costs[row];
    const auto count = static_cast<double>(op.count);
    t_math += cost.t_math * count;
    t_roof += (query.roof == Bound::network ? cost.t_net : cost.t_mem) * count;
  }
  if (!found) {
    throw InputError(
        fmt::format("--scope {}: no ops of group '{}' in stage '{}' (write "
                    "STAGE/GROUP, e.g. prefix/mlp)",
                    query.scope, group, stage));
  }
  return {t_math, t_roof};
}

}  // namespace

ThresholdResult find_threshold(const ThresholdQuery& query,
                               const std::function<Scenario(std::int64_t)>& load,
                               const std::function<Roofs(const Scenario&)>& roofs_of) {
  ThresholdResult result;
  bool fits = true;  // whether the last value evaluated fits in memory
  const auto evaluate = [&](std::int64_t value) {
    ++result.evaluations;
    Scenario scenario = load(value);
    Roofs roofs = roofs_of(scenario);
    const RunResult run = analyze(std::move(scenario), std::move(roofs));
    const auto [t_math, t_roof] = scope_times(run, query);
    result.t_math = t_math;
    result.t_roof = t_roof;
    fits = run.footprint.fits();
    return t_math >= t_roof;
  };
  // Bracket by doubling, then bisect: the smallest value with T_math ≥ T_roof (T_math − T_roof
  // grows with the batch or sequence for every op rsim models). Memory grows with them too: a
  // value that does not fit ends the doubling, and the search goes on below the largest that
  // fits (found by bisection) or stops there.
  // Work in units of `step`: value = step · k.
  const std::int64_t limit = std::max<std::int64_t>(1, query.high / query.step);
  const auto holds = [&](std::int64_t units) { return evaluate(units * query.step); };
  std::int64_t low = 0;
  std::int64_t high = 1;
  while (true) {
    const bool reached = holds(high);
    if (high == 1 && query.roof == Bound::network && result.t_roof.si() == 0.0) {
      result.no_traffic = true;  // T_net = 0 at any value: no collective to reach
      return result;
    }
    if (!fits) {
      std::int64_t fitting = low;  // fits (or 0)
      std::int64_t short_of = high;
      while (short_of - fitting > 1) {
        const std::int64_t middle = fitting + (short_of - fitting) / 2;
        holds(middle);
        (fits ? fitting : short_of) = middle;
      }
      if (fitting == 0 || !holds(fitting)) {
        result.largest_fitting = fitting * query.step;
        return result;
      }
      high = fitting;
      break;
    }
    if (reached) {
      break;
    }
    if (high >= limit) {
      return result;
    }
    low = high;
    high = std::min(2 * high, limit);
  }
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    (holds(middle) ? high : low) = middle;
  }
  holds(high);
  result.value = high * query.step;
  return result;
}

ThresholdResult threshold_scenario(const std::filesystem::path& path,
                                   const ScenarioOverrides& overrides, ThresholdQuery& query,
                                   std::string_view mode, const RoofOverrides& roof_overrides) {
  const std::string param = query.key;
  if (param != "batch" && param != "seq_len" && param != "d_model") {
    throw InputError(fmt::format("--param {}: expected batch, seq_len or d_model", param));
  }
  const Scenario baseline = load_scenario(path, overrides);
  const bool width = param == "d_model";
  // A decode step's tokens per sequence are its cached context.
  const bool context = param == "seq_len" && baseline.workload.phase == Phase::decode;
  query.key = width ? "model.hidden_size" : context ? "workload.context" : "workload." + param;
  const std::string split_axis = width ? "embed" : param == "batch" ? "batch" : "seq";
  query.step = 1;
  if (const auto axis = baseline.plan.mesh_axis_for(split_axis, false)) {
    query.step = baseline.plan.find_axis(*axis)->size;
  }
  const auto load = [&](std::int64_t value) {
    if (!width) {
      ScenarioOverrides with_value = overrides;
      with_value.sets.emplace_back(query.key, std::to_string(value));
      return load_scenario(path, with_value);
    }
    Scenario scenario = baseline;
    for (StageSpec& stage : scenario.model.stages) {
      stage.component.hidden_size = value;
    }
    return scenario;
  };
  const auto roofs_of = [&](const Scenario& scenario) {
    return scenario_roofs(scenario, mode, roof_overrides);
  };
  return find_threshold(query, load, roofs_of);
}

}  // namespace rsim
