// SPDX-License-Identifier: MIT
// `rsim search` for a training scenario: tensor × pipeline × data plans, ZeRO stage 0–3, sequence
// parallelism, microbatches, recomputation and pipeline interleaving, costed and ranked by step
// time.
#include "sim/base/error.hpp"
#include "sim/base/parallel.hpp"
#include "sim/explore/mesh_placement.hpp"
#include "sim/explore/search.hpp"
#include "sim/explore/train_ranking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

namespace rsim {
namespace {

using train_ranking::Leaderboard;
using train_ranking::RanksBefore;

constexpr RejectionReason kMeshReason = RejectionReason::mesh_tiers;
constexpr RejectionReason kLayersReason = RejectionReason::layers;
constexpr RejectionReason kBatchReason = RejectionReason::batch;
constexpr RejectionReason kModelReason = RejectionReason::does_not_divide;
constexpr RejectionReason kMemoryReason = RejectionReason::memory;
constexpr RejectionReason kHostMemoryReason = RejectionReason::host_memory;
constexpr RejectionReason kInterleaveReason = RejectionReason::interleave;

constexpr std::array kRecomputeLevels{Recompute::none, Recompute::selective, Recompute::full};

// Gradient reductions after the backward pass, or overlapped with it: both where there is a data
// axis to reduce over, neither otherwise.
std::int64_t overlap_options(const TrainingPlan& shape) { return shape.data > 1 ? 2 : 1; }

std::string bytes_text(Bytes bytes) { return format_quantity(bytes.si(), Dimension::bytes); }

// The interleaves a pipeline of p stages over L layers can take: every v with p·v | L (v = 1
// without a pipeline, or where p does not divide L and the plan is rejected anyway). With uneven
// stages and p ∤ L: every v dividing L (a chunk's layers whole) whose busiest stage holds no more
// than v = 1's, v·⌈L/(p·v)⌉ = ⌈L/p⌉ (shard/pipeline.hpp's busiest_stage_layers): a search costs
// one v and derives the others' bubbles from it, which needs every v's device to run the same
// layers.
std::vector<std::int64_t> interleaves(std::int64_t layers, std::int64_t pipeline, bool uneven) {
  if (pipeline == 1 || pipeline > layers) {
    return {1};
  }
  if (layers % pipeline == 0) {
    return divisors(layers / pipeline);
  }
  if (!uneven) {
    return {1};
  }
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  std::vector<std::int64_t> chunks;
  for (const std::int64_t v : divisors(layers)) {
    if (pipeline * v <= layers &&
        v * ceil_div(layers, pipeline * v) == ceil_div(layers, pipeline)) {
      chunks.push_back(v);
    }
  }
  return chunks;
}

// What a search needs to know of the scenario, once.
// Megatron-LM's --make-vocab-size-divisible-by default.
constexpr std::int64_t kMegatronVocabPadding = 128;

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
  bool uneven_stages = false;
  // The transformer blocks' share of the parameters: what offloading streams layer by layer.
  double layer_share = 0.0;
  std::size_t keep = 0;
  RankBy rank_by = RankBy::expected;
};

// Offloading choices, one bit each; every subset is a plan when the hardware has host memory.
constexpr unsigned kOffloadWeights = 1U;
constexpr unsigned kOffloadActivations = 2U;
constexpr unsigned kOffloadOptimizer = 4U;
constexpr unsigned kOffloadAll = 7U;

unsigned offload_masks(const Roofs& roofs) { return roofs.host_memory ? kOffloadAll + 1 : 1U; }

// The scenario keys (workload.*) of a plan's schedule: its interleave, overlaps and offloading.
// The weight gathers' overlap (FSDP / ZeRO prefetch) is the scenario's engine's, not a choice of
// the search: `rsim run` of the plan keeps it too.
Training training_choice(const TrainingPlan& plan, std::int64_t interleave, unsigned offload,
                         bool overlap_weights) {
  Training choice;
  choice.overlap_weights = overlap_weights;
  choice.microbatches = plan.microbatches;
  choice.recompute = plan.recompute;
  choice.pipeline_interleave = interleave;
  choice.overlap_gradients = plan.overlap_gradients;
  choice.overlap_tensor = plan.overlap_tensor;
  choice.offload.weights = (offload & kOffloadWeights) != 0U;
  choice.offload.activations = (offload & kOffloadActivations) != 0U;
  choice.offload.optimizer = (offload & kOffloadOptimizer) != 0U;
  return choice;
}

// Tensor-axis collectives run after their matmuls, or overlapped with them: the latter needs
// sequence parallelism (its all-gathers and reduce-scatters are what a ring step splits).
std::int64_t tensor_options(const TrainingPlan& shape) { return shape.sequence_parallel ? 2 : 1; }

// The plans derived from one (t, p, d, ZeRO stage, sp, recompute, m, v).
std::int64_t variants(const TrainingPlan& shape, const Roofs& roofs) {
  return overlap_options(shape) * tensor_options(shape) *
         static_cast<std::int64_t>(offload_masks(roofs));
}

struct TaskResult {
  std::vector<TrainingCandidate> candidates;
  std::vector<TrainingRejection> rejected;
  std::int64_t analyses = 0;
  std::int64_t costed = 0;
};

class TrainingSearcher {
 public:
  explicit TrainingSearcher(const SearchContext& context) : context_(context) {}

  // One task of the parallel loop: every m and v of one (t, p, d, weights, sp, recompute).
  [[nodiscard]] TaskResult run(const TrainingPlan& shape, TileCache& cache) const {
    TaskResult result;
    Leaderboard board(context_.keep, context_.rank_by);
    const std::vector<std::int64_t> chunks =
        interleaves(context_.layers, shape.pipeline, context_.uneven_stages);
    // The plans of one m: every v, each with every derived variant.
    const auto all_v = static_cast<std::int64_t>(chunks.size()) * variants(shape, context_.roofs);
    const std::vector<std::int64_t> counts = divisors(context_.scenario.workload.batch);
    const auto reject_all = [&](RejectionReason reason, const std::string& detail) {
      result.rejected.push_back(
          {shape, reason, detail, static_cast<std::int64_t>(counts.size()) * all_v});
    };
    const PlacedMesh mesh = place_mesh(context_.roofs.network, shape);
    Plan plan;
    // A vocabulary that does not divide over t is padded as Megatron-LM pads it (to a multiple
    // of 128·t, --make-vocab-size-divisible-by 128), so the LM head still splits.
    // The scenario's own padding carries to every plan; without one, only where t needs it.
    const std::int64_t padding = context_.scenario.plan.vocab_padding > 0
                                     ? context_.scenario.plan.vocab_padding
                                     : kMegatronVocabPadding;
    const bool vocab_padded = context_.vocab > 0 && (context_.scenario.plan.vocab_padding > 0 ||
                                                     context_.vocab % shape.tensor != 0);
    // The plan as `rsim run --set plan=…` takes it (run_args); parse_plan makes of it what
    // make_plan makes of the axes.
    const std::string plan_text =
        fmt::format("{{preset: {}, mesh: {{{}}}{}{}}}", shape.preset(), mesh.parse,
                    vocab_padded ? fmt::format(", vocab_padding: {}", padding) : "",
                    shape.zero_stage == 1 || shape.zero_stage == 2
                        ? fmt::format(", zero_stage: {}", shape.zero_stage)
                        : std::string());
    try {
      plan = make_plan(shape.preset(), mesh.axes, context_.scenario.hardware, Rules{},
                       shape.zero_stage == 1 || shape.zero_stage == 2 ? shape.zero_stage : 0);
      plan.vocab_padding = vocab_padded ? padding : 0;
    } catch (const PlanError& error) {
      reject_all(kMeshReason, error.what());
      return result;
    }
    if (context_.layers % shape.pipeline != 0 &&
        !(context_.uneven_stages && shape.pipeline <= context_.layers)) {
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
                             "device ({} parameters / {} × {:.4g} B{}), has {}",
                             bytes_text(floor), format_parameters(context_.parameters), shards,
                             bytes_per_parameter,
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
            {point, kBatchReason,
             fmt::format("{} sequences per microbatch do not split over {} replicas",
                         per_microbatch, shape.data),
             all_v});
        continue;
      }
      if (undivided) {
        result.rejected.push_back({point, kModelReason, *undivided, all_v});
        continue;
      }
      if (too_big) {
        result.rejected.push_back(
            {point, kMemoryReason,
             fmt::format("needs more than {} per device (m = {} already: the saved activations "
                         "grow with the microbatch), has {}",
                         bytes_text(too_big->total()), too_big_m, bytes_text(too_big->capacity)),
             all_v});
        continue;
      }
      const Outcome outcome =
          cost(point, plan, plan_text, mesh.display, vocab_padded, chunks, cache, result, board);
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

  // Costs one plan at v = 1 and derives every v and variant.
  Outcome cost(const TrainingPlan& point, const Plan& plan, const std::string& plan_text,
               const std::string& mesh, bool vocab_padded, const std::vector<std::int64_t>& chunks,
               TileCache& cache, TaskResult& result, Leaderboard& board) const {
    const std::int64_t per_v = variants(point, context_.roofs);
    const auto all_v = static_cast<std::int64_t>(chunks.size()) * per_v;
    Scenario scenario = context_.scenario;
    scenario.plan = plan;
    pad_vocabulary(scenario);
    Training& training = scenario.workload.training;
    training.microbatches = point.microbatches;
    training.recompute = point.recompute;
    training.pipeline_interleave = 1;
    training.overlap_gradients = false;
    training.overlap_tensor = false;
    training.offload = {};
    std::optional<RunResult> run;
    try {
      ++result.analyses;
      run.emplace(analyze(std::move(scenario), context_.roofs, &cache));
    } catch (const InputError& error) {
      result.rejected.push_back({point, kModelReason, error.what(), all_v});
      return {std::nullopt, error.what()};
    }
    const ScheduleInputs& inputs = *run->schedule;
    const unsigned masks = offload_masks(context_.roofs);
    Training choice = training_choice(point, 1, masks > 1 ? kOffloadAll : 0U,
                                      context_.scenario.workload.training.overlap_weights);
    const Footprint smallest = schedule_step(inputs, choice).footprint;
    if (!smallest.fits()) {
      result.rejected.push_back(
          {point, kMemoryReason,
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
    const std::int64_t derived_per_mask = overlap_options(point) * tensor_options(point);
    // Every derived plan is the schedule stage's (analysis/schedule.hpp) on this one costing:
    // what `rsim run` computes for the same scenario keys.
    for (const std::int64_t chunk : chunks) {
      TrainingPlan plan_v = point;
      plan_v.interleave = chunk;
      if (chunk > 1 && point.microbatches % point.pipeline != 0) {
        result.rejected.push_back(
            {plan_v, kInterleaveReason,
             fmt::format("{} microbatches over {} stages", point.microbatches, point.pipeline),
             per_v});
        continue;
      }
      for (unsigned mask = 0; mask < masks; ++mask) {
        plan_v.overlap_gradients = false;
        plan_v.overlap_tensor = false;
        plan_v.offload_weights = (mask & kOffloadWeights) != 0U;
        plan_v.offload_activations = (mask & kOffloadActivations) != 0U;
        plan_v.offload_optimizer = (mask & kOffloadOptimizer) != 0U;
        choice = training_choice(plan_v, chunk, mask,
                                 context_.scenario.workload.training.overlap_weights);
        const StepTimes stored = schedule_step(inputs, choice);
        if (!stored.footprint.fits() || stored.host_bytes > inputs.host_capacity) {
          const bool main = !stored.footprint.fits();
          result.rejected.push_back(
              {plan_v, main ? kMemoryReason : kHostMemoryReason,
               main ? fmt::format("needs {} per device offloading {}, has {}",
                                  bytes_text(stored.footprint.total()), plan_v.offloaded(),
                                  bytes_text(stored.footprint.capacity))
                    : fmt::format("offloading {} needs {} of host memory per device, has {}",
                                  plan_v.offloaded(), bytes_text(Bytes(stored.host_bytes)),
                                  bytes_text(Bytes(inputs.host_capacity))),
               derived_per_mask});
          continue;
        }
        for (std::int64_t tensor_choice = 0; tensor_choice < tensor_options(point);
             ++tensor_choice) {
          plan_v.overlap_tensor = tensor_choice == 1;
          for (std::int64_t gradient_choice = 0; gradient_choice < overlap_options(point);
               ++gradient_choice) {
            plan_v.overlap_gradients = gradient_choice == 1;
            choice.overlap_tensor = plan_v.overlap_tensor;
            choice.overlap_gradients = plan_v.overlap_gradients;
            const StepTimes times = schedule_step(inputs, choice);
            ++result.costed;
            if (!board.admits(times, plan_v)) {
              continue;
            }
            TrainingCandidate candidate;
            candidate.plan = plan_v;
            candidate.mesh = mesh;
            candidate.plan_yaml = plan_text;
            candidate.microbatch =
                context_.scenario.workload.batch / (point.microbatches * point.data);
            candidate.vocab_padded = vocab_padded;
            candidate.bubble = Seconds(times.bubble);
            candidate.bubble_fraction = times.bubble_fraction;
            candidate.step_lower = Seconds(times.step_lower);
            candidate.step_upper = Seconds(times.step_upper);
            candidate.step_expected = Seconds(times.step_expected);
            candidate.t_math = Seconds(times.t_math);
            candidate.t_mem = Seconds(times.t_mem);
            candidate.t_net = Seconds(times.t_net);
            candidate.t_host = Seconds(times.t_host);
            candidate.tensor_hidden = Seconds(times.tensor_hidden);
            candidate.footprint = times.footprint;
            candidate.host_bytes = Bytes(times.host_bytes);
            candidate.mfu = context_.model_flops / (static_cast<double>(context_.devices) *
                                                    context_.peak * times.step_expected);
            board.add(std::move(candidate));
          }
        }
      }
    }
    return {};
  }

  const SearchContext& context_;
};

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

TrainingSearchResult search_training_plans(const Scenario& scenario, const Roofs& roofs,
                                           std::int64_t devices,
                                           const TrainingSearchOptions& options) {
  if (scenario.workload.phase != Phase::train) {
    throw InputError("a training plan search needs a scenario with workload phase: train");
  }
  check_search_devices(devices);
  if (devices > 1 && roofs.network.empty()) {
    throw InputError(fmt::format("{} has no network tier to spread a plan over", roofs.hardware));
  }
  const StageSpec& stage = scenario.model.stages.front();
  SearchContext context{scenario, roofs, devices,    1,   0,   0.0, 0.0,
                        0.0,      0.0,   Bytes(0.0), 0.0, 0.0, true};
  context.layers = stage.component.num_layers;
  // The model's own vocabulary: each plan pads it as that plan's tensor axis needs.
  context.vocab = stage.component.unpadded_vocab_size > 0 ? stage.component.unpadded_vocab_size
                                                          : stage.component.vocab_size;
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
  context.uneven_stages = options.uneven_stages;
  const ParameterCount parameters = count_parameters(scenario.model);
  context.layer_share = static_cast<double>(parameters.layers) /
                        static_cast<double>(std::max<std::int64_t>(parameters.total(), 1));
  context.keep = options.keep;
  context.rank_by = options.rank_by;

  TrainingSearchResult result;
  result.scenario = scenario.file;
  result.devices = devices;
  result.rank_by = options.rank_by;
  result.batch = scenario.workload.batch;
  result.seq_len = scenario.workload.seq_len;
  result.layers = context.layers;
  result.model_flops = context.model_flops;
  const auto microbatch_counts =
      static_cast<std::int64_t>(divisors(scenario.workload.batch).size());
  std::vector<TrainingPlan> tasks;
  std::vector<std::int64_t> task_plans;  // the plans each task's shape stands for
  for (const std::int64_t tensor : divisors(devices)) {
    for (const std::int64_t pipeline : divisors(devices / tensor)) {
      const std::int64_t data = devices / (tensor * pipeline);
      const auto chunks = static_cast<std::int64_t>(
          interleaves(context.layers, pipeline, context.uneven_stages).size());
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
              task_plans.push_back(microbatch_counts * chunks * variants(shape, roofs));
            }
          }
        }
      }
    }
  }
  // A shard searches its contiguous slice of the shapes (`rsim merge` adds the slices up).
  const auto [first, end] = options.shard.slice(tasks.size());
  tasks = std::vector<TrainingPlan>(tasks.begin() + static_cast<std::ptrdiff_t>(first),
                                    tasks.begin() + static_cast<std::ptrdiff_t>(end));
  for (std::size_t index = first; index < end; ++index) {
    result.seen += task_plans[index];
  }
  result.shard = options.shard;
  result.shard_first = static_cast<std::int64_t>(first);
  result.shard_end = static_cast<std::int64_t>(end);
  result.all_shapes = static_cast<std::int64_t>(task_plans.size());
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
      result.rejected_by_reason[std::string(to_string(rejection.reason))] += rejection.plans;
      result.rejected.push_back(std::move(rejection));
    }
    std::move(outcome.candidates.begin(), outcome.candidates.end(),
              std::back_inserter(result.ranked));
  }
  std::sort(result.ranked.begin(), result.ranked.end(), RanksBefore{options.rank_by});
  if (options.keep > 0 && result.ranked.size() > options.keep) {
    result.ranked.resize(options.keep);
  }
  return result;
}

}  // namespace rsim
