// SPDX-License-Identifier: MIT
#include "sim/analysis/training.hpp"

#include "sim/cost/collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace rsim {

std::int64_t pipeline_stages(const Plan& plan) {
  const std::optional<std::string> axis = plan.pipeline_axis();
  return axis ? plan.find_axis(*axis)->size : 1;
}

namespace {

// FSDP / ZeRO-3: a weight rule stores weights split over the data (`batch`) axis.
bool weights_stored_over_data(const Plan& plan) {
  const std::optional<std::string> data_axis = plan.data_axis();
  return data_axis && std::any_of(plan.weight_rules.begin(), plan.weight_rules.end(),
                                  [&](const auto& rule) { return rule.second == *data_axis; });
}

}  // namespace

TrainingMemory training_memory(const Scenario& scenario, const OpGraph& graph,
                               const ParameterCount& parameters, double stored_fraction) {
  TrainingMemory memory;
  const double stored = static_cast<double>(parameters.total()) * stored_fraction;
  // ZeRO-1/2 split the optimizer state (and the gradients) over the data axis, unless the
  // weights themselves already are (ZeRO-3: stored_fraction has it).
  const Plan& plan = scenario.plan;
  const std::optional<std::string> data_axis = plan.data_axis();
  const double zero_share = plan.zero_stage > 0 && data_axis && !weights_stored_over_data(plan)
                                ? 1.0 / static_cast<double>(plan.find_axis(*data_axis)->size)
                                : 1.0;
  memory.gradients = Bytes(stored * bytes_per_element(gradient_dtype(scenario.precision)) *
                           (plan.zero_stage >= 2 ? zero_share : 1.0));
  memory.optimizer_state =
      Bytes(stored * zero_share *
            optimizer_state_bytes_per_parameter(scenario.workload.training.optimizer,
                                                scenario.precision.weights));
  const Training& training = scenario.workload.training;
  const std::int64_t stages = pipeline_stages(scenario.plan);
  Bytes per_layer;    // every forward output of one layer, one microbatch
  Bytes layer_input;  // the first layer op's input: what full recomputation keeps
  Bytes head;         // embedding and head outputs, one microbatch
  double layers = 0.0;
  double layer_runs = 0.0;  // the first layer op's count: every layer of every microbatch
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
    if (op.pass == Pass::forward && op.kind == OpKind::elementwise &&
        op.elementwise == ElementwiseKind::loss && op.block != Block::layer) {
      // No backward op reads the logits: the loss's backward reads the fp32 tensor it keeps
      // (none when fused into the head), so the head's output is freed once the loss has read it
      // (Megatron's logits.float(); a fused linear cross-entropy never writes them).
      head = head - op.inputs.front().bytes();
    }
    if (op.pass != Pass::forward || op.kind == OpKind::collective || op.outputs.empty() ||
        (op.kind == OpKind::elementwise && op.fused)) {
      continue;
    }
    const bool attention_internal =
        op.group == "attention_scores" ||
        (op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::softmax);
    if (training.recompute == Recompute::selective && attention_internal) {
      continue;
    }
    if (op.block == Block::layer) {
      if (layer_input.si() == 0.0) {
        layer_input = op.inputs.front().bytes();
        layer_runs = static_cast<double>(op.count);
        layers = layer_runs / static_cast<double>(training.microbatches);
      }
      // An op of some layers only (DeepSeek's dense MLPs) weighs by its share of them.
      per_layer += op.outputs.front().bytes() * (static_cast<double>(op.count) / layer_runs);
    } else {
      head += op.outputs.front().bytes();
    }
  }
  const auto in_flight = static_cast<double>(std::min<std::int64_t>(training.microbatches, stages));
  const bool full = training.recompute == Recompute::full;
  memory.layer_saved = full ? layer_input : per_layer;
  memory.recompute_working = full ? per_layer : Bytes(0.0);
  memory.head = head;
  memory.layers = layers;
  memory.in_flight = in_flight;
  // Each microbatch in flight keeps its saved activations; full recomputation's working set
  // (one layer's outputs, rebuilt in the backward) exists once: a device recomputes one layer
  // of one microbatch at a time (issue 21 #4: it was counted per microbatch in flight).
  memory.saved_activations = full ? layer_input * layers * in_flight + per_layer + head
                                  : per_layer * layers * in_flight + head;
  return memory;
}

}  // namespace rsim

namespace rsim {
namespace {

constexpr std::array kPassOrder{Pass::forward, Pass::recompute, Pass::backward, Pass::optimizer};

// Recomputation runs inside the backward phase: its math and collectives count there.
Pass phase_of(Pass pass) { return pass == Pass::recompute ? Pass::backward : pass; }

bool is_math(const Op& op) { return op.kind == OpKind::matmul || op.kind == OpKind::attention; }

// Σ T_math of the layers' matmuls and attention, and Σ T_net of the axis's layer collectives,
// per phase (forward, backward), all instances.
struct PhaseSums {
  double t_math[2] = {0.0, 0.0};
  double t_net[2] = {0.0, 0.0};
  std::vector<std::pair<std::size_t, int>> collectives;  // rows on the axis, and their phase
};

PhaseSums phase_sums(const OpGraph& graph, const CostTable& table, const std::string& axis) {
  PhaseSums sums;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const Op& op = graph.op(table.order[row]);
    const Pass phase = phase_of(op.pass);
    if (op.block != Block::layer || phase == Pass::optimizer) {
      continue;
    }
    const int index = phase == Pass::forward ? 0 : 1;
    const auto table_row = static_cast<Eigen::Index>(row);
    if (is_math(op)) {
      sums.t_math[index] +=
          table.times(table_row, CostTable::kMathColumn) * table.counts(table_row);
    } else if (op.kind == OpKind::collective && op.mesh_axis == axis) {
      sums.t_net[index] +=
          table.times(table_row, CostTable::kNetworkColumn) * table.counts(table_row);
      sums.collectives.emplace_back(row, index);
    }
  }
  return sums;
}

// A hierarchical axis ("nvlink+ib") splits its devices into whole groups of each inner tier's
// domain: a degree beyond a domain is costed at the next whole number of groups (more devices,
// so the collective costs no less and the degree found stays on the safe side).
std::int64_t whole_groups(std::int64_t degree, const std::vector<NetworkTier>& tiers) {
  std::int64_t group = 1;
  for (std::size_t index = 0; index + 1 < tiers.size() && tiers[index].devices > 0; ++index) {
    group *= tiers[index].devices;
    if (degree > group) {
      degree = (degree + group - 1) / group * group;
    }
  }
  return degree;
}

// T_net of the given rows re-costed with their bytes × `scale` over `devices` (the tier's
// domain lifted: the split is a what-if).
double recosted(const OpGraph& graph, const CostTable& table, const Roofs& roofs,
                const std::vector<std::size_t>& rows, double scale, std::int64_t devices) {
  if (devices == 1) {
    return 0.0;
  }
  double t_net = 0.0;
  for (std::size_t row : rows) {
    const Op& op = graph.op(table.order[row]);
    std::vector<NetworkTier> tiers;
    for (const NetworkTier* tier : roofs.find_networks(op.network)) {
      tiers.push_back(*tier);
    }
    tiers.back().devices = 0;
    std::vector<const NetworkTier*> pointers;
    for (const NetworkTier& tier : tiers) {
      pointers.push_back(&tier);
    }
    Collective collective = op.collective;
    collective.axes = {whole_groups(devices, tiers)};
    collective.bytes = collective.bytes * scale;
    t_net += collective_cost(collective, pointers, false).time.si() *
             table.counts(static_cast<Eigen::Index>(row));
  }
  return t_net;
}

// The largest tensor degree Y' at which T_math · Y / Y' still covers the axis's collectives
// re-costed over Y' devices (the tier's domain lifted).
std::int64_t largest_tensor_degree(const OpGraph& graph, const CostTable& table, const Roofs& roofs,
                                   const PhaseSums& sums, int phase, std::int64_t size) {
  std::vector<std::size_t> rows;
  for (const auto& [row, index] : sums.collectives) {
    if (index == phase) {
      rows.push_back(row);
    }
  }
  const auto covers = [&](std::int64_t degree) {
    const double t_net = recosted(graph, table, roofs, rows, 1.0, degree);
    const double t_math =
        sums.t_math[phase] * static_cast<double>(size) / static_cast<double>(degree);
    return t_math >= t_net;
  };
  // T_math(Y') falls and T_net(Y') grows with Y': bracket by doubling, then bisect.
  constexpr std::int64_t kMaxDegree = std::int64_t{1} << 20;
  if (!covers(2)) {
    return 1;
  }
  std::int64_t low = 2;
  std::int64_t high = 4;
  while (high <= kMaxDegree && covers(high)) {
    low = high;
    high *= 2;
  }
  if (high > kMaxDegree) {
    return low;
  }
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    (covers(middle) ? low : high) = middle;
  }
  return low;
}

std::vector<std::size_t> forward_collectives(const PhaseSums& sums) {
  std::vector<std::size_t> rows;
  for (const auto& [row, phase] : sums.collectives) {
    if (phase == 0) {
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace

std::optional<FsdpTpSplit> fsdp_tp_split(const Scenario& scenario, const OpGraph& graph,
                                         const CostTable& table, const Roofs& roofs) {
  const Plan& plan = scenario.plan;
  const std::optional<std::string> data_axis = plan.data_axis();
  const std::optional<std::string> tensor_axis = plan.mesh_axis_for(logical_axis::mlp, false);
  if (!weights_stored_over_data(plan) || !tensor_axis || *tensor_axis == *data_axis) {
    return std::nullopt;
  }
  const std::int64_t data = plan.find_axis(*data_axis)->size;
  const std::int64_t tensor = plan.find_axis(*tensor_axis)->size;
  const std::int64_t devices = data * tensor;
  const PhaseSums data_sums = phase_sums(graph, table, *data_axis);
  const PhaseSums tensor_sums = phase_sums(graph, table, *tensor_axis);
  const std::vector<std::size_t> gathers = forward_collectives(data_sums);
  const std::vector<std::size_t> reductions = forward_collectives(tensor_sums);
  FsdpTpSplit split;
  split.t_math = Seconds(data_sums.t_math[0]);
  split.tokens_per_device = static_cast<double>(scenario.workload.batch) *
                            static_cast<double>(scenario.workload.seq_len) /
                            static_cast<double>(devices);
  double best = std::numeric_limits<double>::infinity();
  double least_ratio = std::numeric_limits<double>::infinity();
  for (std::int64_t split_data = 1; split_data <= devices; ++split_data) {
    if (devices % split_data != 0) {
      continue;
    }
    const std::int64_t split_tensor = devices / split_data;
    // Gathered weights are sharded over the tensor axis; all-reduced activations over data.
    const double t_fsdp =
        recosted(graph, table, roofs, gathers,
                 static_cast<double>(tensor) / static_cast<double>(split_tensor), split_data);
    const double t_tensor =
        recosted(graph, table, roofs, reductions,
                 static_cast<double>(data) / static_cast<double>(split_data), split_tensor);
    if (std::max(t_fsdp, t_tensor) < best) {
      best = std::max(t_fsdp, t_tensor);
      split.data = split_data;
      split.tensor = split_tensor;
      split.t_fsdp = Seconds(t_fsdp);
      split.t_tensor = Seconds(t_tensor);
    }
    if (t_tensor <= split.t_math.si() && t_fsdp / split.t_math.si() < least_ratio) {
      least_ratio = t_fsdp / split.t_math.si();
      split.min_tokens_data = split_data;
    }
  }
  split.min_tokens_per_device =
      std::isfinite(least_ratio) ? split.tokens_per_device * least_ratio : 0.0;
  return split;
}

std::vector<PassTotals> pass_totals(const OpGraph& graph, const CostTable& table) {
  std::vector<PassTotals> result;
  for (Pass pass : kPassOrder) {
    PassTotals totals;
    totals.pass = pass;
    bool present = false;
    for (std::size_t row = 0; row < table.order.size(); ++row) {
      if (graph.op(table.order[row]).pass != pass) {
        continue;
      }
      present = true;
      const auto index = static_cast<Eigen::Index>(row);
      const double count = table.counts(index);
      totals.flops += table.costs[row].flops * count;
      totals.t_math += Seconds(table.times(index, CostTable::kMathColumn) * count);
      totals.t_mem += Seconds(table.times(index, CostTable::kMemoryColumn) * count);
      totals.t_net += Seconds(table.times(index, CostTable::kNetworkColumn) * count);
      totals.t_lower += Seconds(table.times.row(index).maxCoeff() * count);
      totals.t_upper += Seconds(table.times.row(index).sum() * count);
      totals.t_expected += Seconds(table.expected(index) * count);
    }
    if (present) {
      result.push_back(totals);
    }
  }
  return result;
}

std::vector<AxisThreshold> training_thresholds(const Scenario& scenario, const OpGraph& graph,
                                               const CostTable& table, const Roofs& roofs) {
  std::vector<AxisThreshold> result;
  const Plan& plan = scenario.plan;
  const std::optional<std::string> data_axis = plan.data_axis();
  const std::optional<std::string> tensor_axis = plan.mesh_axis_for(logical_axis::mlp, false);
  for (const MeshAxis& mesh : plan.mesh) {
    const bool data = data_axis && mesh.name == *data_axis;
    const bool tensor = tensor_axis && mesh.name == *tensor_axis;
    if (mesh.size == 1 || (!data && !tensor)) {
      continue;
    }
    const PhaseSums sums = phase_sums(graph, table, mesh.name);
    AxisThreshold threshold;
    threshold.mesh_axis = mesh.name;
    threshold.network = mesh.network;
    threshold.size = mesh.size;
    threshold.data = data;
    // The tighter phase: the larger T_net / T_math.
    const int phase = sums.t_net[1] * sums.t_math[0] >= sums.t_net[0] * sums.t_math[1] ? 1 : 0;
    threshold.pass = phase == 0 ? Pass::forward : Pass::backward;
    threshold.t_math = Seconds(sums.t_math[phase]);
    threshold.t_net = Seconds(sums.t_net[phase]);
    if (data) {
      threshold.tokens_per_shard = static_cast<double>(scenario.workload.batch) *
                                   static_cast<double>(scenario.workload.seq_len) /
                                   static_cast<double>(mesh.size);
      threshold.critical_tokens_per_shard =
          sums.t_math[phase] > 0.0
              ? threshold.tokens_per_shard * sums.t_net[phase] / sums.t_math[phase]
              : 0.0;
    } else {
      threshold.largest_degree = largest_tensor_degree(graph, table, roofs, sums, phase, mesh.size);
      std::int64_t domain = 1;
      for (const NetworkTier* tier : roofs.find_networks(mesh.network)) {
        domain = tier->devices > 0 ? domain * tier->devices : 0;
      }
      threshold.beyond_domain = domain > 0 && threshold.largest_degree > domain;
    }
    result.push_back(threshold);
  }
  return result;
}

}  // namespace rsim
