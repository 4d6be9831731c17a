// SPDX-License-Identifier: MIT
#include "sim/graph/stage_builder.hpp"

#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/graph/elementwise_flops.hpp"
#include "sim/graph/loss.hpp"

#include <algorithm>

namespace rsim {

StageBuilder::StageBuilder(const Scenario& scenario, const StageSpec& stage, OpGraph& graph)
    : scenario_(scenario),
      stage_(stage),
      spec_(stage.component),
      graph_(graph),
      batch_(scenario.workload.microbatch() * stage.images),
      runs_(stage.steps * scenario.workload.training.microbatches) {}

OpGraph::Vertex StageBuilder::build(std::optional<OpGraph::Vertex> upstream) {
  upstream_ = upstream;
  block_ = Block::embed;
  count_ = runs_;
  add_embedding();
  for (const DenseLayer& layer : stage_.pre) {
    add_dense(layer);
  }
  block_ = Block::layer;
  add_layer();
  block_ = Block::head;
  count_ = runs_;
  add_norm("final_norm");
  for (const DenseLayer& layer : stage_.post) {
    add_dense(layer);
  }
  add_lm_head();
  return *last_;
}

Tensor StageBuilder::activation(std::string name, std::vector<Axis> axes) const {
  return {std::move(name), std::move(axes), precision().activations, TensorRole::activation};
}
Tensor StageBuilder::weight(std::string name, std::vector<Axis> axes) const {
  return {std::move(name), std::move(axes), precision().weights, TensorRole::weight};
}

OpGraph::Vertex StageBuilder::add(Op op, const std::vector<OpGraph::Vertex>& producers) {
  if (const std::optional<DType> path = input_cast(op)) {
    const OpGraph::Vertex cast = add_input_cast(op, *path, producers);
    return add(std::move(op), {cast});
  }
  op.stage = stage_.name;
  op.block = block_;
  op.count = count_;
  const std::string tensor = op.inputs.empty() ? std::string() : op.inputs.front().name;
  const OpGraph::Vertex vertex = graph_.add_op(std::move(op));
  for (OpGraph::Vertex producer : producers) {
    graph_.add_edge(producer, vertex, tensor);
  }
  last_ = vertex;
  return vertex;
}

// An FP8 (INT8, FP4) GEMM takes both operands in its own type (cuBLASLt's FP8 matmul: A and B
// e4m3 or e5m2), so activations kept wider are cast before it: a read of X and a write of X in
// the path's type, a kernel of its own (torch._scaled_mm after x.to(float8_e4m3fn)) unless the
// engine fuses it into the op before (`into_matmul: [quantize]`: vLLM's and TensorRT-LLM's
// PyTorch backend's norm + quantize kernels). Training adds its casts with the backward
// (backward.cpp).
std::optional<DType> StageBuilder::input_cast(const Op& op) const {
  if (scenario_.workload.phase == Phase::train || op.kind != OpKind::matmul ||
      op.inputs.size() < 2 || op.inputs[1].role != TensorRole::weight) {
    return std::nullopt;
  }
  const std::optional<DType> path = compute_path_dtype(op.compute_path);
  // Activations already in a narrow type (a policy's FP8 or NVFP4 activations) need none.
  if (!path || bytes_per_element(*path) > 1.0 ||
      bytes_per_element(op.inputs.front().dtype) <= 1.0) {
    return std::nullopt;
  }
  return path;
}

OpGraph::Vertex StageBuilder::add_input_cast(Op& op, DType path,
                                             const std::vector<OpGraph::Vertex>& producers) {
  Tensor& x = op.inputs.front();
  const std::string source = x.name;
  const DType wide_dtype = x.dtype;
  x.name += ".cast";
  x.dtype = path;
  for (const InputCast& cast : input_casts_) {
    if (cast.tensor == source && cast.producers == producers) {
      return cast.vertex;
    }
  }
  Tensor wide = x;
  wide.name = source;
  wide.dtype = wide_dtype;
  // A scale and a conversion per element.
  Op cast = elementwise(op.name + ".quantize", ElementwiseKind::quantize, 2.0, {wide}, x);
  const OpGraph::Vertex vertex = add(std::move(cast), producers);
  input_casts_.push_back({source, producers, vertex});
  return vertex;
}

std::vector<OpGraph::Vertex> StageBuilder::previous() const {
  if (last_) {
    return {*last_};
  }
  if (upstream_) {
    return {*upstream_};
  }
  return {};
}

// A matmul of `group`; with per-batch weights for the group, W (and its bias) gain a batch
// axis: every sequence has its own weights (How to Scale Your Model, roofline chapter, Q4:
// int8[B,D] · int8[B,D,F]).
Op StageBuilder::matmul(std::string name, std::string_view group, Tensor input,
                        Tensor weight_tensor, std::vector<Axis> out_axes,
                        std::int64_t bias_features) const {
  Op op;
  op.name = std::move(name);
  op.group = group;
  op.kind = OpKind::matmul;
  op.compute_path = precision().compute;
  op.inputs.push_back(std::move(input));
  op.inputs.push_back(std::move(weight_tensor));
  if (bias_features > 0) {
    op.inputs.push_back(weight(op.name + ".bias", {{"features", bias_features}}));
  }
  const auto& per_batch = scenario_.per_batch_weights;
  if (std::find(per_batch.begin(), per_batch.end(), group) != per_batch.end()) {
    for (std::size_t index = 1; index < op.inputs.size(); ++index) {
      if (op.inputs[index].role == TensorRole::weight) {
        op.inputs[index].axes.insert(op.inputs[index].axes.begin(), batch());
      }
    }
  }
  op.outputs.push_back(
      {op.name + ".out", std::move(out_axes), precision().outputs, TensorRole::activation});
  return op;
}

Op StageBuilder::elementwise(std::string name, ElementwiseKind kind, double flops_per_element,
                             std::vector<Tensor> inputs, Tensor output) const {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::elementwise;
  op.elementwise = kind;
  op.flops_per_element = flops_per_element;
  op.fused = scenario_.fusion.is_fused(kind);
  op.compute_path = scenario_.hardware.vector_path;
  op.inputs = std::move(inputs);
  op.outputs.push_back(std::move(output));
  return op;
}

Op StageBuilder::kv_cache_write(std::vector<Tensor> inputs, std::vector<Tensor> outputs) const {
  Op write;
  write.name = "kv_cache_write";
  write.kind = OpKind::kv_cache_write;
  write.compute_path = scenario_.hardware.vector_path;
  write.inputs = std::move(inputs);
  write.outputs = std::move(outputs);
  return write;
}

void StageBuilder::add_embedding() {
  const std::int64_t tokens = stage_.tokens;
  if (spec_.vision) {
    // Patchify + linear projection (a stride-P conv is a [C·P², D] matmul per patch).
    const VisionInput& vision = *spec_.vision;
    const std::int64_t patch = vision.num_channels * vision.patch_size * vision.patch_size;
    add(matmul("patch_embed", "patch_embed",
               activation("pixels", {batch(), seq(tokens), {"patch", patch}}),
               weight("patch_embed.weight", {{"patch", patch}, embed()}),
               {batch(), seq(tokens), embed()}, spec_.hidden_size),
        previous());
  }
  if (spec_.position == PositionEmbedding::learned) {
    add(elementwise("position_add", ElementwiseKind::embedding, kAddFlops,
                    {activation("x", {batch(), seq(tokens), embed()}),
                     weight("position_embedding", {seq(tokens), embed()})},
                    activation("x", {batch(), seq(tokens), embed()})),
        previous());
  }
  if (stage_.embedded_tokens > 0) {
    // Gather rows of the [vocab, D] table (and scale by √D, Gemma); only the rows read move.
    Op gather;
    gather.name = "embed_tokens";
    gather.kind = OpKind::embedding_gather;
    gather.compute_path = scenario_.hardware.vector_path;
    gather.flops_per_element = kAddFlops;
    gather.inputs.push_back(
        weight("embedding.rows", {batch(), seq(stage_.embedded_tokens), embed()}));
    gather.outputs.push_back(activation("x", {batch(), seq(stage_.embedded_tokens), embed()}));
    add(std::move(gather), previous());
  }
}

void StageBuilder::add_dense(const DenseLayer& layer) {
  std::vector<Axis> rows{batch()};
  if (!layer.per_sequence) {
    rows.push_back(seq(stage_.tokens));
  }
  std::vector<Axis> in_axes = rows;
  in_axes.push_back({"features_in", layer.in_features});
  std::vector<Axis> out_axes = rows;
  out_axes.push_back({"features", layer.out_features});
  add(matmul(layer.name, "dense", activation(layer.name + ".in", in_axes),
             weight(layer.name + ".weight",
                    {{"features_in", layer.in_features}, {"features", layer.out_features}}),
             out_axes, layer.bias ? layer.out_features : 0),
      previous());
  if (layer.activation) {
    add(elementwise(
            layer.name + "_act", ElementwiseKind::activation, activation_flops(*layer.activation),
            {activation(layer.name + ".out", out_axes)}, activation(layer.name + ".act", out_axes)),
        previous());
  }
}

// Pre-norm (RMSNorm or LayerNorm), or π0.5's adaRMSNorm: a Dense(cond → 3·D) on the per-step
// condition vector yields scale, shift and gate (openpi gemma.py RMSNorm with cond).
void StageBuilder::add_norm(const std::string& name) {
  const std::int64_t tokens = stage_.tokens;
  std::vector<Tensor> inputs{activation("x", {batch(), seq(tokens), embed()})};
  double flops = spec_.norm == NormKind::layernorm ? kLayerNormFlops : kRmsNormFlops;
  if (stage_.adaptive_norm) {
    add(matmul(name + "_modulation", "modulation",
               activation("condition", {batch(), {"cond", stage_.condition_width}}),
               weight(name + "_modulation.weight",
                      {{"cond", stage_.condition_width}, {"modulation", 3}, embed()}),
               {batch(), {"modulation", 3}, embed()}, 3 * spec_.hidden_size),
        previous());
    inputs.push_back(activation("scale_shift", {batch(), {"modulation", 2}, embed()}));
    flops += kAdaptiveShiftFlops;
  } else {
    const std::int64_t norm_weights = spec_.norm == NormKind::layernorm ? 2 : 1;
    inputs.push_back(weight(name + ".weight", {{"norm_params", norm_weights}, embed()}));
  }
  add(elementwise(name, ElementwiseKind::norm, flops, std::move(inputs),
                  activation("x_norm", {batch(), seq(tokens), embed()})),
      previous());
}

void StageBuilder::add_residual(const std::string& name, OpGraph::Vertex skip_source) {
  const std::int64_t tokens = stage_.tokens;
  std::vector<Tensor> inputs{activation("x", {batch(), seq(tokens), embed()}),
                             activation("branch", {batch(), seq(tokens), embed()})};
  double flops = kResidualFlops;
  if (stage_.adaptive_norm) {
    inputs.push_back(activation("gate", {batch(), embed()}));
    flops = kGatedResidualFlops;
  }
  const OpGraph::Vertex vertex =
      add(elementwise(name, ElementwiseKind::residual, flops, std::move(inputs),
                      activation("x", {batch(), seq(tokens), embed()})),
          previous());
  graph_.add_edge(skip_source, vertex, "x");
}

// FMHA: one op reading Q, K, V (and the cached K/V of an earlier stage), writing O.

void StageBuilder::add_feature_norm(const std::string& name, const Axis& features,
                                    const std::vector<OpGraph::Vertex>& producers) {
  const std::int64_t tokens = stage_.tokens;
  const std::vector<Axis> axes{batch(), seq(tokens), features};
  add(elementwise(name, ElementwiseKind::norm,
                  spec_.norm == NormKind::layernorm ? kLayerNormFlops : kRmsNormFlops,
                  {activation("x", axes), weight(name + ".weight", {features})},
                  activation(name + ".out", axes)),
      producers);
}

// Every layer's attention; then the dense MLP of the dense layers and the experts of the others
// (DeepSeek-V3: 3 dense, 58 MoE), one after the other: their times add up over the layers.
void StageBuilder::add_layer() {
  if (!last_) {
    // A stage with no embedding op starts from its upstream (vision tokens → prefix).
    RSIM_CHECK(upstream_.has_value(), "a stage without inputs has nothing to transform");
    last_ = upstream_;
  }
  set_layers(spec_.num_layers);
  if (spec_.latent_attention) {
    add_latent_attention_block();
  } else {
    add_attention_block();
  }
  const bool mixed = spec_.dense_layers() > 0 && spec_.moe_layers() > 0;
  if (spec_.dense_layers() > 0) {
    set_layers(spec_.dense_layers());
    add_mlp_block(mixed ? "dense_" : "");
  }
  if (spec_.moe_layers() > 0) {
    set_layers(spec_.moe_layers());
    add_moe_block(mixed ? "moe_" : "");
  }
}

void StageBuilder::add_lm_head() {
  if (stage_.lm_head == LmHead::none) {
    return;
  }
  const std::int64_t rows = stage_.lm_head == LmHead::last_token ? 1 : stage_.tokens;
  Tensor head_weight = weight("lm_head.weight", {embed(), {"vocab", spec_.vocab_size}});
  head_weight.dtype = precision().lm_head_weights();
  Op head = matmul("lm_head", "lm_head", activation("x_norm", {batch(), seq(rows), embed()}),
                   std::move(head_weight), {batch(), seq(rows), {"vocab", spec_.vocab_size}},
                   spec_.lm_head_bias ? spec_.vocab_size : 0);
  head.compute_path = precision().lm_head_path();
  const Tensor logits = head.outputs.front();
  add(std::move(head), previous());
  if (scenario_.workload.phase == Phase::train && stage_.lm_head == LmHead::all_tokens) {
    // The cross-entropy over every token's logits: the engine's kernels (`fusion.loss`,
    // loss.hpp) read them and keep their softmax (or log-softmax) in fp32 for the backward pass
    // (backward.cpp); `fusion.into_matmul: [loss]` fuses it into the LM head (Liger's fused
    // linear cross-entropy, Cut Cross-Entropy: no logits in DRAM).
    LossPasses passes = loss_forward(scenario_.fusion.loss, logits);
    Op loss = elementwise("loss", ElementwiseKind::loss, passes.flops_per_element,
                          std::move(passes.reads), passes.writes.front());
    loss.outputs = std::move(passes.writes);
    add(std::move(loss), previous());
  }
}

}  // namespace rsim
