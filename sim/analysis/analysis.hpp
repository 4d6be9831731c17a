// SPDX-License-Identifier: MIT
#pragma once
// One step of a scenario through the pipeline: its planned graph costed against its roofs, with
// the bounds, critical batches, footprint and training figures the reports read.

#include "sim/analysis/bounds.hpp"
#include "sim/analysis/decode.hpp"
#include "sim/analysis/footprint.hpp"
#include "sim/analysis/schedule.hpp"
#include "sim/analysis/thresholds.hpp"
#include "sim/analysis/training.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/graph/graph.hpp"
#include "sim/graph/shard/shard.hpp"
#include "sim/graph/step_graph.hpp"
#include "sim/graph/transformer.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace rsim {

/// The critical token batch of one matmul group of one stage, all its ops taken together.
struct GroupCritical {
  std::string stage;
  std::string group;
  std::optional<CriticalBatch> critical;
};

/// Everything one scenario run produces: the pipeline's stages kept for the reports.
struct RunResult {
  Scenario scenario;
  Roofs roofs;
  OpGraph graph;
  CostTable table;                                     ///< rows in topological order
  std::vector<std::optional<CriticalBatch>> critical;  ///< per table row (matmuls only)
  Bounds bounds;
  ParameterCount parameters;
  std::vector<GroupCritical> group_critical;  ///< per stage, per matmul group present
  Footprint footprint;
  std::vector<std::string> notes;  ///< what the plan had to do (KV heads replicated, ...)
  /// Under a plan that splits the model width D: the width above which the matmuls whose
  /// partial sums are all-reduced escape the network roof (T_math ∝ D, the all-reduce is not):
  /// max over those matmuls of D · T_net / T_math (How to Scale Your Model, roofline chapter:
  /// D/2 > C/W on 2 chips).
  std::optional<double> critical_d;
  std::optional<DecodeCritical> decode_critical;   ///< decode: the critical decode batch
  std::optional<DecodeRequest> request;            ///< decode with decode_steps: the request
  std::optional<PipelineSchedule> pipeline;        ///< a `layers` rule: its bubble (in the bounds)
  std::vector<AxisThreshold> training_thresholds;  ///< training: per data and tensor mesh axis
  std::optional<FsdpTpSplit> fsdp_tp;              ///< training under FSDP + TP: the best split
  std::optional<TrainingMemory> training_memory;   ///< training: the parts of the footprint
  /// Training or a pipeline: what the schedule stage read of the costing (every schedule choice
  /// of this plan shape derives from it: the training search's) and what it made of the step.
  std::optional<ScheduleInputs> schedule;
  std::optional<StepTimes> step;
};

/// The scenario's op graph, sharded by its plan when it spans more than one device.
ShardedGraph planned_graph(const Scenario& scenario);

/// Runs the pipeline for one step of the scenario: graph → cost → thresholds → bounds (a decode
/// request's prefill and steps are analyze()'s, request.hpp, above this). The roofs must come from
/// the scenario's hardware (resolve_roofs); a compute path they lack is an InputError. `cache`
/// (optional, one per thread) keeps tile-search candidates across runs (sweeps, searches).
RunResult analyze_step(Scenario scenario, Roofs roofs, TileCache* cache = nullptr);

/// The roofs a scenario runs against: its hardware in `mode` (empty: the scenario's mode), with
/// the scenario's (variant's) overrides, then `extra` (the command line's) on top.
Roofs scenario_roofs(const Scenario& scenario, std::string_view mode,
                     const RoofOverrides& extra = {});

}  // namespace rsim
