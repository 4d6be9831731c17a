// SPDX-License-Identifier: MIT
#include "sim/analysis/decode.hpp"

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
    // Unfused attention's QKᵀ and PV are matmuls over each sequence's own K/V: attention, whose
    // intensity the batch does not change (issue 21 #9: as weight matmuls they kept the step's
    // matmuls off the ridge at any batch, and attention read 0 FLOP/B).
    const bool unfused_attention = op.kind == OpKind::matmul && op.group == "attention_scores";
    if (op.kind == OpKind::matmul && !unfused_attention && !op.inputs.empty() &&
        op.inputs.front().has_axis("batch")) {
      matmuls.push_back(&op);
    }
    if (op.kind == OpKind::attention || unfused_attention) {
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
  prefill.workload.phase = Phase::prefill;
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

}  // namespace rsim
