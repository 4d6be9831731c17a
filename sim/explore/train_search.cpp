// SPDX-License-Identifier: MIT
// `rsim search` for a training scenario: tensor × pipeline × data plans, ZeRO stage 0–3, sequence
// parallelism, microbatches, recomputation and pipeline interleaving, costed and ranked by step
// time.
#include "sim/base/error.hpp"
#include "sim/base/parallel.hpp"
#include "sim/explore/search.hpp"
#include "sim/spec/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

namespace rsim {
namespace {

constexpr std::string_view kMeshReason = "mesh does not fit the tiers";
constexpr std::string_view kLayersReason = "layers do not divide over the pipeline";
constexpr std::string_view kBatchReason = "batch does not divide into microbatches";
constexpr std::string_view kModelReason = "does not divide the model";
constexpr std::string_view kMemoryReason = "does not fit in memory";
constexpr std::string_view kHostMemoryReason = "does not fit in host memory";
constexpr std::string_view kInterleaveReason = "interleaving needs m divisible by p";

constexpr std::array kRecomputeLevels{Recompute::none, Recompute::selective, Recompute::full};

// Gradient reductions after the backward pass, or overlapped with it: both where there is a data
// axis to reduce over, neither otherwise.
std::int64_t overlap_options(const TrainingPlan& shape) { return shape.data > 1 ? 2 : 1; }

std::string bytes_text(Bytes bytes) { return format_quantity(bytes.si(), Dimension::bytes); }

// The interleaves a pipeline of p stages over L layers can take: every v with p·v | L (v = 1
// without a pipeline, or where p does not divide L and the plan is rejected anyway).
std::vector<std::int64_t> interleaves(std::int64_t layers, std::int64_t pipeline) {
  if (pipeline == 1 || layers % pipeline != 0) {
    return {1};
  }
  return divisors(layers / pipeline);
}

// The mesh axes, each on the innermost tier while it divides what is left of that tier's domain
// (NVLink node, ICI slice), in the plan's placement order; placement 0 is Megatron-LM's rank
// order (tensor innermost, then data, pipeline stages outermost). An axis larger than the domain
// while no other axis has taken any of it spans the innermost tier and the next ("nvlink+ib":
// its collectives are hierarchical, NCCL-style); an axis that does not fit what is left goes on
// the next tier whole (pessimistic: a hierarchical collective would keep part of its traffic
// inside the node).
struct MeshText {
  std::string parse;    // every axis, for parse_plan
  std::string display;  // the axes over more than one device
};

using AxisOrder = std::array<std::size_t, 3>;  // indices into {model, data, stage}
constexpr std::array<std::string_view, 3> kAxisNames{"model", "data", "stage"};
constexpr std::array<AxisOrder, 6> kAxisOrders{
    {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};

MeshText place_mesh(const std::vector<NetworkTier>& tiers, const TrainingPlan& plan) {
  // One device without a network (Thor): every axis has size 1 and names no tier.
  static const NetworkTier kNoNetwork = [] {
    NetworkTier tier;
    tier.name = "none";
    return tier;
  }();
  const NetworkTier& inner = tiers.empty() ? kNoNetwork : tiers.front();
  std::int64_t room = inner.devices;
  const std::array<std::int64_t, 3> sizes{plan.tensor, plan.data, plan.pipeline};
  std::array<std::string, 3> networks;
  const AxisOrder& order = kAxisOrders.at(static_cast<std::size_t>(plan.placement));
  for (const std::size_t axis : order) {
    const std::int64_t size = sizes.at(axis);
    std::string& network = networks.at(axis);
    network = inner.name;
    if (size > 1 && tiers.size() > 1 && inner.devices > 0) {
      if (size <= room && room % size == 0) {
        room /= size;
      } else if (room == inner.devices) {
        network = inner.name + "+" + tiers[1].name;
        room = 1;
      } else {
        network = tiers[1].name;
      }
    }
  }
  // Printed in one order whatever the placement: the text names a plan.
  std::vector<std::string> all;
  std::vector<std::string> shown;
  for (std::size_t axis = 0; axis < kAxisNames.size(); ++axis) {
    const std::string text =
        fmt::format("{}: \"{} over {}\"", kAxisNames.at(axis), sizes.at(axis), networks.at(axis));
    all.push_back(text);
    if (sizes.at(axis) > 1) {
      shown.push_back(text);
    }
  }
  return {fmt::format("{}", fmt::join(all, ", ")), fmt::format("{}", fmt::join(shown, ", "))};
}

// Sums over some rows of a costed table, each row × its count.
struct RowSums {
  double lower = 0.0;  // Σ per-op max
  double upper = 0.0;  // Σ per-op sum
  double math = 0.0;
  double memory = 0.0;
  double network = 0.0;

  void add(const CostTable& table, std::size_t row) {
    const auto index = static_cast<Eigen::Index>(row);
    const double count = table.counts(index);
    lower += table.times.row(index).maxCoeff() * count;
    upper += table.times.row(index).sum() * count;
    math += table.times(index, CostTable::kMathColumn) * count;
    memory += table.times(index, CostTable::kMemoryColumn) * count;
    network += table.times(index, CostTable::kNetworkColumn) * count;
  }
};

// What a search needs to know of the scenario, once.
struct SearchContext {
  const Scenario& scenario;
  const Roofs& roofs;
  std::int64_t devices = 1;
  std::int64_t layers = 1;
  std::int64_t vocab = 0;
  double parameters = 0.0;
  // Bytes per parameter of the weights, their gradients and the optimizer state.
  double weight_bytes = 0.0;
  double gradient_bytes = 0.0;
  double optimizer_bytes = 0.0;
  Bytes capacity;
  double model_flops = 0.0;
  double peak = 0.0;  // FLOP/s of the matmuls' compute path
  bool prune = true;
  // The transformer blocks' share of the parameters: what offloading streams layer by layer.
  double layer_share = 0.0;
  std::size_t keep = 0;
};

// Offloading choices, one bit each; every subset is a plan when the hardware has host memory.
constexpr unsigned kOffloadWeights = 1U;
constexpr unsigned kOffloadActivations = 2U;
constexpr unsigned kOffloadOptimizer = 4U;
constexpr unsigned kOffloadAll = 7U;

unsigned offload_masks(const Roofs& roofs) { return roofs.host_memory ? kOffloadAll + 1 : 1U; }

// Tensor-axis collectives run after their matmuls, or overlapped with them: the latter needs
// sequence parallelism (its all-gathers and reduce-scatters are what a ring step splits).
std::int64_t tensor_options(const TrainingPlan& shape) { return shape.sequence_parallel ? 2 : 1; }

// The plans derived from one (t, p, d, ZeRO stage, sp, recompute, m, v).
std::int64_t variants(const TrainingPlan& shape, const Roofs& roofs) {
  return overlap_options(shape) * tensor_options(shape) *
         static_cast<std::int64_t>(offload_masks(roofs));
}

auto plan_key(const TrainingPlan& plan) {
  return std::make_tuple(plan.tensor, plan.pipeline, plan.zero_stage, plan.sequence_parallel,
                         plan.microbatches, static_cast<int>(plan.recompute), plan.interleave,
                         plan.overlap_gradients, plan.overlap_tensor, plan.offload_weights,
                         plan.offload_activations, plan.offload_optimizer, plan.placement);
}

auto rank_key(const TrainingCandidate& candidate) {
  return std::make_tuple(candidate.step_lower.si(), candidate.step_upper.si(),
                         plan_key(candidate.plan));
}

bool ranks_before(const TrainingCandidate& left, const TrainingCandidate& right) {
  return rank_key(left) < rank_key(right);
}

// The best `keep` candidates one task has seen (all of them when keep is 0). It keeps up to
// 2·keep and trims to the best keep, so admitting is one comparison with the last kept.
class Leaderboard {
 public:
  explicit Leaderboard(std::size_t keep) : keep_(keep) {}

  [[nodiscard]] bool admits(double step_lower, double step_upper, const TrainingPlan& plan) const {
    return !bar_ || std::make_tuple(step_lower, step_upper, plan_key(plan)) < rank_key(*bar_);
  }

  void add(TrainingCandidate candidate) {
    entries_.push_back(std::move(candidate));
    if (keep_ > 0 && entries_.size() >= 2 * keep_) {
      trim();
    }
  }

  std::vector<TrainingCandidate> take() {
    if (keep_ > 0) {
      trim();
    }
    return std::move(entries_);
  }

 private:
  void trim() {
    const auto kept = static_cast<std::ptrdiff_t>(std::min(keep_, entries_.size()));
    std::partial_sort(entries_.begin(), entries_.begin() + kept, entries_.end(), ranks_before);
    entries_.erase(entries_.begin() + kept, entries_.end());
    if (entries_.size() == keep_) {
      bar_ = entries_.back();
    }
  }

  std::size_t keep_;
  std::vector<TrainingCandidate> entries_;
  std::optional<TrainingCandidate> bar_;  // the worst kept once `keep` are: what must be beaten
};

struct TaskResult {
  std::vector<TrainingCandidate> candidates;
  std::vector<TrainingRejection> rejected;
  std::int64_t analyses = 0;
  std::int64_t costed = 0;
};

// One costing's sums that every derived plan reads: per pass group (forward; backward with the
// recomputation; optimizer), the ops' lower and upper bounds, the tensor axis's all-gathers and
// reduce-scatters, and the matmuls they can hide under.
struct PassSums {
  double lower = 0.0;
  double sends = 0.0;               // lower bound of the stage-boundary sends (once per chunk)
  double tensor_collectives = 0.0;  // lower bound (T_net) of the tensor axis's AG / RS
  double matmuls = 0.0;             // lower bound of the matmuls
};

// What offloading moves and keeps, per device, for one costing (every choice derives from it).
struct OffloadBytes {
  double weights = 0.0;          // the held layers' weights
  double optimizer = 0.0;        // the held layers' optimizer state
  double activations = 0.0;      // all layers' saved activations, every microbatch in flight
  double per_microbatch = 0.0;   // saved activations one microbatch writes over the held layers
  double resident_share = 1.0;   // of the layers' weights / state kept in HBM: min(1, 2/ℓ)
  double hbm_activations = 0.0;  // saved activations left in HBM when they are offloaded
};

// The sums of one costing that every plan derived from it reads.
struct CostingSums {
  RowSums sends;                 // the stage-boundary sends
  RowSums work;                  // every row but the optimizer's
  RowSums gradients;             // the data axis's weight-gradient reductions
  double backward_device = 0.0;  // the backward pass's device work (Σ max(T_math, T_mem))
  PassSums forward;
  PassSums backward;  // with the recomputation
  double optimizer_lower = 0.0;
};

CostingSums sum_costing(const RunResult& run) {
  // The stage-boundary sends run once per microbatch and chunk; the pipelined work is every
  // row but the optimizer's (add_pipeline_bubble). The weight gradients' reductions over the
  // data axis (all-reduce, or reduce-scatter under ZeRO) and the backward pass's device work
  // decide what overlapping them can hide.
  CostingSums sums;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    const auto index = static_cast<Eigen::Index>(row);
    const double row_lower = run.table.times.row(index).maxCoeff() * run.table.counts(index);
    const bool collective = op.kind == OpKind::collective;
    const bool send = collective && op.collective.kind == CollectiveKind::send_recv &&
                      op.name.starts_with("pipeline.");
    if (send) {
      sums.sends.add(run.table, row);
    }
    if (op.pass == Pass::optimizer) {
      sums.optimizer_lower += row_lower;
      continue;
    }
    sums.work.add(run.table, row);
    PassSums& group = op.pass == Pass::forward ? sums.forward : sums.backward;
    group.lower += row_lower;
    if (send) {
      group.sends += row_lower;
    }
    if (collective && op.mesh_axis == "model" &&
        (op.collective.kind == CollectiveKind::all_gather ||
         op.collective.kind == CollectiveKind::reduce_scatter)) {
      group.tensor_collectives += row_lower;
    }
    if (op.kind == OpKind::matmul) {
      group.matmuls += row_lower;
    }
    if (collective && op.pass == Pass::backward && op.mesh_axis == "data" &&
        (op.collective.kind == CollectiveKind::all_reduce ||
         op.collective.kind == CollectiveKind::reduce_scatter)) {
      sums.gradients.add(run.table, row);
    }
    if (!collective && op.pass == Pass::backward) {
      sums.backward_device += device_time(run.table, index) * run.table.counts(index);
    }
  }
  return sums;
}

// What offloading moves and keeps for one costing: the layers' share of the weights and
// optimizer state, and the saved activations by layer.
OffloadBytes offload_bytes(const RunResult& run, double layer_share) {
  const TrainingMemory& saved = *run.training_memory;
  OffloadBytes offload;
  offload.weights = run.footprint.weights.si() * layer_share;
  offload.optimizer = run.footprint.optimizer_state.si() * layer_share;
  offload.activations = saved.layer_saved.si() * saved.layers * saved.in_flight;
  offload.per_microbatch = saved.layer_saved.si() * saved.layers;
  offload.resident_share = std::min(1.0, 2.0 / std::max(saved.layers, 1.0));
  // Offloaded, HBM keeps the head's, one layer's being written or read and the next one's in
  // flight over the link, and full recomputation's working set.
  offload.hbm_activations = (saved.layer_saved * 2.0 + saved.recompute_working + saved.head).si();
  return offload;
}

class TrainingSearcher {
 public:
  explicit TrainingSearcher(const SearchContext& context) : context_(context) {}

  // One task of the parallel loop: every m and v of one (t, p, d, weights, sp, recompute).
  [[nodiscard]] TaskResult run(const TrainingPlan& shape, TileCache& cache) const {
    TaskResult result;
    Leaderboard board(context_.keep);
    const std::vector<std::int64_t> chunks = interleaves(context_.layers, shape.pipeline);
    // The plans of one m: every v, each with every derived variant.
    const auto all_v = static_cast<std::int64_t>(chunks.size()) * variants(shape, context_.roofs);
    const std::vector<std::int64_t> counts = divisors(context_.scenario.workload.batch);
    const auto reject_all = [&](std::string_view reason, const std::string& detail) {
      result.rejected.push_back(
          {shape, std::string(reason), detail, static_cast<std::int64_t>(counts.size()) * all_v});
    };
    const MeshText mesh = place_mesh(context_.roofs.network, shape);
    Plan plan;
    const bool vocab_replicated = context_.vocab > 0 && context_.vocab % shape.tensor != 0;
    try {
      const ConfigNode node =
          parse_config(fmt::format("{{preset: {}, mesh: {{{}}}{}{}}}", shape.preset(), mesh.parse,
                                   vocab_replicated ? ", rules: {vocab: null}" : "",
                                   shape.zero_stage == 1 || shape.zero_stage == 2
                                       ? fmt::format(", zero_stage: {}", shape.zero_stage)
                                       : std::string()),
                       "search");
      plan = parse_plan(node, context_.scenario.hardware);
    } catch (const InputError& error) {
      reject_all(kMeshReason, error.what());
      return result;
    }
    if (context_.layers % shape.pipeline != 0) {
      reject_all(kLayersReason, fmt::format("{} layers do not split into {} stages",
                                            context_.layers, shape.pipeline));
      return result;
    }
    // Each device stores at least 1/(t·p) of every weight, with its gradient and optimizer
    // state, and ZeRO splits the optimizer state (stage ≥ 1), the gradients (≥ 2) and the
    // weights (3) d ways more: what that alone needs is known before costing. Offloading keeps
    // only two of the ℓ layers' weights and optimizer state in HBM (the gradients stay).
    const double shards = static_cast<double>(shape.tensor * shape.pipeline);
    const auto zero_share = [&](std::int64_t stage) {
      return shape.zero_stage >= stage ? 1.0 / static_cast<double>(shape.data) : 1.0;
    };
    const double layers_held =
        static_cast<double>(context_.layers) / static_cast<double>(shape.pipeline);
    const double offloadable =
        context_.roofs.host_memory
            ? 1.0 - context_.layer_share * (1.0 - std::min(1.0, 2.0 / layers_held))
            : 1.0;
    const double bytes_per_parameter =
        (context_.weight_bytes * zero_share(3) + context_.optimizer_bytes * zero_share(1)) *
            offloadable +
        context_.gradient_bytes * zero_share(2);
    const Bytes floor(context_.parameters / shards * bytes_per_parameter);
    if (context_.prune && floor > context_.capacity) {
      reject_all(kMemoryReason,
                 fmt::format("weights, gradients and optimizer state alone need at least {} per "
                             "device ({:.4g} parameters / {} × {:.4g} B{}), has {}",
                             bytes_text(floor), context_.parameters, shards, bytes_per_parameter,
                             context_.roofs.host_memory
                                 ? ", all but two layers' weights and optimizer state offloaded"
                                 : "",
                             bytes_text(context_.capacity)));
      return result;
    }
    // Largest m first: the microbatch b grows along the loop, and with it the footprint.
    std::optional<Footprint> too_big;
    std::int64_t too_big_m = 0;
    // The plan's rules split the same axes whatever m (the batch axis divides once b is whole):
    // one that does not divide the model at one m does not at any.
    std::optional<std::string> undivided;
    for (auto count = counts.rbegin(); count != counts.rend(); ++count) {
      TrainingPlan point = shape;
      point.microbatches = *count;
      const std::int64_t per_microbatch = context_.scenario.workload.batch / point.microbatches;
      if (per_microbatch % shape.data != 0) {
        result.rejected.push_back(
            {point, std::string(kBatchReason),
             fmt::format("{} sequences per microbatch do not split over {} replicas",
                         per_microbatch, shape.data),
             all_v});
        continue;
      }
      if (undivided) {
        result.rejected.push_back({point, std::string(kModelReason), *undivided, all_v});
        continue;
      }
      if (too_big) {
        result.rejected.push_back(
            {point, std::string(kMemoryReason),
             fmt::format("needs more than {} per device (m = {} already: the saved activations "
                         "grow with the microbatch), has {}",
                         bytes_text(too_big->total()), too_big_m, bytes_text(too_big->capacity)),
             all_v});
        continue;
      }
      const Outcome outcome =
          cost(point, plan, mesh.display, vocab_replicated, chunks, cache, result, board);
      if (context_.prune && outcome.unfit) {
        too_big = outcome.unfit;
        too_big_m = point.microbatches;
      }
      if (context_.prune && outcome.undivided) {
        undivided = outcome.undivided;
      }
    }
    result.candidates = board.take();
    return result;
  }

 private:
  // What costing one plan found besides its candidates.
  struct Outcome {
    std::optional<Footprint> unfit;        // the smallest footprint of a plan that does not fit
    std::optional<std::string> undivided;  // why the plan does not divide the model
  };

  // The HBM footprint and the host bytes of one offloading choice.
  static Footprint offloaded_footprint(const Footprint& footprint, const OffloadBytes& bytes,
                                       unsigned mask) {
    Footprint resident = footprint;
    const double streamed = 1.0 - bytes.resident_share;
    if ((mask & kOffloadWeights) != 0U) {
      resident.weights = resident.weights - Bytes(bytes.weights * streamed);
    }
    if ((mask & kOffloadOptimizer) != 0U) {
      resident.optimizer_state = resident.optimizer_state - Bytes(bytes.optimizer * streamed);
    }
    if ((mask & kOffloadActivations) != 0U) {
      resident.activations = Bytes(std::min(resident.activations.si(), bytes.hbm_activations));
    }
    return resident;
  }

  static double host_bytes(const OffloadBytes& bytes, unsigned mask) {
    return ((mask & kOffloadWeights) != 0U ? bytes.weights : 0.0) +
           ((mask & kOffloadOptimizer) != 0U ? bytes.optimizer : 0.0) +
           ((mask & kOffloadActivations) != 0U ? bytes.activations : 0.0);
  }

  // Costs one plan at v = 1 and derives every v and variant.
  Outcome cost(const TrainingPlan& point, const Plan& plan, const std::string& mesh,
               bool vocab_replicated, const std::vector<std::int64_t>& chunks, TileCache& cache,
               TaskResult& result, Leaderboard& board) const {
    const std::int64_t per_v = variants(point, context_.roofs);
    const auto all_v = static_cast<std::int64_t>(chunks.size()) * per_v;
    Scenario scenario = context_.scenario;
    scenario.plan = plan;
    Training& training = scenario.workload.training;
    training.microbatches = point.microbatches;
    training.recompute = point.recompute;
    training.pipeline_interleave = 1;
    std::optional<RunResult> run;
    try {
      ++result.analyses;
      run.emplace(analyze(std::move(scenario), context_.roofs, &cache));
    } catch (const InputError& error) {
      result.rejected.push_back({point, std::string(kModelReason), error.what(), all_v});
      return {std::nullopt, error.what()};
    }
    const double microbatches = static_cast<double>(point.microbatches);
    const OffloadBytes offload = offload_bytes(*run, context_.layer_share);
    const unsigned masks = offload_masks(context_.roofs);
    const Footprint smallest =
        offloaded_footprint(run->footprint, offload, masks > 1 ? kOffloadAll : 0U);
    if (!smallest.fits()) {
      result.rejected.push_back(
          {point, std::string(kMemoryReason),
           fmt::format("needs {} per device (weights {}, gradients {}, optimizer state {}, "
                       "saved activations {}{}), has {}",
                       bytes_text(smallest.total()), bytes_text(smallest.weights),
                       bytes_text(smallest.gradients), bytes_text(smallest.optimizer_state),
                       bytes_text(smallest.activations),
                       masks > 1 ? "; all offloaded but two layers' worth" : "",
                       bytes_text(smallest.capacity)),
           all_v});
      return {smallest, std::nullopt};
    }
    const auto [sends, work, gradients, backward_device, forward, backward, optimizer_lower] =
        sum_costing(*run);
    // Overlapped (PyTorch DDP's bucketed all-reduce, Megatron's overlap_grad_reduce): the
    // reductions start layer by layer during the last microbatch's backward, after which the
    // step's gradients are complete; what that backward cannot cover stays exposed, and never
    // less than the last layer's share (its gradient is ready only at the end):
    // exposed = max(G/ℓ, G − B/m), G the reductions' time, B the step's backward device time,
    // ℓ the layers one device holds.
    const double layers_held =
        static_cast<double>(context_.layers) / static_cast<double>(point.pipeline);
    const double exposed_overlapped = std::max(gradients.network / layers_held,
                                               gradients.network - backward_device / microbatches);
    const double gradients_hidden = gradients.network - exposed_overlapped;
    // Collective matmul (scaling book sharding.md; Wang et al. 2023): a ring all-gather or
    // reduce-scatter over t devices split into t − 1 steps, each under one of the t chunks of its
    // matmul; one chunk has no transfer to hide, so a pair takes G/t + max((t−1)·G/t, C) and
    // exposes max(0, C − (t−1)/t·G) of its C. Summed over a pass's collectives and matmuls.
    const double ring = static_cast<double>(point.tensor - 1) / static_cast<double>(point.tensor);
    const auto tensor_hidden = [&](const PassSums& sums) {
      return sums.tensor_collectives - std::max(0.0, sums.tensor_collectives - ring * sums.matmuls);
    };
    const double hidden_forward = tensor_hidden(forward);
    const double hidden_backward = tensor_hidden(backward);
    const Totals& total = run->bounds.total;
    const double bubble_lower = run->pipeline ? run->pipeline->bubble_lower.si() : 0.0;
    const double bubble_upper = run->pipeline ? run->pipeline->bubble_upper.si() : 0.0;
    const double ops_lower = total.t_lower.si() - bubble_lower;
    const double ops_upper = total.t_upper.si() - bubble_upper;
    const std::int64_t stages = point.pipeline;
    // Without host memory only the no-offload choice exists and moves 0 bytes (over any rate).
    const double host_bandwidth =
        context_.roofs.host_memory ? context_.roofs.host_memory->bandwidth.si() : 1.0;
    const double host_capacity =
        context_.roofs.host_memory ? context_.roofs.host_memory->capacity.si() : 0.0;
    const std::int64_t derived_per_mask = overlap_options(point) * tensor_options(point);
    for (const std::int64_t chunk : chunks) {
      TrainingPlan plan_v = point;
      plan_v.interleave = chunk;
      if (chunk > 1 && point.microbatches % stages != 0) {
        result.rejected.push_back(
            {plan_v, std::string(kInterleaveReason),
             fmt::format("{} microbatches over {} stages", point.microbatches, stages), per_v});
        continue;
      }
      // v chunks per stage: v times the sends; each device idles (p − 1)/(v·m) of its work
      // (Narayanan et al. 2021, §2.2.2).
      const double extra = static_cast<double>(chunk - 1);
      const double idle = stages > 1 ? static_cast<double>(stages - 1) /
                                           static_cast<double>(chunk * point.microbatches)
                                     : 0.0;
      // A pass's ops with its v − 1 extra chunks' sends.
      const double forward_ops = forward.lower + extra * forward.sends;
      const double backward_ops = backward.lower + extra * backward.sends;
      for (unsigned mask = 0; mask < masks; ++mask) {
        plan_v.overlap_gradients = false;
        plan_v.overlap_tensor = false;
        plan_v.offload_weights = (mask & kOffloadWeights) != 0U;
        plan_v.offload_activations = (mask & kOffloadActivations) != 0U;
        plan_v.offload_optimizer = (mask & kOffloadOptimizer) != 0U;
        const Footprint footprint = offloaded_footprint(run->footprint, offload, mask);
        const double host = host_bytes(offload, mask);
        if (!footprint.fits() || host > host_capacity) {
          const bool main = !footprint.fits();
          result.rejected.push_back(
              {plan_v, std::string(main ? kMemoryReason : kHostMemoryReason),
               main ? fmt::format("needs {} per device offloading {}, has {}",
                                  bytes_text(footprint.total()), plan_v.offloaded(),
                                  bytes_text(footprint.capacity))
                    : fmt::format("offloading {} needs {} of host memory per device, has {}",
                                  plan_v.offloaded(), bytes_text(Bytes(host)),
                                  bytes_text(Bytes(host_capacity))),
               derived_per_mask});
          continue;
        }
        // The host link, busiest direction per pass (it is full duplex): the forward pass
        // reads each held layer's weights in and writes its saved activations out, per
        // microbatch; the backward pass reads both back; the optimizer step reads and writes
        // the offloaded weights and optimizer state once.
        const double weights_in = plan_v.offload_weights ? microbatches * offload.weights : 0.0;
        const double activations_moved =
            plan_v.offload_activations ? microbatches * offload.per_microbatch : 0.0;
        const double host_forward = std::max(weights_in, activations_moved) / host_bandwidth;
        const double host_backward = (weights_in + activations_moved) / host_bandwidth;
        const double host_optimizer = ((plan_v.offload_weights ? offload.weights : 0.0) +
                                       (plan_v.offload_optimizer ? offload.optimizer : 0.0)) /
                                      host_bandwidth;
        for (std::int64_t tensor_choice = 0; tensor_choice < tensor_options(point);
             ++tensor_choice) {
          plan_v.overlap_tensor = tensor_choice == 1;
          const double hidden_f = plan_v.overlap_tensor ? hidden_forward : 0.0;
          const double hidden_b = plan_v.overlap_tensor ? hidden_backward : 0.0;
          // Each pass takes the longer of its ops and its host transfers (the lower bound
          // overlaps them; the upper bound adds them). The tensor and the gradient overlaps
          // each hide network time under device work; where both axes share a link their
          // traffic is not summed against it (a lower bound may take both).
          const double forward_time = std::max(forward_ops - hidden_f, host_forward);
          const double backward_time = std::max(backward_ops - hidden_b, host_backward);
          const double optimizer_time = std::max(optimizer_lower, host_optimizer);
          const double pipelined_change =
              (forward_time - forward_ops) + (backward_time - backward_ops);
          const double bubble = (work.lower + pipelined_change + extra * sends.lower) * idle;
          // What the tensor overlap takes off the forward pass: none where its host link holds
          // it anyway.
          const double tensor_saved_forward =
              std::max(0.0, std::min(hidden_f, forward_ops - host_forward));
          const double host_time = host_forward + host_backward + host_optimizer;
          for (std::int64_t gradient_choice = 0; gradient_choice < overlap_options(point);
               ++gradient_choice) {
            plan_v.overlap_gradients = gradient_choice == 1;
            // And off the backward pass, past the gradient reductions it also hides.
            const double backward_left =
                backward_ops - (plan_v.overlap_gradients ? gradients_hidden : 0.0);
            const double tensor_saved =
                tensor_saved_forward +
                std::max(0.0, std::min(hidden_b, backward_left - host_backward));
            ++result.costed;
            // The hidden reductions shorten the backward pass, down to its host transfers.
            const double gradient_change =
                plan_v.overlap_gradients
                    ? std::max(backward_ops - hidden_b - gradients_hidden, host_backward) -
                          backward_time
                    : 0.0;
            const double step_lower = ops_lower + pipelined_change + gradient_change +
                                      (optimizer_time - optimizer_lower) + extra * sends.lower +
                                      bubble;
            const double step_upper =
                ops_upper + extra * sends.upper + (work.upper + extra * sends.upper) * idle +
                (host_forward + host_backward) * (1.0 + idle) + host_optimizer;
            if (!board.admits(step_lower, step_upper, plan_v)) {
              continue;
            }
            TrainingCandidate candidate;
            candidate.plan = plan_v;
            candidate.mesh = mesh;
            candidate.microbatch =
                context_.scenario.workload.batch / (point.microbatches * point.data);
            candidate.vocab_replicated = vocab_replicated;
            candidate.bubble = Seconds(bubble);
            candidate.bubble_fraction = idle / (1.0 + idle);
            candidate.step_lower = Seconds(step_lower);
            candidate.step_upper = Seconds(step_upper);
            candidate.t_math = Seconds(total.t_math.si() + extra * sends.math);
            candidate.t_mem = Seconds(total.t_mem.si() + extra * sends.memory);
            candidate.t_net = Seconds(total.t_net.si() + extra * sends.network);
            candidate.t_host = Seconds(host_time);
            candidate.tensor_hidden = Seconds(tensor_saved);
            candidate.footprint = footprint;
            candidate.host_bytes = Bytes(host);
            candidate.mfu = context_.model_flops /
                            (static_cast<double>(context_.devices) * context_.peak * step_lower);
            board.add(std::move(candidate));
          }
        }
      }
    }
    return {};
  }

  const SearchContext& context_;
};

// The placements of t × p × d that put some axis on another tier: orders that place every axis
// where an earlier order did are the same plan, counted once (on one node every order is).
std::vector<std::int64_t> distinct_placements(const Roofs& roofs, std::int64_t tensor,
                                              std::int64_t pipeline, std::int64_t data) {
  std::vector<std::int64_t> placements;
  std::vector<std::string> meshes;
  TrainingPlan plan;
  plan.tensor = tensor;
  plan.pipeline = pipeline;
  plan.data = data;
  for (std::size_t order = 0; order < kAxisOrders.size(); ++order) {
    plan.placement = static_cast<std::int64_t>(order);
    std::string mesh = place_mesh(roofs.network, plan).parse;
    if (std::find(meshes.begin(), meshes.end(), mesh) == meshes.end()) {
      meshes.push_back(std::move(mesh));
      placements.push_back(plan.placement);
    }
  }
  return placements;
}

// Forward and backward FLOPs of one step on one device holding everything, without
// recomputation (the MFU numerator: Chowdhery et al. 2022, PaLM App. B), and the peak of the
// matmuls' compute path.
std::pair<double, double> model_flops(const Scenario& scenario, const Roofs& roofs) {
  Scenario whole = scenario;
  whole.plan = Plan{};
  whole.workload.training.recompute = Recompute::none;
  whole.workload.training.pipeline_interleave = 1;
  const OpGraph graph = build_graph(whole);
  double flops = 0.0;
  double peak = 0.0;
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
    if (op.pass == Pass::forward || op.pass == Pass::backward) {
      flops += op_flops(op).si() * static_cast<double>(op.count);
    }
    if (op.kind == OpKind::matmul && peak == 0.0) {
      const ComputePath* path = roofs.find_path(op.compute_path);
      peak = path != nullptr ? path->peak.si() : 0.0;
    }
  }
  return {flops, peak};
}

}  // namespace

std::string_view TrainingPlan::preset() const {
  if (zero_stage == 3) {
    return sequence_parallel ? "zero3_3d_sp" : "zero3_3d";
  }
  return sequence_parallel ? "megatron_3d_sp" : "megatron_3d";
}

std::string TrainingPlan::sharding() const {
  return zero_stage == 1 || zero_stage == 2 ? fmt::format("{}+zero{}", preset(), zero_stage)
                                            : std::string(preset());
}

const std::vector<std::string>& training_axis_orders() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> orders;
    for (const AxisOrder& order : kAxisOrders) {
      orders.push_back(fmt::format("{}>{}>{}", kAxisNames.at(order[0]), kAxisNames.at(order[1]),
                                   kAxisNames.at(order[2])));
    }
    return orders;
  }();
  return names;
}

const std::string& TrainingPlan::placement_order() const {
  return training_axis_orders().at(static_cast<std::size_t>(placement));
}

std::string TrainingPlan::offloaded() const {
  std::vector<std::string_view> parts;
  for (const auto& [offloaded, name] :
       {std::pair{offload_weights, "weights"}, std::pair{offload_activations, "activations"},
        std::pair{offload_optimizer, "optimizer"}}) {
    if (offloaded) {
      parts.emplace_back(name);
    }
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, "+"));
}

std::string TrainingPlan::label() const {
  const bool offloads = offload_weights || offload_activations || offload_optimizer;
  return fmt::format("t{} p{} d{} {} m{} {}{}{}{}{}{}", tensor, pipeline, data, sharding(),
                     microbatches, to_string(recompute),
                     pipeline > 1 ? fmt::format(" v{}", interleave) : "",
                     overlap_gradients ? " overlap" : "", overlap_tensor ? " tp-overlap" : "",
                     offloads ? " offload:" + offloaded() : "",
                     placement != 0 ? " place:" + placement_order() : "");
}

TrainingSearchResult search_training_plans(const Scenario& scenario, const Roofs& roofs,
                                           std::int64_t devices,
                                           const TrainingSearchOptions& options) {
  if (scenario.workload.phase != "train") {
    throw InputError("a training plan search needs a scenario with workload phase: train");
  }
  if (devices < 1) {
    throw InputError(fmt::format("--devices {}: expected a whole number ≥ 1", devices));
  }
  if (devices > 1 && roofs.network.empty()) {
    throw InputError(fmt::format("{} has no network tier to spread a plan over", roofs.hardware));
  }
  const StageSpec& stage = scenario.model.stages.front();
  SearchContext context{scenario, roofs, devices,    1,   0,   0.0, 0.0,
                        0.0,      0.0,   Bytes(0.0), 0.0, 0.0, true};
  context.layers = stage.component.num_layers;
  context.vocab = stage.component.vocab_size;
  context.parameters = static_cast<double>(count_parameters(scenario.model).total());
  context.weight_bytes = bytes_per_element(scenario.precision.weights);
  context.gradient_bytes = bytes_per_element(gradient_dtype(scenario.precision));
  context.optimizer_bytes = optimizer_state_bytes_per_parameter(
      scenario.workload.training.optimizer, scenario.precision.weights);
  const MemoryTier& main_memory = roofs.main_memory();
  context.capacity =
      main_memory.capacity * static_cast<double>(main_memory.count) - scenario.host_share;
  std::tie(context.model_flops, context.peak) = model_flops(scenario, roofs);
  context.prune = options.prune;
  const ParameterCount parameters = count_parameters(scenario.model);
  context.layer_share = static_cast<double>(parameters.layers) /
                        static_cast<double>(std::max<std::int64_t>(parameters.total(), 1));
  context.keep = options.keep;

  TrainingSearchResult result;
  result.scenario = scenario.file;
  result.devices = devices;
  result.batch = scenario.workload.batch;
  result.seq_len = scenario.workload.seq_len;
  result.layers = context.layers;
  result.model_flops = context.model_flops;
  const auto microbatch_counts =
      static_cast<std::int64_t>(divisors(scenario.workload.batch).size());
  std::vector<TrainingPlan> tasks;
  for (const std::int64_t tensor : divisors(devices)) {
    for (const std::int64_t pipeline : divisors(devices / tensor)) {
      const std::int64_t data = devices / (tensor * pipeline);
      const auto chunks = static_cast<std::int64_t>(interleaves(context.layers, pipeline).size());
      for (const std::int64_t placement : distinct_placements(roofs, tensor, pipeline, data)) {
        for (const std::int64_t zero_stage : {0, 1, 2, 3}) {
          for (const bool sequence_parallel : {false, true}) {
            if ((zero_stage > 0 && data == 1) || (sequence_parallel && tensor == 1)) {
              continue;
            }
            for (const Recompute recompute : kRecomputeLevels) {
              TrainingPlan shape;
              shape.tensor = tensor;
              shape.pipeline = pipeline;
              shape.data = data;
              shape.placement = placement;
              shape.zero_stage = zero_stage;
              shape.sequence_parallel = sequence_parallel;
              shape.recompute = recompute;
              tasks.push_back(shape);
              result.seen += microbatch_counts * chunks * variants(shape, roofs);
            }
          }
        }
      }
    }
  }
  const TrainingSearcher searcher(context);
  std::vector<TaskResult> outcomes(tasks.size());
  const ParallelRun run = parallel_indexed<TileCache>(
      options.threads, tasks.size(),
      [&](std::size_t index, TileCache& cache) {
        outcomes[index] = searcher.run(tasks[index], cache);
      },
      options.progress, options.cancel);
  result.threads = run.threads;
  result.shapes = static_cast<std::int64_t>(tasks.size());
  result.shapes_searched = static_cast<std::int64_t>(run.finished);
  result.cancelled = run.finished < tasks.size();
  for (TaskResult& outcome : outcomes) {
    result.analyses += outcome.analyses;
    result.costed += outcome.costed;
    for (TrainingRejection& rejection : outcome.rejected) {
      result.rejected_by_reason[rejection.reason] += rejection.plans;
      result.rejected.push_back(std::move(rejection));
    }
    std::move(outcome.candidates.begin(), outcome.candidates.end(),
              std::back_inserter(result.ranked));
  }
  std::sort(result.ranked.begin(), result.ranked.end(), ranks_before);
  if (options.keep > 0 && result.ranked.size() > options.keep) {
    result.ranked.resize(options.keep);
  }
  return result;
}

}  // namespace rsim
