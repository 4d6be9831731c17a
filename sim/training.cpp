// SPDX-License-Identifier: MIT
#include "sim/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rsim {
namespace {

// FlashAttention-2 (Dao 2023, §3.1.2): the backward pass runs 5 matmuls per tile (S recomputed,
// dV, dP, dQ, dK) against the forward's 2, so 2.5 × the forward FLOPs.
constexpr double kAttentionBackwardScale = 2.5;

// Vector FLOPs per parameter of one update. Adam: m ← β₁m + (1−β₁)g (3), v ← β₂v + (1−β₂)g² (4),
// p ← p − lr·m̂/(√v̂ + ε) with the bias corrections folded into lr (5). SGD with momentum:
// m ← μm + g (2), p ← p − lr·m (2).
struct OptimizerRule {
  Optimizer optimizer;
  double moments;  // fp32 state tensors besides the master copy
  double flops_per_parameter;
};
constexpr std::array kOptimizerRules{
    OptimizerRule{Optimizer::adam, 2.0, 12.0},
    OptimizerRule{Optimizer::sgd, 1.0, 4.0},
};

const OptimizerRule& rule_of(Optimizer optimizer) {
  return *std::find_if(kOptimizerRules.begin(), kOptimizerRules.end(),
                       [&](const OptimizerRule& rule) { return rule.optimizer == optimizer; });
}

Tensor gradient_of(const Tensor& tensor, DType dtype) {
  Tensor gradient = tensor;
  gradient.name = "d" + tensor.name;
  gradient.dtype = dtype;
  return gradient;
}

class TrainingBuilder {
 public:
  TrainingBuilder(OpGraph& graph, const Scenario& scenario)
      : graph_(graph),
        scenario_(scenario),
        microbatches_(scenario.workload.training.microbatches),
        gradient_(gradient_dtype(scenario.precision)) {}

  void build() {
    const std::vector<OpGraph::Vertex> forward = graph_.topological_order();
    last_ = forward.back();
    add_recompute(forward);
    std::map<OpGraph::Vertex, OpGraph::Vertex> weight_gradients;
    for (auto vertex = forward.rbegin(); vertex != forward.rend(); ++vertex) {
      const Op op = graph_.op(*vertex);  // a copy: adding vertices may reallocate
      const bool has_producer = boost::in_degree(*vertex, graph_.graph()) > 0;
      switch (op.kind) {
        case OpKind::matmul:
          if (const auto wgrad = add_matmul_backward(op, has_producer)) {
            weight_gradients[*vertex] = *wgrad;
          }
          break;
        case OpKind::attention:
          add_attention_backward(op);
          break;
        case OpKind::elementwise:
        case OpKind::embedding_gather:
          add_elementwise_backward(op);
          break;
        case OpKind::kv_cache_write:
        case OpKind::collective:
          break;
      }
    }
    for (OpGraph::Vertex vertex : forward) {
      add_update(graph_.op(vertex), weight_gradients.contains(vertex)
                                        ? std::optional(weight_gradients.at(vertex))
                                        : std::nullopt);
    }
  }

 private:
  OpGraph::Vertex chain(Op op, Pass pass) {
    op.pass = pass;
    const OpGraph::Vertex vertex = graph_.add_op(std::move(op));
    graph_.add_edge(last_, vertex, "");
    last_ = vertex;
    return vertex;
  }

  // Full: every op of the layer blocks runs again; selective: attention only (its internals
  // are what selective recomputation drops).
  void add_recompute(const std::vector<OpGraph::Vertex>& forward) {
    const Recompute recompute = scenario_.workload.training.recompute;
    for (OpGraph::Vertex vertex : forward) {
      const Op& op = graph_.op(vertex);
      const bool attention_internal =
          op.kind == OpKind::attention || op.group == "attention_scores" ||
          (op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::softmax);
      const bool again =
          op.block == "layer" && (recompute == Recompute::full ||
                                  (recompute == Recompute::selective && attention_internal));
      if (again) {
        Op copy = op;
        copy.name += ".recompute";
        chain(std::move(copy), Pass::recompute);
      }
    }
  }

  // dX = dY·Wᵀ (unless X is the model's input) and dW = Xᵀ·dY; returns the dW vertex.
  std::optional<OpGraph::Vertex> add_matmul_backward(const Op& op, bool has_producer) {
    const Tensor output_gradient = gradient_of(op.outputs.front(), scenario_.precision.activations);
    const OpGraph::Vertex upstream = last_;
    std::optional<OpGraph::Vertex> wgrad;
    if (op.inputs[1].role == TensorRole::weight) {
      Op update = op;
      update.name = op.name + ".wgrad";
      update.inputs = {op.inputs[0], output_gradient};
      update.outputs = {gradient_of(op.inputs[1], gradient_)};
      update.accumulated = microbatches_;
      update.pass = Pass::backward;
      wgrad = graph_.add_op(std::move(update));
      graph_.add_edge(upstream, *wgrad, "");
    }
    if (has_producer) {
      Op input_gradient = op;
      input_gradient.name = op.name + ".dgrad";
      input_gradient.inputs = {output_gradient, op.inputs[1]};
      input_gradient.outputs = {gradient_of(op.inputs[0], scenario_.precision.activations)};
      chain(std::move(input_gradient), Pass::backward);
    }
    return wgrad;
  }

  void add_attention_backward(const Op& op) {
    Op backward = op;
    backward.name = op.name + ".backward";
    const Tensor& query = op.inputs[0];
    backward.inputs.push_back(op.outputs.front());
    backward.inputs.push_back(gradient_of(op.outputs.front(), scenario_.precision.activations));
    backward.outputs.clear();
    for (const Tensor& input : {query, op.inputs[1], op.inputs[2]}) {
      backward.outputs.push_back(gradient_of(input, scenario_.precision.activations));
    }
    backward.attention.flops_scale = kAttentionBackwardScale;
    chain(std::move(backward), Pass::backward);
  }

  // Reads dY and the saved inputs, writes a gradient per activation input; weights' gradients
  // (norm scales, position embeddings) are O(D) and left out.
  void add_elementwise_backward(const Op& op) {
    Op backward = op;
    backward.kind = OpKind::elementwise;
    backward.name = op.name + ".backward";
    backward.inputs = {gradient_of(op.outputs.front(), scenario_.precision.activations)};
    backward.outputs.clear();
    for (const Tensor& input : op.inputs) {
      if (input.role == TensorRole::activation) {
        backward.inputs.push_back(input);
        backward.outputs.push_back(gradient_of(input, scenario_.precision.activations));
      }
    }
    if (op.kind == OpKind::embedding_gather) {
      // Scatter-add of the rows' gradients into the table's.
      backward.elementwise = ElementwiseKind::embedding;
      backward.outputs = {gradient_of(op.inputs.front(), gradient_)};
      backward.outputs.front().role = TensorRole::activation;
    }
    if (backward.outputs.empty()) {
      return;
    }
    chain(std::move(backward), Pass::backward);
  }

  // One update per weight of the op, once per step (count / microbatches).
  void add_update(const Op& op, std::optional<OpGraph::Vertex> gradient) {
    if (op.kind != OpKind::matmul || op.inputs[1].role != TensorRole::weight) {
      return;
    }
    const OptimizerRule& rule = rule_of(scenario_.workload.training.optimizer);
    const Tensor& parameter = op.inputs[1];
    Op update;
    update.name = op.name + "." + std::string(to_string(rule.optimizer));
    update.stage = op.stage;
    update.block = op.block;
    update.count = op.count / microbatches_;
    update.kind = OpKind::elementwise;
    update.elementwise = ElementwiseKind::optimizer;
    update.flops_per_element = rule.flops_per_parameter;
    update.compute_path = scenario_.hardware.vector_path;
    update.pass = Pass::optimizer;
    update.inputs = {parameter, gradient_of(parameter, gradient_)};
    update.outputs = {parameter};
    const double state_bytes =
        optimizer_state_bytes_per_parameter(rule.optimizer, scenario_.precision.weights);
    // The fp32 state as one tensor of `state` fp32 slots per parameter (master copy + moments).
    Tensor state = parameter;
    state.name = parameter.name + ".optimizer_state";
    state.dtype = DType::fp32;
    state.axes.push_back({"optimizer_state", static_cast<std::int64_t>(state_bytes / 4.0)});
    update.inputs.push_back(state);
    update.outputs.push_back(state);
    const OpGraph::Vertex vertex = graph_.add_op(std::move(update));
    if (gradient) {
      graph_.add_edge(*gradient, vertex, "");
    }
  }

  OpGraph& graph_;
  const Scenario& scenario_;
  std::int64_t microbatches_;
  DType gradient_;
  OpGraph::Vertex last_ = 0;
};

}  // namespace

double optimizer_state_bytes_per_parameter(Optimizer optimizer, DType weights) {
  const double master = weights == DType::fp32 ? 0.0 : 4.0;
  return master + 4.0 * rule_of(optimizer).moments;
}

DType gradient_dtype(const Precision& precision) {
  return bytes_per_element(precision.activations) >= 2.0 ? precision.activations : DType::bf16;
}

void add_training_passes(OpGraph& graph, const Scenario& scenario) {
  TrainingBuilder(graph, scenario).build();
}

}  // namespace rsim

namespace rsim {

std::int64_t pipeline_stages(const Plan& plan) {
  const std::optional<std::string> axis = plan.mesh_axis_for("layers", false);
  return axis ? plan.find_axis(*axis)->size : 1;
}

TrainingMemory training_memory(const Scenario& scenario, const OpGraph& graph,
                               const ParameterCount& parameters, double stored_fraction) {
  TrainingMemory memory;
  const double stored = static_cast<double>(parameters.total()) * stored_fraction;
  memory.gradients = Bytes(stored * bytes_per_element(gradient_dtype(scenario.precision)));
  memory.optimizer_state =
      Bytes(stored * optimizer_state_bytes_per_parameter(scenario.workload.training.optimizer,
                                                         scenario.precision.weights));
  const Training& training = scenario.workload.training;
  const std::int64_t stages = pipeline_stages(scenario.plan);
  Bytes per_layer;    // every forward output of one layer, one microbatch
  Bytes layer_input;  // the first layer op's input: what full recomputation keeps
  Bytes head;         // embedding and head outputs, one microbatch
  double layers = 0.0;
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
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
    if (op.block == "layer") {
      if (layer_input.si() == 0.0) {
        layer_input = op.inputs.front().bytes();
        layers = static_cast<double>(op.count) / static_cast<double>(training.microbatches);
      }
      per_layer += op.outputs.front().bytes();
    } else {
      head += op.outputs.front().bytes();
    }
  }
  const auto in_flight = static_cast<double>(std::min<std::int64_t>(training.microbatches, stages));
  const Bytes layer_stack =
      training.recompute == Recompute::full ? layer_input * layers + per_layer : per_layer * layers;
  memory.saved_activations = layer_stack * in_flight + head;
  return memory;
}

std::optional<PipelineSchedule> add_pipeline_bubble(const Scenario& scenario, const OpGraph& graph,
                                                    const CostTable& table, Bounds& bounds) {
  const std::int64_t stages = pipeline_stages(scenario.plan);
  if (stages == 1) {
    return std::nullopt;
  }
  PipelineSchedule schedule;
  schedule.stages = stages;
  schedule.microbatches = scenario.workload.training.microbatches;
  schedule.chunks = scenario.workload.training.pipeline_interleave;
  double work_lower = 0.0;
  double work_upper = 0.0;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    if (graph.op(table.order[row]).pass == Pass::optimizer) {
      continue;
    }
    const auto index = static_cast<Eigen::Index>(row);
    work_lower += table.times.row(index).maxCoeff() * table.counts(index);
    work_upper += table.times.row(index).sum() * table.counts(index);
  }
  const auto idle = static_cast<double>(stages - 1) /
                    static_cast<double>(schedule.chunks * schedule.microbatches);
  schedule.bubble_fraction = idle / (1.0 + idle);
  schedule.work_lower = Seconds(work_lower);
  schedule.bubble_lower = Seconds(work_lower * idle);
  schedule.bubble_upper = Seconds(work_upper * idle);
  // The critical path's share of forward and backward work, taken as the lower bound's.
  const double total_lower = bounds.total.t_lower.si();
  const double work_share = total_lower > 0.0 ? work_lower / total_lower : 0.0;
  schedule.bubble_critical = Seconds(bounds.total.t_critical.si() * work_share * idle);
  for (Totals* totals : {&bounds.total, &bounds.stages.front().totals}) {
    totals->t_lower += schedule.bubble_lower;
    totals->t_upper += schedule.bubble_upper;
    totals->t_critical += schedule.bubble_critical;
  }
  return schedule;
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
    if (op.block != "layer" || phase == Pass::optimizer) {
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

// The largest tensor degree Y' at which T_math · Y / Y' still covers the axis's collectives
// re-costed over Y' devices (the tier's domain lifted).
std::int64_t largest_tensor_degree(const OpGraph& graph, const CostTable& table, const Roofs& roofs,
                                   const PhaseSums& sums, int phase, std::int64_t size) {
  const auto covers = [&](std::int64_t degree) {
    double t_net = 0.0;
    for (const auto& [row, index] : sums.collectives) {
      if (index != phase) {
        continue;
      }
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
      collective.axes = {whole_groups(degree, tiers)};
      t_net += collective_cost(collective, pointers).time.si() *
               table.counts(static_cast<Eigen::Index>(row));
    }
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

}  // namespace

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
  const std::optional<std::string> data_axis = plan.mesh_axis_for("batch", false);
  const std::optional<std::string> tensor_axis = plan.mesh_axis_for("mlp", false);
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
