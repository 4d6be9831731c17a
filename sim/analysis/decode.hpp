// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/thresholds.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <optional>

namespace rsim {

/// What the memory roof means for a decode step (scaling book inference.md §"decode"): the
/// matmuls read every weight once per step whatever the batch, so their intensity grows with it
/// and they leave the memory roof at the critical batch; attention reads each sequence's own KV
/// cache, so its intensity stays ≈ G (query heads per KV head) and it never does.
struct DecodeCritical {
  /// The token batch per device (one token per sequence) at which Σ FLOPs / Σ bytes of all the
  /// step's matmuls reaches the ridge; nullopt when the step has no matmul with a batch axis.
  std::optional<CriticalBatch> matmuls;
  /// Sequences of the workload per sequence a device computes (the data-parallel split): the
  /// critical batch of the whole workload is `matmuls->tokens × replicas`.
  double replicas = 1.0;
  double attention_intensity = 0.0;  ///< Σ FLOPs / Σ main-memory bytes of the step's attention
  std::int64_t group_size = 1;       ///< G: query heads per KV head
  double ridge = 0.0;                ///< peak of the matmuls' compute path / main-memory bandwidth
};

/// The critical decode batch of a (sharded) decode-step graph costed in `table`.
DecodeCritical decode_critical(const Scenario& scenario, const OpGraph& graph,
                               const CostTable& table, const Roofs& roofs);

/// One evaluation of a step or prefill: its bounds (lower = Σ per-op max, upper = Σ per-op sum).
struct PhaseTimes {
  Seconds lower;
  Seconds upper;
  Seconds expected;  ///< Totals::t_expected's
};

/// A whole request (`workload.decode_steps: N`): the prefill of the `context`-token prompt, which
/// emits the first output token, then N decode steps with c = context … context + N − 1 cached
/// tokens, each emitting one more (N + 1 output tokens per sequence).
struct DecodeRequest {
  std::int64_t prompt_tokens = 0;
  std::int64_t steps = 0;
  PhaseTimes prefill;     ///< time to first token
  PhaseTimes first_step;  ///< the step at c = context
  PhaseTimes last_step;   ///< the step at c = context + N − 1
  PhaseTimes decode;      ///< Σ over the N steps
  /// true: the per-step time was found affine in c (every op held by the same roof at both ends,
  /// and the midpoint on the line), so Σ = N · (first + last) / 2 exactly; false: every step
  /// was evaluated and summed.
  bool affine = false;
  int evaluations = 0;  ///< runs of the cost model, the prefill included
  /// K and V one device caches at the last step (context + N tokens per sequence): the most the
  /// request holds.
  Bytes last_step_kv_cache;

  [[nodiscard]] PhaseTimes total() const {
    return {prefill.lower + decode.lower, prefill.upper + decode.upper,
            prefill.expected + decode.expected};
  }
  /// Mean time per output token after the first (time between tokens): Σ steps / N.
  [[nodiscard]] PhaseTimes per_output_token() const {
    const auto n = static_cast<double>(steps);
    return {decode.lower / n, decode.upper / n, decode.expected / n};
  }
};

/// The request's prompt: a prefill of `context` tokens per sequence that writes the KV cache.
Scenario prompt_prefill_scenario(const Scenario& scenario);
/// One decode step of the request at `context` cached tokens.
Scenario decode_step_scenario(const Scenario& scenario, std::int64_t context);

}  // namespace rsim
