// SPDX-License-Identifier: MIT
#include "sim/analysis/decode.hpp"

#include "sim/analysis/analysis.hpp"
#include "sim/base/error.hpp"

#include <cmath>
#include <vector>

namespace rsim {

DecodeCritical decode_critical(const Scenario& scenario, const OpGraph& graph,
                               const CostTable& table, const Roofs& roofs) {
  DecodeCritical result;
  result.group_size = scenario.model.stages.front().component.group_size();
  std::vector<const Op*> matmuls;
  double attention_flops = 0.0;
  double attention_bytes = 0.0;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const Op& op = graph.op(table.order[row]);
    const auto count = static_cast<double>(op.count);
    if (op.kind == OpKind::matmul && !op.inputs.empty() && op.inputs.front().has_axis("batch")) {
      matmuls.push_back(&op);
    }
    if (op.kind == OpKind::attention) {
      attention_flops += table.costs[row].flops.si() * count;
      attention_bytes += table.costs[row].bytes.si() * count;
    }
  }
  result.attention_intensity = attention_bytes > 0.0 ? attention_flops / attention_bytes : 0.0;
  if (matmuls.empty()) {
    return result;
  }
  // Every matmul of the step together: Σ FLOPs(B) / Σ bytes(B) = ridge, both affine in the
  // per-device batch B (thresholds.hpp), so the weights of all groups count once each.
  result.matmuls = critical_token_batch(matmuls, roofs);
  result.ridge =
      ridge(compute_path_of(*matmuls.front(), roofs).peak, *roofs.main_memory().bandwidth);
  double local_batch = 1.0;
  for (const Axis& axis : matmuls.front()->inputs.front().axes) {
    local_batch *= axis.name == "batch" ? static_cast<double>(axis.size) : 1.0;
  }
  result.replicas = static_cast<double>(scenario.workload.batch) / local_batch;
  return result;
}

Scenario prompt_prefill_scenario(const Scenario& scenario) {
  Scenario prefill = scenario;
  const std::int64_t prompt = scenario.workload.context;
  prefill.workload.phase = "prefill";
  prefill.workload.seq_len = prompt;
  prefill.workload.context = 0;
  prefill.workload.decode_steps = 0;
  StageSpec& stage = prefill.model.stages.front();
  stage.tokens = prompt;
  stage.embedded_tokens = prompt;
  stage.context = 0;
  stage.writes_kv_cache = true;        // the prompt's K and V stay cached for the decode steps
  stage.lm_head = LmHead::last_token;  // the first output token
  return prefill;
}

Scenario decode_step_scenario(const Scenario& scenario, std::int64_t context) {
  Scenario step = scenario;
  step.workload.context = context;
  step.workload.decode_steps = 0;
  set_decode_step(step.model.stages.front(), context);
  return step;
}

namespace {

PhaseTimes times_of(const RunResult& run) {
  return {run.bounds.total.t_lower, run.bounds.total.t_upper};
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
  RSIM_CHECK(scenario.workload.phase == "decode" && scenario.workload.decode_steps > 0,
             "a request is a decode workload with decode_steps");
  DecodeRequest request;
  request.prompt_tokens = scenario.workload.context;
  request.steps = scenario.workload.decode_steps;
  const auto run_at = [&](Scenario variant) {
    ++request.evaluations;
    return analyze(std::move(variant), roofs);
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
                               (request.last_step.upper - request.first_step.upper) * fraction);
  }
  request.affine = affine;
  if (affine) {
    request.decode = {(request.first_step.lower + request.last_step.lower) * (steps / 2.0),
                      (request.first_step.upper + request.last_step.upper) * (steps / 2.0)};
    return request;
  }
  // Not provably affine: sum every step (one cost-model run per distinct context).
  request.decode = request.first_step;
  for (std::int64_t context = first_context + 1; context < last_context; ++context) {
    const PhaseTimes step = times_of(run_at(decode_step_scenario(scenario, context)));
    request.decode.lower += step.lower;
    request.decode.upper += step.upper;
  }
  request.decode.lower += request.last_step.lower;
  request.decode.upper += request.last_step.upper;
  return request;
}

}  // namespace rsim
