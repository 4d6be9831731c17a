// SPDX-License-Identifier: MIT
#pragma once
// How a step's ops are scheduled beyond running one after another: pipeline interleaving and its
// bubble, gradient reductions overlapped with the backward pass, tensor-axis collectives
// overlapped with their matmuls, and weights / activations / optimizer state offloaded to host
// memory. analyze_step() applies it to every pipelined or training run, and the training search
// ranks the plans it derives from one costing with the same function, so a ranked plan is what
// `rsim run` reproduces.

#include "sim/analysis/bounds.hpp"
#include "sim/analysis/footprint.hpp"
#include "sim/analysis/training.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <memory>
#include <optional>

namespace rsim {

/// Σ over some rows of a costed table, each row × its count.
struct RowSums {
  double lower = 0.0;  ///< Σ per-op max
  double upper = 0.0;  ///< Σ per-op sum
  double math = 0.0;
  double memory = 0.0;
  double network = 0.0;

  /// Adds row `row` × its count; `lower` takes `row_time` (its max, or its expected time) and
  /// `network` takes `network_time` (its T_net, or a collective's expected time).
  void add(const CostTable& table, std::size_t row, double row_time, double network_time);
};

/// One pass group's sums (forward; backward with the recomputation).
struct PassSums {
  double lower = 0.0;
  double sends = 0.0;  ///< lower bound of the stage-boundary sends (once per chunk)
  /// lower bound (T_net) of the tensor axis's AG / RS inside one network domain (what a
  /// collective matmul can hide)
  double tensor_collectives = 0.0;
  double matmuls = 0.0;         ///< lower bound of the matmuls
  double weight_gathers = 0.0;  ///< lower bound (T_net) of the weight all-gathers (FSDP)
  double device = 0.0;          ///< the pass's device work (every op but the collectives)
};

/// What offloading moves and keeps, per device.
struct OffloadBytes {
  double weights = 0.0;          ///< the held layers' weights
  double optimizer = 0.0;        ///< the held layers' optimizer state
  double activations = 0.0;      ///< all layers' saved activations, every microbatch in flight
  double per_microbatch = 0.0;   ///< saved activations one microbatch writes over the held layers
  double resident_share = 1.0;   ///< of the layers' weights / state kept in HBM: min(1, 2/ℓ)
  double hbm_activations = 0.0;  ///< saved activations left in HBM when they are offloaded
};

/// Everything of one costing (at one chunk per stage, nothing overlapped or offloaded) that a
/// schedule reads: what every schedule choice of the same plan shape derives from.
struct ScheduleInputs {
  RowSums sends;      ///< the stage-boundary sends
  RowSums work;       ///< every row but the optimizer's
  RowSums gradients;  ///< the data axis's weight-gradient reductions
  /// The share of the device's compute the hidden collectives take while they run under it
  /// (NetworkTier::processor_usage of their tier; the largest over several tiers): the tensor
  /// axis's, the gradient reductions' and the weight gathers'.
  double tensor_usage = 0.0;
  double gradient_usage = 0.0;
  double weights_usage = 0.0;
  double backward_device = 0.0;  ///< the backward pass's device work (Σ max(T_math, T_mem))
  PassSums forward;
  PassSums backward;  ///< with the recomputation
  double optimizer_lower = 0.0;
  /// lower bound (T_net) of the optimizer's all-gathers of the updated weights (ZeRO-1/2)
  double optimizer_gathers = 0.0;
  Totals ops;  ///< the ops one after another (Σ per-op bounds), before any schedule
  OffloadBytes offload;
  Footprint footprint;  ///< before offloading
  std::int64_t stages = 1;
  std::int64_t microbatches = 1;
  std::int64_t tensor = 1;    ///< devices of the tensor (mlp) axis
  double layers_held = 1.0;   ///< layers one device holds
  double host_bandwidth = 0;  ///< B/s of the host link (0: no host memory)
  double host_capacity = 0;   ///< B of host memory per device
  /// The same sums with each op's expected time in place of its max (sim/cost/expected.hpp):
  /// schedule_step's lower bound of these is the expected step. Null inside that view.
  std::shared_ptr<const ScheduleInputs> expected;
  /// The same sums with each op's device time alone (no network): the lower bound's schedule
  /// when the network is fully overlapped with the device work. Null inside the views.
  std::shared_ptr<const ScheduleInputs> device;
};

/// What the schedule makes of a step.
struct StepTimes {
  double step_lower = 0.0;
  double step_upper = 0.0;
  /// The lower bound's schedule over the ops' expected times (ScheduleInputs::expected; 0 without).
  double step_expected = 0.0;
  double bubble = 0.0;  ///< the lower bound's bubble: (p − 1)/(v·m) × the pipelined work
  double bubble_upper = 0.0;
  double bubble_fraction = 0.0;  ///< (p − 1)/(v·m + p − 1)
  double work_lower = 0.0;       ///< the pipelined work the bubble is a share of
  double idle = 0.0;             ///< (p − 1)/(v·m)
  double t_math = 0.0;           ///< the ops' Σ with the extra chunks' sends
  double t_mem = 0.0;
  double t_net = 0.0;
  double t_host = 0.0;             ///< the host link's busiest direction, Σ over the passes
  double tensor_hidden = 0.0;      ///< tensor-axis collective time the overlap takes off
  double weights_hidden = 0.0;     ///< weight all-gather time the prefetch takes off
  double extra_sends_lower = 0.0;  ///< (v − 1) × the sends' lower bound
  double extra_sends_upper = 0.0;
  Footprint footprint;      ///< main memory after offloading
  double host_bytes = 0.0;  ///< host memory the offloaded state takes, per device
};

/// The sums of a costed (per-device) graph a schedule reads, with the plan's and the scenario's
/// figures; `memory` is the training footprint's parts (nullopt for inference).
ScheduleInputs schedule_inputs(const Scenario& scenario, const OpGraph& graph,
                               const CostTable& table, const Bounds& bounds,
                               const Footprint& footprint,
                               const std::optional<TrainingMemory>& memory,
                               const ParameterCount& parameters, const Roofs& roofs);

/// The step under one schedule choice (`choice`: the interleave v, the overlaps and the
/// offloading of workload.training). Lower bound: the longer of the device's schedule (every
/// op's device time, the bubble, the host transfers) and the network's Σ T_net: the frameworks'
/// prefetches and overlaps (FSDP, ZeRO, DP gradient buckets, TP comm overlap, XLA async
/// collectives) may hide any collective under device work, so no schedule beats either.
/// The schedule of the choice's overlaps, over each op's max, is
///   step = ops + Δpasses + Δgradients + Δoptimizer + (v − 1)·sends + bubble,
/// each pass the longer of its ops (less what its overlaps hide) and its host transfers;
/// bubble = (work + Δpasses + (v − 1)·sends) · (p − 1)/(v·m) (Narayanan et al. 2021, §2.2.2).
/// Upper bound: nothing overlapped, the host transfers added.
StepTimes schedule_step(const ScheduleInputs& inputs, const Training& choice);

/// Applies the schedule of `scenario` to a costed run: the step's bounds (total and first
/// stage) and footprint become the schedule's; returns the pipeline's figures when the plan
/// pipelines (p > 1).
std::optional<PipelineSchedule> apply_schedule(const ScheduleInputs& inputs,
                                               const Scenario& scenario, Bounds& bounds,
                                               Footprint& footprint, StepTimes& times);

}  // namespace rsim
