// SPDX-License-Identifier: MIT
#include "sim/analysis/analysis.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace rsim {
namespace {

std::vector<GroupCritical> group_criticals(const OpGraph& graph, const CostTable& table,
                                           const Roofs& roofs) {
  std::vector<GroupCritical> result;
  for (const OpGraph::Stage& stage : graph.stages) {
    for (std::string_view group : matmul_groups()) {
      std::vector<const Op*> ops;
      for (OpGraph::Vertex vertex : table.order) {
        const Op& op = graph.op(vertex);
        if (op.kind == OpKind::matmul && op.stage == stage.name && op.group == group) {
          ops.push_back(&op);
        }
      }
      if (!ops.empty()) {
        result.push_back({stage.name, std::string(group), critical_token_batch(ops, roofs)});
      }
    }
  }
  return result;
}

}  // namespace

Bytes FootprintPlan::Visit::working_bytes() const {
  Bytes working;
  for (const Tensor* tensor : activations) {
    working += tensor->bytes();
  }
  return working;
}

namespace {

// Weights, KV cache and activations at the graph's current sizes (weights_and_cache's, before the
// weight fraction); the activations summed unless given. Weights: every parameter once in the
// weight dtype; a per-batch group holds `batch` copies, which its graph tensors already carry
// (their batch axis), so add the difference. KV cache: the cache writes of one run of each stage
// (count / steps = layers).
Footprint footprint(const FootprintPlan& plan, const Bytes* activations) {
  Footprint result;
  result.weights = plan.weights;
  if (activations != nullptr) {
    result.activations = *activations;
  }
  for (const FootprintPlan::Visit& visit : plan.visits) {
    const double runs = static_cast<double>(visit.op->count) / visit.steps;
    for (const Tensor* tensor : visit.kv_cache) {
      result.kv_cache += tensor->bytes() * runs;
    }
    if (visit.working_set && activations == nullptr) {
      result.activations = std::max(result.activations, visit.working_bytes());
    }
    for (const Tensor* tensor : visit.per_batch_weights) {
      const auto copies = static_cast<double>(tensor->axes.front().size);
      result.weights += tensor->bytes() * (runs * (1.0 - 1.0 / copies));
    }
  }
  return result;
}

}  // namespace

Roofs scenario_roofs(const Scenario& scenario, std::string_view mode, const RoofOverrides& extra) {
  RoofOverrides overrides = scenario.roof_overrides;
  overrides.peaks.insert(overrides.peaks.end(), extra.peaks.begin(), extra.peaks.end());
  overrides.bandwidths.insert(overrides.bandwidths.end(), extra.bandwidths.begin(),
                              extra.bandwidths.end());
  return resolve_roofs(scenario.hardware, mode.empty() ? std::string_view(scenario.mode) : mode,
                       overrides);
}

namespace {

std::optional<double> critical_width(const OpGraph& graph, const CostTable& table) {
  std::vector<std::size_t> row_of(graph.size(), 0);
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    row_of[table.order[row]] = row;
  }
  std::optional<double> widest;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const Op& op = graph.op(table.order[row]);
    if (op.kind != OpKind::matmul || !op.inputs.front().has_axis("embed")) {
      continue;
    }
    for (auto edge :
         boost::make_iterator_range(boost::out_edges(table.order[row], graph.graph()))) {
      const OpGraph::Vertex target = boost::target(edge, graph.graph());
      const Op& next = graph.op(target);
      if (next.kind != OpKind::collective || next.name != op.name + ".all_reduce") {
        continue;
      }
      double local_width = 0.0;
      for (const Axis& axis : op.inputs.front().axes) {
        local_width = axis.name == "embed" ? static_cast<double>(axis.size) : local_width;
      }
      const double devices = static_cast<double>(next.collective.axes.front());
      const double t_math = table.times(static_cast<Eigen::Index>(row), CostTable::kMathColumn);
      const double t_net =
          table.times(static_cast<Eigen::Index>(row_of[target]), CostTable::kNetworkColumn);
      if (t_math > 0.0) {
        const double width = local_width * devices * t_net / t_math;
        widest = widest ? std::max(*widest, width) : width;
      }
    }
  }
  return widest;
}

}  // namespace

ShardedGraph planned_graph(const Scenario& scenario) {
  ShardedGraph planned{build_graph(scenario), {}, 1.0};
  if (scenario.plan.devices() > 1) {
    planned = shard_graph(planned.graph, scenario.plan);
  }
  return planned;
}

FootprintPlan plan_footprint(const Scenario& scenario, const OpGraph& graph,
                             const std::vector<OpGraph::Vertex>& order,
                             const ParameterCount& parameters, double weight_fraction,
                             const Roofs& roofs) {
  FootprintPlan plan;
  plan.weights = Bytes(static_cast<double>(parameters.total()) *
                       bytes_per_element(scenario.precision.weights));
  plan.weight_fraction = weight_fraction;
  const MemoryTier& main_memory = roofs.main_memory();
  plan.capacity =
      main_memory.capacity * static_cast<double>(main_memory.count) - scenario.host_share;
  const auto& per_batch = scenario.per_batch_weights;
  for (const OpGraph::Stage& stage : graph.stages) {
    for (OpGraph::Vertex vertex : order) {
      const Op& op = graph.op(vertex);
      if (op.stage != stage.name) {
        continue;
      }
      FootprintPlan::Visit visit;
      visit.op = &op;
      visit.steps = static_cast<double>(stage.steps);
      if (op.kind == OpKind::kv_cache_write) {
        for (const Tensor& tensor : op.outputs) {
          visit.kv_cache.push_back(&tensor);
        }
      }
      if (op.kind == OpKind::attention && stage.context > 0) {
        // A decode step's own cache: the context it reads, besides the token it writes.
        for (const Tensor& tensor : op.inputs) {
          if (tensor.name == "k_cache" || tensor.name == "v_cache") {
            visit.kv_cache.push_back(&tensor);
          }
        }
      }
      visit.working_set =
          !(op.kind == OpKind::elementwise && op.fused) && op.kind != OpKind::collective;
      for (const auto* tensors : {&op.inputs, &op.outputs}) {
        for (const Tensor& tensor : *tensors) {
          if (tensor.role == TensorRole::activation) {
            visit.activations.push_back(&tensor);
          }
        }
      }
      if (op.kind == OpKind::matmul &&
          std::find(per_batch.begin(), per_batch.end(), op.group) != per_batch.end()) {
        for (const Tensor& tensor : op.inputs) {
          if (tensor.role == TensorRole::weight) {
            visit.per_batch_weights.push_back(&tensor);
          }
        }
      }
      plan.visits.push_back(std::move(visit));
    }
  }
  return plan;
}

namespace {

Footprint weights_and_cache(const FootprintPlan& plan, const Bytes* activations) {
  Footprint memory = footprint(plan, activations);
  memory.weights = memory.weights * plan.weight_fraction;
  memory.capacity = plan.capacity;
  return memory;
}

}  // namespace

Footprint weights_and_cache(const FootprintPlan& plan) { return weights_and_cache(plan, nullptr); }

Footprint weights_and_cache(const FootprintPlan& plan, Bytes activations) {
  return weights_and_cache(plan, &activations);
}

Footprint weights_and_cache(const Scenario& scenario, const OpGraph& graph,
                            const std::vector<OpGraph::Vertex>& order,
                            const ParameterCount& parameters, double weight_fraction,
                            const Roofs& roofs) {
  return weights_and_cache(
      plan_footprint(scenario, graph, order, parameters, weight_fraction, roofs));
}

RunResult analyze(Scenario scenario, Roofs roofs, TileCache* cache) {
  ShardedGraph planned = planned_graph(scenario);
  OpGraph graph = std::move(planned.graph);
  std::vector<std::string> notes = std::move(planned.notes);
  const double weight_fraction = planned.weight_fraction;
  const std::vector<OpGraph::Vertex> order = graph.topological_order();
  CostTable table = cost_graph(graph, order, roofs, scenario.tiles, cache);
  std::vector<std::optional<CriticalBatch>> critical;
  critical.reserve(table.order.size());
  for (OpGraph::Vertex vertex : table.order) {
    critical.push_back(critical_token_batch(graph.op(vertex), roofs));
  }
  Bounds bounds = compute_bounds(graph, table);
  std::optional<PipelineSchedule> pipeline = add_pipeline_bubble(scenario, graph, table, bounds);
  std::vector<AxisThreshold> thresholds;
  std::optional<FsdpTpSplit> split;
  if (scenario.workload.phase == "train") {
    thresholds = training_thresholds(scenario, graph, table, roofs);
    split = fsdp_tp_split(scenario, graph, table, roofs);
  }
  ParameterCount parameters = count_parameters(scenario.model);
  std::vector<GroupCritical> groups = group_criticals(graph, table, roofs);
  Footprint memory = weights_and_cache(scenario, graph, order, parameters, weight_fraction, roofs);
  std::optional<TrainingMemory> training;
  if (scenario.workload.phase == "train") {
    training = training_memory(scenario, graph, parameters, weight_fraction);
    memory.activations = training->saved_activations;
    memory.gradients = training->gradients;
    memory.optimizer_state = training->optimizer_state;
  }
  const std::optional<double> width = critical_width(graph, table);
  std::optional<DecodeCritical> decode;
  std::optional<DecodeRequest> request;
  if (scenario.workload.phase == "decode") {
    decode = decode_critical(scenario, graph, table, roofs);
    if (scenario.workload.decode_steps > 0) {
      request = analyze_request(scenario, roofs);
      // What must fit is the last step's: its KV cache holds context + N tokens per sequence.
      memory.kv_cache = request->last_step_kv_cache;
    }
  }
  return RunResult{std::move(scenario),
                   std::move(roofs),
                   std::move(graph),
                   std::move(table),
                   std::move(critical),
                   std::move(bounds),
                   parameters,
                   std::move(groups),
                   memory,
                   std::move(notes),
                   width,
                   decode,
                   request,
                   pipeline,
                   std::move(thresholds),
                   split,
                   training};
}

namespace {

// T_math and the chosen roof's time over the query's scope.
std::pair<Seconds, Seconds> scope_times(const RunResult& run, const ThresholdQuery& query) {
  const auto roof_of = [&](const Totals& totals) {
    return query.roof == Bound::network ? totals.t_net : totals.t_mem;
  };
  if (query.scope.empty()) {
    return {run.bounds.total.t_math, roof_of(run.bounds.total)};
  }
  const std::size_t slash = query.scope.find('/');
  const std::string stage = query.scope.substr(0, slash);
  const std::string group = slash == std::string::npos ? "" : query.scope.substr(slash + 1);
  Seconds t_math;
  Seconds t_roof;
  bool found = false;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    if (op.stage != stage || op.group != group) {
      continue;
    }
    found = true;
    const OpCost& cost = run.table.costs[row];
    const auto count = static_cast<double>(op.count);
    t_math += cost.t_math * count;
    t_roof += (query.roof == Bound::network ? cost.t_net : cost.t_mem) * count;
  }
  if (!found) {
    throw InputError(
        fmt::format("--scope {}: no ops of group '{}' in stage '{}' (write "
                    "STAGE/GROUP, e.g. prefix/mlp)",
                    query.scope, group, stage));
  }
  return {t_math, t_roof};
}

}  // namespace

ThresholdResult find_threshold(const ThresholdQuery& query,
                               const std::function<Scenario(std::int64_t)>& load,
                               const std::function<Roofs(const Scenario&)>& roofs_of) {
  ThresholdResult result;
  const auto evaluate = [&](std::int64_t value) {
    ++result.evaluations;
    Scenario scenario = load(value);
    Roofs roofs = roofs_of(scenario);
    const RunResult run = analyze(std::move(scenario), std::move(roofs));
    const auto [t_math, t_roof] = scope_times(run, query);
    result.t_math = t_math;
    result.t_roof = t_roof;
    return t_math >= t_roof;
  };
  // Bracket by doubling, then bisect: the smallest value with T_math ≥ T_roof (T_math − T_roof
  // grows with the batch or sequence for every op rsim models).
  // Work in units of `step`: value = step · k.
  const std::int64_t limit = std::max<std::int64_t>(1, query.high / query.step);
  const auto holds = [&](std::int64_t units) { return evaluate(units * query.step); };
  std::int64_t low = 0;
  std::int64_t high = 1;
  while (!holds(high)) {
    if (high >= limit) {
      return result;
    }
    low = high;
    high = std::min(2 * high, limit);
  }
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    (holds(middle) ? high : low) = middle;
  }
  holds(high);
  result.value = high * query.step;
  return result;
}

ThresholdResult threshold_scenario(const std::filesystem::path& path,
                                   const ScenarioOverrides& overrides, ThresholdQuery& query,
                                   std::string_view mode, const RoofOverrides& roof_overrides) {
  const std::string param = query.key;
  if (param != "batch" && param != "seq_len" && param != "d_model") {
    throw InputError(fmt::format("--param {}: expected batch, seq_len or d_model", param));
  }
  const Scenario baseline = load_scenario(path, overrides);
  const bool width = param == "d_model";
  query.key = width ? "model.hidden_size" : "workload." + param;
  const std::string split_axis = width ? "embed" : param == "batch" ? "batch" : "seq";
  query.step = 1;
  if (const auto axis = baseline.plan.mesh_axis_for(split_axis, false)) {
    query.step = baseline.plan.find_axis(*axis)->size;
  }
  const auto load = [&](std::int64_t value) {
    if (!width) {
      ScenarioOverrides with_value = overrides;
      with_value.sets.emplace_back(query.key, std::to_string(value));
      return load_scenario(path, with_value);
    }
    Scenario scenario = baseline;
    for (StageSpec& stage : scenario.model.stages) {
      stage.component.hidden_size = value;
    }
    return scenario;
  };
  const auto roofs_of = [&](const Scenario& scenario) {
    return scenario_roofs(scenario, mode, roof_overrides);
  };
  return find_threshold(query, load, roofs_of);
}

namespace {
// `rsim matmul --shard` names: the contracting width D, the batch B, the output width F.
constexpr std::array kShardNames{
    Named<MatmulSharding>{MatmulSharding::none, "none"},
    Named<MatmulSharding>{MatmulSharding::contract, "d"},
    Named<MatmulSharding>{MatmulSharding::batch, "batch"},
    Named<MatmulSharding>{MatmulSharding::out, "f"},
};
}  // namespace

std::optional<MatmulSharding> parse_matmul_sharding(std::string_view name) {
  const auto sharding = find_named(name, kShardNames);
  return sharding == MatmulSharding::none ? std::nullopt : sharding;
}

std::string_view to_string(MatmulSharding sharding) { return name_of(sharding, kShardNames); }

namespace {

// The per-device share of a sharded dimension; it must divide evenly.
std::int64_t split(std::int64_t size, std::int64_t devices, std::string_view name) {
  if (size % devices != 0) {
    throw InputError(fmt::format("{} = {} does not divide over {} devices", name, size, devices));
  }
  return size / devices;
}

}  // namespace

const NetworkTier& require_network(const Roofs& roofs, std::string_view network,
                                   std::string_view flag) {
  if (const NetworkTier* tier = roofs.find_network(network)) {
    return *tier;
  }
  std::vector<std::string> names;
  for (const NetworkTier& candidate : roofs.network) {
    names.push_back(candidate.name);
  }
  throw InputError(fmt::format(
      "{} {}: {} has no network tier '{}' (tiers: {})", flag, network, roofs.hardware, network,
      names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
}

CollectiveResult analyze_collective(Collective collective, std::string_view network,
                                    const Roofs& roofs) {
  const NetworkTier& tier = require_network(roofs, network, "--network");
  collective.wraparound =
      collective.wraparound &&
      (tier.topology != Topology::torus ||
       std::all_of(collective.axes.begin(), collective.axes.end(),
                   [&](std::int64_t size) { return size == tier.wraparound_size; }));
  CollectiveCost cost = collective_cost(collective, tier);
  return CollectiveResult{roofs.hardware, tier, std::move(collective), std::move(cost)};
}

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs, const MatmulPlan& plan,
                            const TileChoices& tiles) {
  MatmulResult result;
  result.global = shape;
  result.plan = plan;
  MatmulShape local = shape;
  const NetworkTier* tier = nullptr;
  if (plan.devices > 1) {
    if (plan.shard == MatmulSharding::none) {
      throw InputError("--devices > 1 needs --shard d, batch or f");
    }
    tier = &require_network(roofs, plan.network, "--network");
    switch (plan.shard) {
      case MatmulSharding::contract:
        local.contract = split(shape.contract, plan.devices, "D");
        break;
      case MatmulSharding::batch:
        local.batch = split(shape.batch, plan.devices, "B");
        break;
      case MatmulSharding::out:
        local.out = split(shape.out, plan.devices, "F");
        break;
      case MatmulSharding::none:
        break;
    }
  }
  result.op = make_matmul(local);
  check_tile_tiers(tiles, roofs.memory, roofs.hardware);
  result.cost = cost_op(result.op, roofs, tiles);
  result.critical = critical_token_batch(result.op, roofs);
  if (tier != nullptr && plan.shard == MatmulSharding::contract) {
    // Each device holds partial sums of the whole [B, F] output: all-reduce them.
    Collective collective;
    collective.kind = CollectiveKind::all_reduce;
    collective.bytes = result.op.outputs.front().bytes();
    collective.axes = {plan.devices};
    collective.wraparound =
        tier->topology != Topology::torus || plan.devices == tier->wraparound_size;
    collective.in_network_reduction = plan.in_network_reduction;
    result.collective_cost = collective_cost(collective, *tier);
    result.collective = collective;
    result.t_net = result.collective_cost->time;
    result.critical_d = static_cast<double>(shape.contract) * (result.t_net / result.cost.t_math);
  }
  const OpCost& cost = result.cost;
  result.t_lower = std::max(cost.t_lower, result.t_net);
  result.t_upper = cost.t_upper + result.t_net;
  result.bound = result.t_net > cost.t_lower ? Bound::network : cost.bound;
  result.roofs = std::move(roofs);
  return result;
}

}  // namespace rsim
