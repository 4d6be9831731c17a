// SPDX-License-Identifier: MIT
#include "sim/analysis/request.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <cmath>

namespace rsim {
namespace {

PhaseTimes times_of(const RunResult& run) {
  return {run.bounds.total.t_lower, run.bounds.total.t_upper, run.bounds.total.t_expected};
}

// Every op held by the same roof (and memory tier) in both runs of one graph shape.
bool same_roofs(const RunResult& first, const RunResult& last) {
  RSIM_CHECK(first.table.costs.size() == last.table.costs.size(),
             "decode steps of one request build graphs of one shape");
  for (std::size_t row = 0; row < first.table.costs.size(); ++row) {
    const OpCost& a = first.table.costs[row];
    const OpCost& b = last.table.costs[row];
    if (a.bound != b.bound || a.bound_tier != b.bound_tier) {
      return false;
    }
  }
  return true;
}

bool near(Seconds value, Seconds expected) {
  return std::abs((value - expected).si()) <= 1e-9 * std::abs(expected.si());
}

}  // namespace

DecodeRequest analyze_request(const Scenario& scenario, const Roofs& roofs) {
  RSIM_CHECK(scenario.workload.phase == Phase::decode && scenario.workload.decode_steps > 0,
             "a request is a decode workload with decode_steps");
  DecodeRequest request;
  request.prompt_tokens = scenario.workload.context;
  request.steps = scenario.workload.decode_steps;
  const auto run_at = [&](Scenario variant) {
    ++request.evaluations;
    return analyze_step(std::move(variant), roofs);
  };
  request.prefill = times_of(run_at(prompt_prefill_scenario(scenario)));
  const std::int64_t first_context = request.prompt_tokens;
  const std::int64_t last_context = request.prompt_tokens + request.steps - 1;
  const RunResult first = run_at(decode_step_scenario(scenario, first_context));
  request.first_step = times_of(first);
  request.last_step_kv_cache = first.footprint.kv_cache;
  if (request.steps == 1) {
    request.last_step = request.first_step;
    request.decode = request.first_step;
    request.affine = true;
    return request;
  }
  const RunResult last = run_at(decode_step_scenario(scenario, last_context));
  request.last_step = times_of(last);
  request.last_step_kv_cache = last.footprint.kv_cache;
  const auto steps = static_cast<double>(request.steps);
  // Per op, T_math and each tier's bytes are affine in the cached tokens c (attention:
  // 4·B·N·H·(c + 1) FLOPs; K and V reads B·c·2·K·H·s_kv plus c-free terms; every other op does
  // not depend on c). The op's lower bound is a max of affine terms; if the same term is the
  // largest at both ends it is the largest in between (their difference is affine), so the step
  // time is affine on [first, last] and the sum is the trapezoid N·(t_first + t_last)/2 exactly.
  // The midpoint guards the affinity of the terms themselves (tiles are chosen per shape).
  bool affine = same_roofs(first, last);
  if (affine && request.steps > 2) {
    const std::int64_t middle_context = first_context + (request.steps - 1) / 2;
    const PhaseTimes middle = times_of(run_at(decode_step_scenario(scenario, middle_context)));
    const double fraction = static_cast<double>(middle_context - first_context) /
                            static_cast<double>(last_context - first_context);
    affine =
        near(middle.lower, request.first_step.lower +
                               (request.last_step.lower - request.first_step.lower) * fraction) &&
        near(middle.upper, request.first_step.upper +
                               (request.last_step.upper - request.first_step.upper) * fraction) &&
        near(middle.expected,
             request.first_step.expected +
                 (request.last_step.expected - request.first_step.expected) * fraction);
  }
  request.affine = affine;
  if (affine) {
    request.decode = {(request.first_step.lower + request.last_step.lower) * (steps / 2.0),
                      (request.first_step.upper + request.last_step.upper) * (steps / 2.0),
                      (request.first_step.expected + request.last_step.expected) * (steps / 2.0)};
    return request;
  }
  // Not provably affine: sum every step (one cost-model run per distinct context).
  request.decode = request.first_step;
  for (std::int64_t context = first_context + 1; context < last_context; ++context) {
    const PhaseTimes step = times_of(run_at(decode_step_scenario(scenario, context)));
    request.decode.lower += step.lower;
    request.decode.upper += step.upper;
    request.decode.expected += step.expected;
  }
  request.decode.lower += request.last_step.lower;
  request.decode.upper += request.last_step.upper;
  request.decode.expected += request.last_step.expected;
  return request;
}

namespace {
RunResult analyze_run(Scenario scenario, Roofs roofs, TileCache* cache);
}  // namespace

RunResult analyze(Scenario scenario, Roofs roofs, TileCache* cache) {
  // Sizes past 2^63 are found only when the graph is built and costed; they come from the
  // workload, so they are reported at its key (issue 23 #7: no file, no line).
  const std::optional<SourceMark> workload = scenario.workload.written_at;
  try {
    return analyze_run(std::move(scenario), std::move(roofs), cache);
  } catch (const SizeOverflowError& error) {
    if (!workload) {
      throw;
    }
    throw ConfigError(*workload, fmt::format("'workload': {}: the batch and lengths are too "
                                             "large for this model",
                                             error.what()));
  }
}

namespace {

// The step, and for a decode request its whole span of steps.
RunResult analyze_run(Scenario scenario, Roofs roofs, TileCache* cache) {
  if (scenario.workload.phase != Phase::decode || scenario.workload.decode_steps == 0) {
    return analyze_step(std::move(scenario), std::move(roofs), cache);
  }
  DecodeRequest request = analyze_request(scenario, roofs);
  RunResult run = analyze_step(std::move(scenario), std::move(roofs), cache);
  // What must fit is the last step's: its KV cache holds context + N tokens per sequence.
  run.footprint.kv_cache = request.last_step_kv_cache;
  run.request = std::move(request);
  return run;
}

}  // namespace

}  // namespace rsim
