// SPDX-License-Identifier: MIT
#include "sim/graph/backward.hpp"

#include "sim/graph/loss.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
          if (op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::loss) {
            add_loss_backward(op);
          } else {
            add_elementwise_backward(op);
          }
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
          op.block == Block::layer && (recompute == Recompute::full ||
                                       (recompute == Recompute::selective && attention_internal));
      if (again) {
        Op copy = op;
        copy.name += ".recompute";
        chain(std::move(copy), Pass::recompute);
      }
    }
  }

  // Whether a matmul runs on a 1-byte path (fp8, int8) from wider activations: Hopper's FP8
  // GEMMs take only the TN layout (cuBLASLt, cublasLtMatmul FP8 requirements), so training casts
  // each operand to FP8 and materializes its transpose for the other GEMM that reads it
  // (Transformer Engine's cast_transpose: X for dW = Xᵀ·dY, dY for dX = dY·Wᵀ and dW).
  [[nodiscard]] bool casts_operands(const Op& op) const {
    const std::optional<DType> path = compute_path_dtype(op.compute_path);
    return path && bytes_per_element(*path) <= 1.0 &&
           bytes_per_element(scenario_.precision.activations) > 1.0;
  }

  // One cast_transpose of `operand` (read once, written as FP8 and as its FP8 transpose) in
  // `pass`, with the matmul's count, stage and block.
  void add_cast(const Op& op, const Tensor& operand, Pass pass, const std::string& suffix) {
    Op cast;
    cast.name = op.name + suffix;
    cast.stage = op.stage;
    cast.block = op.block;
    cast.count = op.count;
    cast.kind = OpKind::elementwise;
    cast.elementwise = ElementwiseKind::quantize;
    cast.flops_per_element = 2.0;  // a scale and a conversion per element (+ the amax)
    cast.fused = scenario_.fusion.is_fused(ElementwiseKind::quantize);
    cast.compute_path = scenario_.hardware.vector_path;
    cast.inputs = {operand};
    Tensor fp8 = operand;
    fp8.name = operand.name + ".fp8";
    fp8.dtype = DType::fp8;
    fp8.role = TensorRole::activation;
    Tensor transposed = fp8;
    transposed.name = operand.name + ".fp8_t";
    cast.outputs = {fp8, transposed};
    chain(std::move(cast), pass);
  }

  // dX = dY·Wᵀ (unless X is the model's input) and dW = Xᵀ·dY; returns the dW vertex.
  std::optional<OpGraph::Vertex> add_matmul_backward(const Op& op, bool has_producer) {
    const Tensor output_gradient = gradient_of(op.outputs.front(), scenario_.precision.activations);
    if (casts_operands(op) && op.inputs[1].role == TensorRole::weight) {
      add_cast(op, op.inputs[0], Pass::forward, ".quantize");
      // Full recomputation runs the layer's forward again, its casts with it.
      if (op.block == Block::layer && scenario_.workload.training.recompute == Recompute::full) {
        add_cast(op, op.inputs[0], Pass::recompute, ".recompute_quantize");
      }
      add_cast(op, output_gradient, Pass::backward, ".dgrad_quantize");
    }
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
    if (op.inputs[1].role == TensorRole::activation) {
      // Both operands are activations (an unfused attention's Q·Kᵀ and P·V): the second one's
      // gradient is a GEMM too, dB = Aᵀ·dY (dK = dSᵀ·Q, dV = Pᵀ·dO), read by its producer's
      // backward.
      Op operand_gradient = op;
      operand_gradient.name = op.name + ".dgrad_rhs";
      operand_gradient.inputs = {op.inputs[0], output_gradient};
      operand_gradient.outputs = {gradient_of(op.inputs[1], scenario_.precision.activations)};
      chain(std::move(operand_gradient), Pass::backward);
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
    if (op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::layout) {
      // A copy's gradient is the copy back: every output's gradient read, no saved input.
      backward.inputs.clear();
      for (const Tensor& output : op.outputs) {
        backward.inputs.push_back(gradient_of(output, scenario_.precision.activations));
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

  // The loss ends the forward pass: no gradient flows into it. Its backward's kernels
  // (loss.hpp) read the kept fp32 softmax and write the logits' gradient, p − onehot(target).
  void add_loss_backward(const Op& op) {
    LossPasses passes =
        loss_backward(scenario_.fusion.loss, op.inputs.front(), scenario_.precision.activations);
    Op backward = op;
    backward.name = op.name + ".backward";
    backward.inputs = std::move(passes.reads);
    backward.outputs = std::move(passes.writes);
    backward.flops_per_element = passes.flops_per_element;
    chain(std::move(backward), Pass::backward);
  }

  // One update per weight of the op, once per step (count / microbatches).
  void add_update(const Op& op, std::optional<OpGraph::Vertex> gradient) {
    const TransformerSpec& spec = scenario_.model.stages.front().component;
    Tensor parameter;
    if (op.kind == OpKind::matmul && op.inputs[1].role == TensorRole::weight) {
      parameter = op.inputs[1];
    } else if (op.kind == OpKind::embedding_gather && !spec.tied_embeddings) {
      // The gather reads rows; the update covers the whole [vocab, embed] table (a tied table
      // is updated as the LM head's weight).
      parameter = {"embedding.weight",
                   {{"vocab", spec.vocab_size}, {"embed", spec.hidden_size}},
                   scenario_.precision.weights,
                   TensorRole::weight};
    } else {
      return;
    }
    const OptimizerRule& rule = rule_of(scenario_.workload.training.optimizer);
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
    // A fused update with an fp32 master copy (Apex / Transformer Engine FusedAdam, Megatron's
    // optimizer) reads the gradient, the master copy and the moments and writes them back with
    // the low-precision weight: it never reads that weight (bf16 Adam: 2 + 12 B read, 12 + 2 B
    // written, 28 B per parameter). Without a master copy the weight is the state it updates.
    const bool master = parameter.dtype != DType::fp32;
    update.inputs = {gradient_of(parameter, gradient_)};
    if (!master) {
      update.inputs.push_back(parameter);
    }
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
  if (precision.gradients) {
    return *precision.gradients;
  }
  return bytes_per_element(precision.activations) >= 2.0 ? precision.activations : DType::bf16;
}

void add_training_passes(OpGraph& graph, const Scenario& scenario) {
  TrainingBuilder(graph, scenario).build();
}

}  // namespace rsim
