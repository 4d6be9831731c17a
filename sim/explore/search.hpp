// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/request.hpp"
#include "sim/explore/rank_by.hpp"
#include "sim/explore/shard.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// What a plan search ranks by: the lower bound (latency), sequences per device-second
/// (throughput), or device-seconds per sequence (cost: devices × lower bound / batch, the
/// reciprocal of throughput, reported as what a sequence costs in accelerator time).
enum class SearchObjective { latency, throughput, cost };
std::optional<SearchObjective> parse_search_objective(std::string_view name);
std::string_view to_string(SearchObjective objective);

/// One costed plan of a search: `devices` run one copy of the scenario's batch, and the N
/// devices of the search hold N / devices such replicas.
struct SearchCandidate {
  std::string preset;
  std::string mesh;  ///< "data: 4 over ib, model: 8 over nvlink"
  std::int64_t devices = 1;
  std::int64_t replicas = 1;
  Totals total;
  Footprint footprint;
  double sequences_per_device_s = 0.0;  ///< batch / (expected time × devices)
  bool pareto = false;  ///< no other plan is both faster and does more work per device
  std::vector<MeshAxis> mesh_axes = {};  ///< the mesh itself, axis by axis
  /// A decode request's (decode_steps > 0): its prefill (time to first token), steps and total.
  std::optional<DecodeRequest> request = {};
};

/// Why a search did not cost a plan; to_string gives the phrase the reports count by.
enum class RejectionReason {
  does_not_divide,   ///< a sharded axis, the experts or the layers do not divide (PlanProblem)
  exceeds_domain,    ///< the mesh puts more devices on a tier than its domain holds
  uneven_hierarchy,  ///< a hierarchical axis does not split into whole inner domains
  invalid_plan,      ///< any other PlanProblem
  memory,            ///< does not fit in (HBM) memory
  host_memory,       ///< offloaded state does not fit in host memory
  mesh_tiers,        ///< a training mesh does not fit the tiers
  layers,            ///< the layers do not divide over the pipeline
  batch,             ///< the batch does not divide into microbatches over the replicas
  interleave,        ///< interleaving needs the microbatches divisible by the stages
};
std::string_view to_string(RejectionReason reason);
/// The reason of a plan the validation or the sharding refused.
RejectionReason rejection_reason(PlanProblem problem);

/// A plan the search could not cost, and why.
struct SearchRejection {
  std::string preset;
  std::string mesh;
  RejectionReason reason = RejectionReason::invalid_plan;
  std::string detail;  ///< the error message or the numbers
};

struct SearchResult {
  std::string scenario;
  std::int64_t devices = 1;
  SearchObjective objective = SearchObjective::latency;
  RankBy rank_by = RankBy::expected;
  std::int64_t seen = 0;
  std::vector<SearchCandidate> ranked;  ///< best first (ties: upper bound, then preset, mesh)
  std::vector<SearchRejection> rejected;
};

/// Every inference plan for `devices` devices: each n dividing `devices` (n devices per
/// replica), each factorization n = data × model, the model (tensor) axis placed inside the
/// innermost network tier first (NVLink node, ICI slice), the data axis on what is left, and each
/// plan preset that fits the mesh's shape; plans that do not divide the model or do not fit in
/// memory are rejected with their reason, the rest costed, ranked and marked on the Pareto front
/// of latency against sequences per device-second. Deterministic: same input, same ranking.
/// The divisors of `value` ≥ 1, ascending (the degrees a mesh axis of `value` devices can take).
std::vector<std::int64_t> divisors(std::int64_t value);

/// The most devices a search plans for: 2^24 (a search enumerates every split of them).
inline constexpr std::int64_t kMaxSearchDevices = kMaxMeshDevices;
/// InputError naming --devices unless 1 ≤ devices ≤ kMaxSearchDevices.
void check_search_devices(std::int64_t devices);

/// What a plan does, whatever its axes are called: each rule as "logical→size over tier", the
/// ZeRO stage and the switch reduction. Two plans with one signature cost the same.
std::string plan_signature(const Plan& plan);

/// A distinct plan on a scenario's mesh and the presets that make it (several presets can shard
/// alike on one mesh: shard_batch and data_parallel on one axis).
struct MeshPlan {
  Plan plan;
  std::vector<std::string> presets;
};

/// The plans `rsim compare` sets beside a scenario's own when given none: every preset that can
/// be made on the scenario's mesh (expert parallelism only for a mixture of experts), each plan
/// once. The first is the scenario's own plan, with the presets that shard as it does.
std::vector<MeshPlan> plans_on_mesh(const Scenario& scenario);

SearchResult search_plans(const Scenario& scenario, const Roofs& roofs, std::int64_t devices,
                          SearchObjective objective, RankBy rank_by = RankBy::expected);

/// One training plan: N devices = tensor × pipeline × data.
struct TrainingPlan {
  std::int64_t tensor = 1;    ///< t: Megatron tensor parallelism over 'model'
  std::int64_t pipeline = 1;  ///< p: stages of L/p layers over 'stage'
  std::int64_t data = 1;      ///< d: data-parallel replicas over 'data'
  /// The order in which the axes take the innermost network tier (NVLink node, ICI slice): an
  /// index into training_axis_orders(), 0 = model, data, stage (Megatron-LM's rank order).
  std::int64_t placement = 0;
  /// ZeRO over 'data' (Rajbhandari et al. 2020): 0 replicated; 1 the optimizer state split d
  /// ways; 2 the gradients too; 3 the weights too (the zero3_3d presets).
  std::int64_t zero_stage = 0;
  bool sequence_parallel = false;  ///< Megatron sequence parallelism on 'model' (t > 1)
  std::int64_t microbatches = 1;   ///< m per step
  Recompute recompute = Recompute::none;
  std::int64_t interleave = 1;  ///< v: layer chunks per pipeline stage (p > 1)
  /// The data axis's gradient reductions overlapped with the last microbatch's backward (d > 1).
  bool overlap_gradients = false;
  /// The tensor axis's all-gathers and reduce-scatters run as ring steps under the matmuls that
  /// consume or produce them (Megatron-LM's --tp-comm-overlap, which needs sequence parallelism;
  /// the scaling book's collective matmul).
  bool overlap_tensor = false;
  /// Kept in the hardware's host_memory and streamed over its link, two layers resident at once
  /// (Calculon's weight/activations/optimizer offload; ZeRO-Offload / ZeRO-Infinity).
  bool offload_weights = false;
  bool offload_activations = false;
  bool offload_optimizer = false;
  /// megatron_3d, megatron_3d_sp, zero3_3d or zero3_3d_sp.
  [[nodiscard]] std::string_view preset() const;
  /// The preset, with "+zero1" or "+zero2" for plan.zero_stage 1 or 2.
  [[nodiscard]] std::string sharding() const;
  /// The placement as its axis order: "model>data>stage".
  [[nodiscard]] const std::string& placement_order() const;
  /// What is offloaded: "weights+activations", or "none".
  [[nodiscard]] std::string offloaded() const;
  /// "t8 p16 d8 megatron_3d_sp+zero1 m192 full v2 overlap tp-overlap offload:weights".
  [[nodiscard]] std::string label() const;
};

/// The orders a training search places the mesh axes in, each "model>data>stage" style (the
/// first takes the innermost tier first); TrainingPlan::placement indexes it.
const std::vector<std::string>& training_axis_orders();

/// A costed training plan. Times are one device's, for one step: Σ over its ops (each op's
/// max(T_math, T_mem, T_net) for the lower bound, their sum for the upper), plus the pipeline
/// bubble; T_math, T_mem (main memory) and T_net are the Σ over the ops without the bubble.
struct TrainingCandidate {
  TrainingPlan plan;
  std::string mesh;             ///< the mesh axes over one device (size 1 left out)
  std::string plan_yaml;        ///< the plan as a YAML flow map (what run_args sets)
  std::int64_t microbatch = 1;  ///< b = batch / (m · d) sequences per microbatch and replica
  /// The vocabulary does not divide over t: padded to a multiple of 128·t (Megatron-LM's).
  bool vocab_padded = false;
  Seconds step_lower;
  Seconds step_upper;
  Seconds step_expected;  ///< what the search ranks by (sim/cost/expected.hpp)
  Seconds t_math;
  Seconds t_mem;
  Seconds t_net;
  Seconds t_host;  ///< the host link's busiest direction, Σ over the passes (offload)
  /// Tensor-axis collective time the overlap takes off the passes (none where the host link
  /// holds a pass anyway).
  Seconds tensor_hidden;
  Seconds bubble;                ///< lower bound's bubble: (p − 1)/(v·m) × the pipelined work
  double bubble_fraction = 0.0;  ///< (p − 1)/(v·m + p − 1)
  Footprint footprint;           ///< main memory (HBM), what stays after offloading
  Bytes host_bytes;              ///< host memory the offloaded state takes, per device
  double mfu = 0.0;              ///< model FLOPs / (N × peak × step_expected)
};

/// The arguments that, given to `rsim run SCENARIO` (after the search's own scenario options),
/// reproduce a ranked plan: its plan and its workload keys as `--set KEY=VALUE` pairs. That run's
/// step bounds equal the candidate's exactly (both are the schedule stage's on one costing).
std::vector<std::string> run_args(const TrainingCandidate& candidate);

/// The key the training search ranks a candidate by (the ranked step, the bounds, then the plan's
/// dimensions), as numbers: `rsim merge` ranks the plans of a search's shards by it.
std::vector<double> rank_key_values(const TrainingCandidate& candidate, RankBy rank_by);

/// Training plans not costed for one reason; `plans` of them share the plan shown (the others
/// differ in a dimension the reason does not depend on).
struct TrainingRejection {
  TrainingPlan plan;
  RejectionReason reason = RejectionReason::invalid_plan;
  std::string detail;
  std::int64_t plans = 1;
};

struct TrainingSearchResult {
  std::string scenario;
  /// The search's own scenario options as `rsim run` takes them (--mode, --set, …): they come
  /// before a plan's run_args in the line that reproduces it.
  std::vector<std::string> scenario_args;
  std::int64_t devices = 1;
  RankBy rank_by = RankBy::expected;
  std::int64_t batch = 1;    ///< sequences per step
  std::int64_t seq_len = 0;  ///< tokens per sequence
  std::int64_t layers = 0;
  std::int64_t seen = 0;      ///< plans in the space
  std::int64_t analyses = 0;  ///< analyze() runs (each costs every interleave v of its plan)
  std::int64_t costed = 0;    ///< plans that fit and were costed (ranked keeps the best `keep`)
  double model_flops = 0.0;   ///< forward + backward FLOPs of one step, no recomputation
  /// The best TrainingSearchOptions::keep of the costed plans (all when keep is 0), by
  /// step_lower, then step_upper, then plan order.
  std::vector<TrainingCandidate> ranked;
  std::vector<TrainingRejection> rejected;
  std::map<std::string, std::int64_t> rejected_by_reason;  ///< plans per reason (its phrase)
  std::int64_t threads = 1;
  /// Stopped by TrainingSearchOptions::cancel (Ctrl-C): `ranked`, `costed` and the rejections
  /// cover the `shapes_searched` of `shapes` plan shapes that finished; `seen` is the whole space.
  bool cancelled = false;
  std::int64_t shapes = 0;           ///< (t, p, d, placement, ZeRO, sp, recompute) tasks
  std::int64_t shapes_searched = 0;  ///< of them, those that finished
  /// The slice of the shapes searched (TrainingSearchOptions::shard): [shard_first, shard_end)
  /// of all_shapes; `seen`, `shapes` and the counts are the slice's.
  Shard shard;
  std::int64_t shard_first = 0;
  std::int64_t shard_end = 0;
  std::int64_t all_shapes = 0;
};

struct TrainingSearchOptions {
  std::int64_t threads = 0;  ///< 0: all hardware threads (TBB's default)
  std::function<void(std::size_t, std::size_t)> progress;  ///< (done, total), any thread
  /// Reject without costing what provably does not fit or divide (see search_training_plans);
  /// off costs every plan, for checking that the pruning loses nothing.
  bool prune = true;
  /// Also try pipeline degrees that do not divide the layers: Megatron-LM's uneven first and last
  /// stages (Llama 3 405B's 126 layers on 16), the busiest stage holding v·⌈L/(p·v)⌉.
  bool uneven_stages = false;
  /// How many of the best plans to keep in `ranked` (0: all). Millions of plans are costed;
  /// each task keeps only its best `keep`, so memory does not grow with the space.
  std::size_t keep = 0;
  RankBy rank_by = RankBy::expected;          ///< the step time ranked first
  const std::atomic<bool>* cancel = nullptr;  ///< set (by Ctrl-C) to stop early
  /// Search only this slice of the plan shapes, in their enumeration order.
  Shard shard;
};

/// Every training plan of a `phase: train` scenario on `devices` devices:
/// - t | N (tensor, the 'model' axis), p | N/t (pipeline, 'stage'), d = N/(t·p) ('data');
///   placed in each order of the three axes that gives a distinct plan (model, data, stage first:
///   Megatron-LM's): an axis goes on the innermost network tier while it divides what is left of
///   its domain (NVLink node, ICI slice); one larger than the whole domain, placed before any
///   other took room, spans the innermost tier and the next ("nvlink+ib"); any other axis goes
///   on the next tier;
/// - ZeRO stage 0 (replicated over data, megatron_3d), 1 or 2 (megatron_3d + plan.zero_stage)
///   or 3 (zero3_3d), the last three for d > 1; sequence parallelism off or on (t > 1);
/// - m ∈ divisors of the global batch B (b = B/(m·d) sequences per microbatch must be whole);
/// - recompute none, selective, full;
/// - with uneven_stages, also p ∤ L (p ≤ L), v then ∈ divisors of L with p·v ≤ L whose busiest
///   stage holds ⌈L/p⌉ layers, as v = 1's does (v·⌈L/(p·v)⌉ = ⌈L/p⌉);
/// - v ∈ divisors of L/p for p > 1 (1 otherwise); v > 1 needs m % p = 0 (Megatron-LM's
///   interleaved schedule, Narayanan et al. 2021 §2.2.2);
/// - for d > 1, the weight gradients' reductions over 'data' after the backward pass (as the
///   lower bound sums them) or overlapped with the last microbatch's backward: exposed
///   max(G/ℓ, G − B/m) of their time G (B the step's backward device time, ℓ the layers held);
/// - with sequence parallelism, the tensor axis's all-gathers and reduce-scatters after their
///   matmuls or overlapped with them as ring steps: per pass (forward; backward with the
///   recomputation) exposed max(0, C − (t−1)/t·G) of their time C, G the pass's matmuls;
/// - with the hardware's host_memory, every subset of {weights, saved activations, optimizer
///   state} offloaded: HBM keeps two of the ℓ layers' worth (the embedding and head stay), the
///   host the layers' whole; per step the link carries, in its busier direction, the layers'
///   weights in per microbatch in the forward (against the activations out) and in the backward
///   (plus the activations back), and the offloaded weights and state each way in the optimizer
///   step; each pass takes the longer of its ops and its transfers (the upper bound adds them).
/// Rejected with their reason: the mesh does not fit the tiers; p does not divide the layers;
/// weights, gradients and optimizer state alone exceed the memory (P/(t·p) parameters × their
/// bytes, the ZeRO-split parts / d, the offloadable parts at two layers' worth, before costing);
/// an offloading choice does not fit the host memory; b is not whole; the plan does not divide the
/// model (then at every m, so the other m are not costed); the costed footprint does not fit (a
/// larger microbatch of the same plan then does not fit either: the saved activations grow with
/// b·min(m, p) = min(B/d, b·p), so those are rejected uncosted); v > 1 with m % p ≠ 0. One
/// analyze() per (t, p, d, weights, sp, m, recompute) at v = 1; the other v and the overlap
/// follow exactly (the stage-boundary sends × v, the bubble (p − 1)/(v·m) × the pipelined work,
/// the hidden part of the reductions, the tensor overlap, the offloading). `prune` off costs what
/// the shortcuts skip. Ranked by the step's lower bound; ties by upper bound, then plan order (t,
/// p, ZeRO stage, sp, m, recompute, v, gradient overlap, tensor overlap, offloaded weights,
/// activations, optimizer ascending); `keep` > 0 keeps the best `keep`. Parallel with TBB; the
/// ranking does not depend on the thread count.
TrainingSearchResult search_training_plans(const Scenario& scenario, const Roofs& roofs,
                                           std::int64_t devices,
                                           const TrainingSearchOptions& options = {});

}  // namespace rsim
