// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/bounds.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/graph/backward.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// What a training step keeps per device besides the weights.
struct TrainingMemory {
  Bytes gradients;        ///< one gradient per stored parameter, in gradient_dtype
  Bytes optimizer_state;  ///< optimizer_state_bytes_per_parameter × stored parameters
  /// Activations saved for the backward pass at the peak: per layer the outputs of its forward
  /// ops (the inputs their backward reads; a fused elementwise op saves nothing of its own), for
  /// the layers one device holds, × the microbatches in flight (1 without a pipeline, min(m, p)
  /// for the first stage of a 1F1B pipeline, Narayanan et al. 2021 §2.2.1), plus the head's.
  /// Full recomputation keeps only each layer's input, plus one layer's outputs while it is
  /// recomputed; selective drops attention's internals (Korthikanti et al. 2022, §4-5).
  Bytes saved_activations;
  /// Its parts: saved_activations = (layer_saved × layers + recompute_working) × in_flight + head.
  Bytes layer_saved;        ///< what one layer keeps for one microbatch (its input under full)
  Bytes recompute_working;  ///< full recomputation: one layer's outputs while recomputed
  Bytes head;               ///< embedding and head outputs, one microbatch
  double layers = 0.0;      ///< layers one device holds
  double in_flight = 1.0;   ///< microbatches whose activations are held at once
};

/// `graph` is the per-device (sharded) training graph; `stored_fraction` the share of the
/// parameters one device stores (FSDP/ZeRO-3 and pipeline stages split them).
TrainingMemory training_memory(const Scenario& scenario, const OpGraph& graph,
                               const ParameterCount& parameters, double stored_fraction);

/// Devices along the mesh axis the `layers` rule names (1 without pipeline parallelism).
std::int64_t pipeline_stages(const Plan& plan);

/// Σ over the ops of one pass of a training step (all microbatches).
struct PassTotals {
  Pass pass = Pass::forward;
  Flops flops;
  Seconds t_math;
  Seconds t_mem;  ///< main memory
  Seconds t_net;
  Seconds t_lower;     ///< Σ per-op max
  Seconds t_upper;     ///< Σ per-op sum
  Seconds t_expected;  ///< Σ per-op expected, collectives exposed
};
/// The passes present, in step order (forward, recompute, backward, optimizer).
std::vector<PassTotals> pass_totals(const OpGraph& graph, const CostTable& table);

/// The training chapter's critical thresholds (scaling book training.md, gpus.md), from the cost
/// model of one mesh axis the plan uses:
/// - data (the `batch` rule; DP, FSDP, or DP over DCN across slices): the axis's collectives
///   (gradient reductions, FSDP gathers) do not grow with the batch while T_math does, so the
///   tokens per data shard at which a pass's T_math reaches its T_net on the axis is
///   tokens × T_net / T_math (the book's B/X > C/W, C/W_dcn across slices);
/// - tensor (the `mlp` rule, Megatron TP): T_math falls as 1/Y while the activations'
///   all-reduces do not shrink, so the largest degree Y with T_math(Y) ≥ T_net(Y): the
///   collectives re-costed at each degree on the axis's tier (its domain unbounded), T_math
///   scaled by Y/Y' (the book's Y < F·W/C).
/// Each is taken over the layers' matmuls and attention, per pass, and the tighter pass kept.
struct AxisThreshold {
  std::string mesh_axis;
  std::string network;
  std::int64_t size = 1;
  bool data = true;                        ///< data (batch-split) axis, else tensor
  Pass pass = Pass::forward;               ///< the pass that sets the threshold
  Seconds t_math;                          ///< that pass's T_math over the layers
  Seconds t_net;                           ///< that pass's collectives on this axis
  double tokens_per_shard = 0.0;           ///< data: the step's tokens per data shard
  double critical_tokens_per_shard = 0.0;  ///< data: tokens × T_net / T_math
  std::int64_t largest_degree = 0;  ///< tensor: largest Y with T_math ≥ T_net (1: even 2 is not)
  bool beyond_domain = false;       ///< tensor: largest_degree exceeds the tier's domain
};
std::vector<AxisThreshold> training_thresholds(const Scenario& scenario, const OpGraph& graph,
                                               const CostTable& table, const Roofs& roofs);

/// FSDP + TP (scaling book training.md, "FSDP + tensor parallelism"): N = X·Y devices, weights
/// gathered over the data axis X (bytes ∝ 1/Y) and activations all-reduced over the tensor axis
/// Y (bytes ∝ 1/X), T_math fixed by N. Every split X'·Y' = N is costed by re-costing the run's
/// forward collectives of both axes with their bytes scaled and their axis resized; the best
/// split minimises max(T_FSDP, T_TP) (the book's X_opt = √(B·N·M_X/(F·M_Y))), and the smallest
/// batch that is compute-bound under its best split is tokens × min over splits with
/// T_TP ≤ T_math of T_FSDP / T_math (T_FSDP is constant in the batch, T_TP and T_math grow with it;
/// the book's B/N > α²/(M_X·M_Y·F)).
struct FsdpTpSplit {
  std::int64_t data = 1;               ///< X of the best split
  std::int64_t tensor = 1;             ///< Y of the best split
  Seconds t_math;                      ///< the forward pass's T_math over the layers (any split)
  Seconds t_fsdp;                      ///< the best split's weight gathers
  Seconds t_tensor;                    ///< the best split's activation all-reduces
  double tokens_per_device = 0.0;      ///< the step's tokens / N
  double min_tokens_per_device = 0.0;  ///< compute-bound above this (0: never, T_TP > T_math)
  std::int64_t min_tokens_data = 1;    ///< the split that reaches it
};
std::optional<FsdpTpSplit> fsdp_tp_split(const Scenario& scenario, const OpGraph& graph,
                                         const CostTable& table, const Roofs& roofs);

/// A 1F1B pipeline's schedule (Narayanan et al. 2021, "Efficient Large-Scale Language Model
/// Training on GPU Clusters Using Megatron-LM", §2.2): p stages, m microbatches, v interleaved
/// chunks per stage. Each device idles (p − 1)/(v·m) of its forward and backward work, so the
/// bubble is (p − 1)/(v·m + p − 1) of the step.
struct PipelineSchedule {
  std::int64_t stages = 1;
  std::int64_t microbatches = 1;
  std::int64_t chunks = 1;
  double bubble_fraction = 0.0;  ///< of the step: (p − 1)/(v·m + p − 1)
  Seconds work_lower;            ///< Σ per-op max over the forward and backward passes
  Seconds bubble_lower;          ///< (p − 1)/(v·m) × work_lower
  Seconds bubble_upper;
  Seconds bubble_critical;
};

}  // namespace rsim
