// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/bounds.hpp"
#include "sim/analysis/decode.hpp"
#include "sim/analysis/thresholds.hpp"
#include "sim/analysis/training.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/graph/graph.hpp"
#include "sim/graph/shard.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace rsim {

/// The critical token batch of one matmul group of one stage, all its ops taken together.
struct GroupCritical {
  std::string stage;
  std::string group;
  std::optional<CriticalBatch> critical;
};

/// What the run keeps in memory per device (weights and the KV cache), in bytes. For a decode
/// request (`decode_steps`), the footprint of its last step, where the KV cache is largest.
struct Footprint {
  Bytes weights;   ///< parameters in the weight dtype one device stores (× batch if per-batch)
  Bytes kv_cache;  ///< K and V one device caches (a later stage's or a decode step's)
  /// Inference: the largest working set of one op (its activation inputs and outputs);
  /// training: the activations saved for the backward pass (TrainingMemory::saved_activations).
  Bytes activations;
  Bytes gradients;        ///< training: gradients of the stored parameters
  Bytes optimizer_state;  ///< training: master weights and moments of the stored parameters
  Bytes capacity;         ///< main memory of one device, less the host's share of unified memory
  [[nodiscard]] Bytes total() const {
    return weights + kv_cache + activations + gradients + optimizer_state;
  }
  [[nodiscard]] bool fits() const { return total() <= capacity; }
  /// capacity − total: what is left (negative: the shortfall of a plan that does not fit).
  [[nodiscard]] Bytes free() const { return capacity - total(); }
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
  /// max over those matmuls of D · T_net / T_math (seed 004: D/2 > C/W on 2 chips).
  std::optional<double> critical_d;
  std::optional<DecodeCritical> decode_critical;   ///< decode: the critical decode batch
  std::optional<DecodeRequest> request;            ///< decode with decode_steps: the request
  std::optional<PipelineSchedule> pipeline;        ///< a `layers` rule: its bubble (in the bounds)
  std::vector<AxisThreshold> training_thresholds;  ///< training: per data and tensor mesh axis
  std::optional<FsdpTpSplit> fsdp_tp;              ///< training under FSDP + TP: the best split
  std::optional<TrainingMemory> training_memory;   ///< training: the parts of the footprint
};

/// The scenario's op graph, sharded by its plan when it spans more than one device.
ShardedGraph planned_graph(const Scenario& scenario);

/// What an inference run's footprint reads of its graph, found once: the tensors that count, op
/// by op as weights_and_cache visits them (stage by stage, in `order`), and the figures that do
/// not depend on the graph's sizes. It points into the graph, which must stay where it is; its
/// footprint follows the graph's sizes (a batch line's workspace, point after point).
struct FootprintPlan {
  struct Visit {
    const Op* op = nullptr;
    double steps = 1.0;                      ///< its stage's (runs = count / steps)
    std::vector<const Tensor*> kv_cache;     ///< a cache write's outputs, a decode step's K/V input
    bool working_set = false;                ///< its activations count (not fused, no collective)
    std::vector<const Tensor*> activations;  ///< its activation inputs, then outputs
    std::vector<const Tensor*> per_batch_weights;  ///< a per-batch group's weights
    /// Its activations' bytes at the graph's current sizes, summed in order.
    [[nodiscard]] Bytes working_bytes() const;
  };
  Bytes weights;  ///< every parameter once, in the weight dtype
  double weight_fraction = 1.0;
  Bytes capacity;
  std::vector<Visit> visits;
};
FootprintPlan plan_footprint(const Scenario& scenario, const OpGraph& graph,
                             const std::vector<OpGraph::Vertex>& order,
                             const ParameterCount& parameters, double weight_fraction,
                             const Roofs& roofs);

/// An inference run's footprint: weights (× the plan's weight fraction), KV cache and the largest
/// working set, against the main memory.
Footprint weights_and_cache(const FootprintPlan& plan);
/// The same with the largest working set given (its visits' activations not summed): where the
/// caller knows it exactly (a batch line: affine in the batch).
Footprint weights_and_cache(const FootprintPlan& plan, Bytes activations);
/// The same from the graph; `order` is its topological order.
Footprint weights_and_cache(const Scenario& scenario, const OpGraph& graph,
                            const std::vector<OpGraph::Vertex>& order,
                            const ParameterCount& parameters, double weight_fraction,
                            const Roofs& roofs);

/// Runs the pipeline: graph → cost → thresholds → bounds. The roofs must come from the
/// scenario's hardware (resolve_roofs); a compute path they lack is an InputError. `cache`
/// (optional, one per thread) keeps tile-search candidates across runs (sweeps, searches).
RunResult analyze(Scenario scenario, Roofs roofs, TileCache* cache = nullptr);

/// The roofs a scenario runs against: its hardware in `mode` (empty: the scenario's mode), with
/// the scenario's (variant's) overrides, then `extra` (the command line's) on top.
Roofs scenario_roofs(const Scenario& scenario, std::string_view mode,
                     const RoofOverrides& extra = {});

/// Which dimension of X[B,D]·W[D,F] a matmul is split over across devices.
enum class MatmulSharding {
  none,      ///< one device
  contract,  ///< D: X[B, D_X]·W[D_X, F] → partial sums, all-reduced (scaling book case 3)
  batch,     ///< B: X[B_X, D]·W[D, F] → [B_X, F], no communication (case 1)
  out,       ///< F: X[B, D]·W[D, F_X] → [B, F_X], no communication (case 1)
};
std::optional<MatmulSharding> parse_matmul_sharding(std::string_view name);  ///< d, batch, f
std::string_view to_string(MatmulSharding sharding);

/// The devices and the split of a `rsim matmul`.
struct MatmulPlan {
  std::int64_t devices = 1;
  MatmulSharding shard = MatmulSharding::none;
  std::string network;                ///< the tier the devices talk over
  bool in_network_reduction = false;  ///< all-reduce in the switch (SHARP), where it can
};

/// One X[B,D]·W[D,F] matmul, on one device or split over several (`rsim matmul`).
struct MatmulResult {
  Roofs roofs;
  MatmulShape global;  ///< the whole matmul
  MatmulPlan plan;
  Op op;                                  ///< the per-device matmul
  OpCost cost;                            ///< per device: T_math and T_mem
  std::optional<CriticalBatch> critical;  ///< per-device token batch meeting the memory ridge
  std::optional<Collective> collective;   ///< the communication the split needs
  std::optional<CollectiveCost> collective_cost;
  Seconds t_net;
  Seconds t_lower;  ///< max(T_math, T per memory tier, T_net)
  Seconds t_upper;  ///< T_math + Σ T per memory tier + T_net
  Bound bound = Bound::memory;
  /// D-sharding only: the model width above which T_math exceeds T_net (the network roof):
  /// T_math ∝ D while the all-reduced partial sums do not grow with D, so D* = D · T_net / T_math.
  std::optional<double> critical_d;
};

/// `tiles` fixes the tile of one or more on-chip tiers (`--tile`); the others are chosen.
MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs, const MatmulPlan& plan = {},
                            const TileChoices& tiles = {});

/// `rsim threshold`: the smallest value of an integer scenario key (workload.batch,
/// workload.seq_len) at which ΣT_math reaches ΣT_mem (or ΣT_net) over a scope: the whole run, or
/// one matmul group of one stage ("prefix/mlp"). Found by bracketing (doubling) and bisection on
/// the real cost model, so it agrees with the closed forms where they exist.
struct ThresholdQuery {
  std::string key = "workload.batch";
  Bound roof = Bound::memory;                 ///< memory or network
  std::string scope;                          ///< "" for the whole run, else "stage/group"
  std::int64_t high = std::int64_t{1} << 24;  ///< search up to here
  std::int64_t step = 1;  ///< values searched are multiples of this (a plan's batch split)
};

struct ThresholdResult {
  std::optional<std::int64_t> value;  ///< nullopt: T_math stays below the roof up to `high`
  Seconds t_math;                     ///< at `value` (or at `high`)
  Seconds t_roof;
  int evaluations = 0;
};

/// `load(x)` must return the scenario with the key set to x, and `roofs_of` its roofs.
ThresholdResult find_threshold(const ThresholdQuery& query,
                               const std::function<Scenario(std::int64_t)>& load,
                               const std::function<Roofs(const Scenario&)>& roofs_of);

/// find_threshold for a named parameter of a scenario file: "batch" or "seq_len" (set as
/// workload keys and re-validated; a plan that splits the batch makes the search step by its
/// devices), or "d_model" (every stage's hidden size; stepping by the devices a plan splits
/// `embed` over). `query.key` names the parameter on entry and the key searched on return.
ThresholdResult threshold_scenario(const std::filesystem::path& path,
                                   const ScenarioOverrides& overrides, ThresholdQuery& query,
                                   std::string_view mode, const RoofOverrides& roof_overrides);

/// One collective on one network tier (`rsim collective`).
struct CollectiveResult {
  std::string hardware;
  NetworkTier tier;
  Collective collective;  ///< as costed: wraparound resolved against the tier
  CollectiveCost cost;
};

/// Costs a collective on the named tier. A torus axis has wraparound links only at the tier's
/// wraparound size, so `collective.wraparound` is kept only where every axis has it.
/// InputError if the tier does not exist.
CollectiveResult analyze_collective(Collective collective, std::string_view network,
                                    const Roofs& roofs);

/// The tier of that name, or an InputError listing the tiers (`flag` names the option).
const NetworkTier& require_network(const Roofs& roofs, std::string_view network,
                                   std::string_view flag);

}  // namespace rsim
