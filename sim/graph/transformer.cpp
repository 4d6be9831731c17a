// SPDX-License-Identifier: MIT
#include "sim/graph/transformer.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/graph/elementwise_flops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace rsim {
namespace {

// Builds the ops of one stage. Each op is added once per repeated structure with its count.
class StageBuilder {
 public:
  StageBuilder(const Scenario& scenario, const StageSpec& stage, OpGraph& graph)
      : scenario_(scenario),
        stage_(stage),
        spec_(stage.component),
        graph_(graph),
        batch_(scenario.workload.microbatch() * stage.images),
        runs_(stage.steps * scenario.workload.training.microbatches) {}

  /// Adds every op of the stage; returns its last op, which later stages depend on.
  OpGraph::Vertex build(std::optional<OpGraph::Vertex> upstream) {
    upstream_ = upstream;
    block_ = Block::embed;
    count_ = runs_;
    add_embedding();
    for (const DenseLayer& layer : stage_.pre) {
      add_dense(layer);
    }
    block_ = Block::layer;
    count_ = runs_ * spec_.num_layers;
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

  /// The vertex whose output K/V a later stage reads (the cache write of this stage).
  [[nodiscard]] std::optional<OpGraph::Vertex> kv_writer() const { return kv_writer_; }

  void set_cache_source(OpGraph::Vertex writer) { cache_source_ = writer; }

 private:
  const Precision& precision() const { return scenario_.precision; }

  Axis batch() const { return {"batch", batch_}; }
  Axis seq(std::int64_t tokens) const { return {"seq", tokens}; }
  Axis embed() const { return {"embed", spec_.hidden_size}; }

  Tensor activation(std::string name, std::vector<Axis> axes) const {
    return {std::move(name), std::move(axes), precision().activations, TensorRole::activation};
  }
  Tensor weight(std::string name, std::vector<Axis> axes) const {
    return {std::move(name), std::move(axes), precision().weights, TensorRole::weight};
  }

  OpGraph::Vertex add(Op op, const std::vector<OpGraph::Vertex>& producers) {
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

  std::vector<OpGraph::Vertex> previous() const {
    if (last_) {
      return {*last_};
    }
    if (upstream_) {
      return {*upstream_};
    }
    return {};
  }

  // A matmul of `group`; with per-batch weights for the group, W (and its bias) gain a batch
  // axis: every sequence has its own weights (seed 004: int8[B,D] · int8[B,D,F]).
  Op matmul(std::string name, std::string_view group, Tensor input, Tensor weight_tensor,
            std::vector<Axis> out_axes, std::int64_t bias_features) const {
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

  Op elementwise(std::string name, ElementwiseKind kind, double flops_per_element,
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

  void add_embedding() {
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

  void add_dense(const DenseLayer& layer) {
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
      add(elementwise(layer.name + "_act", ElementwiseKind::activation,
                      activation_flops(*layer.activation),
                      {activation(layer.name + ".out", out_axes)},
                      activation(layer.name + ".act", out_axes)),
          previous());
    }
  }

  // Pre-norm (RMSNorm or LayerNorm), or π0.5's adaRMSNorm: a Dense(cond → 3·D) on the per-step
  // condition vector yields scale, shift and gate (openpi gemma.py RMSNorm with cond).
  void add_norm(const std::string& name) {
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

  void add_residual(const std::string& name, OpGraph::Vertex skip_source) {
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
  void add_fused_attention(const std::vector<Axis>& q_axes, const Tensor& kv,
                           const std::vector<OpGraph::Vertex>& producers) {
    Op attention;
    attention.name = "attention";
    attention.kind = OpKind::attention;
    attention.compute_path = precision().compute;
    Tensor v = kv;
    v.name = std::string("v");  // (= "v" trips GCC 12's -Wrestrict false positive, PR 105329)
    attention.inputs = {activation("q", q_axes), kv, v};
    AttentionShape& shape = attention.attention;
    shape.mask = stage_.attention;
    shape.batch = batch_;
    shape.query_tokens = stage_.tokens;
    shape.heads = spec_.num_heads;
    shape.head_dim = spec_.head_dim;
    if (const std::int64_t cached = cached_tokens(); cached > 0) {
      shape.cached_tokens = cached;
      const std::vector<Axis> cache_axes{batch(),
                                         {"kv_seq", cached},
                                         {"kv_heads", spec_.num_kv_heads},
                                         {"head_dim", spec_.head_dim}};
      attention.inputs.push_back(
          {"k_cache", cache_axes, precision().kv_cache, TensorRole::kv_cache});
      attention.inputs.push_back(
          {"v_cache", cache_axes, precision().kv_cache, TensorRole::kv_cache});
    }
    attention.outputs.push_back(activation("attn_out", q_axes));
    add(std::move(attention), producers);
  }

  // Unfused attention: S = QKᵀ and O = PV as batched matmuls (heads split into kv_heads × group
  // for GQA), softmax between them; S and P go through DRAM. Masked pairs are computed too. With
  // a cache, this stage's K/V are appended to it and the matmuls read all keys in its dtype.
  void add_unfused_attention(DType kv_dtype, TensorRole kv_role,
                             const std::vector<OpGraph::Vertex>& producers) {
    const std::int64_t tokens = stage_.tokens;
    const std::int64_t cached = cached_tokens();
    const Axis kv_seq{"kv_seq", tokens + cached};
    const DType key_dtype = cached > 0 ? precision().kv_cache : kv_dtype;
    const TensorRole key_role = cached > 0 ? TensorRole::kv_cache : kv_role;
    const Axis kv_heads{"kv_heads", spec_.num_kv_heads};
    const Axis group{"group", spec_.group_size()};
    const Axis head_dim{"head_dim", spec_.head_dim};
    const std::vector<Axis> score_axes{batch(), kv_heads, group, seq(tokens), kv_seq};
    add(matmul("attention_scores", "attention_scores",
               activation("q", {batch(), seq(tokens), kv_heads, group, head_dim}),
               {"k", {batch(), kv_seq, kv_heads, head_dim}, key_dtype, key_role}, score_axes, 0),
        producers);
    add(elementwise("softmax", ElementwiseKind::softmax, kSoftmaxFlops,
                    {activation("scores", score_axes)}, activation("probabilities", score_axes)),
        previous());
    add(matmul("attention_values", "attention_scores", activation("probabilities", score_axes),
               {"v", {batch(), kv_seq, kv_heads, head_dim}, key_dtype, key_role},
               {batch(), seq(tokens), kv_heads, group, head_dim}, 0),
        previous());
  }

  void add_attention_block() {
    const std::int64_t tokens = stage_.tokens;
    const OpGraph::Vertex block_input = *last_;
    add_norm("attn_norm");
    // Q and K/V as two matmuls, so that tensor parallelism can shard query heads and replicate
    // KV heads when there are fewer of them than devices (MQA/GQA under Megatron TP).
    const Axis heads{"heads", spec_.num_heads};
    const Axis kv_heads{"kv_heads", spec_.num_kv_heads};
    const Axis head_dim{"head_dim", spec_.head_dim};
    const Axis kv_pair{"kv", 2};
    const OpGraph::Vertex normed = *last_;
    const OpGraph::Vertex q_vertex =
        add(matmul("q_proj", "attention", activation("x_norm", {batch(), seq(tokens), embed()}),
                   weight("q_proj.weight", {embed(), heads, head_dim}),
                   {batch(), seq(tokens), heads, head_dim},
                   spec_.qkv_bias ? spec_.num_heads * spec_.head_dim : 0),
            {normed});
    const OpGraph::Vertex kv_vertex =
        add(matmul("kv_proj", "attention", activation("x_norm", {batch(), seq(tokens), embed()}),
                   weight("kv_proj.weight", {embed(), kv_pair, kv_heads, head_dim}),
                   {batch(), seq(tokens), kv_pair, kv_heads, head_dim},
                   spec_.qkv_bias ? 2 * spec_.num_kv_heads * spec_.head_dim : 0),
            {normed});
    OpGraph::Vertex q_source = q_vertex;
    const std::vector<Axis> q{batch(), seq(tokens), heads, head_dim};
    const std::vector<Axis> k{batch(), seq(tokens), kv_heads, head_dim};
    std::vector<OpGraph::Vertex> qk_producers{q_vertex, kv_vertex};
    if (spec_.qk_norm) {
      // Qwen3's q_norm / k_norm: an RMSNorm over each head's head_dim values, one weight vector
      // for all heads of Q and one for K.
      const std::int64_t norm_weights = spec_.norm == NormKind::layernorm ? 2 : 1;
      Op norm = elementwise(
          "qk_norm", ElementwiseKind::norm,
          spec_.norm == NormKind::layernorm ? kLayerNormFlops : kRmsNormFlops,
          {activation("q", q), activation("k", k),
           weight("qk_norm.weight", {{"qk", 2}, {"norm_params", norm_weights}, head_dim})},
          activation("q_normed", q));
      norm.outputs.push_back(activation("k_normed", k));
      q_source = add(std::move(norm), qk_producers);
      qk_producers = {q_source};
    }
    if (spec_.position == PositionEmbedding::rope) {
      Op rope = elementwise("rope", ElementwiseKind::rope, kRopeFlops,
                            {activation("q", q), activation("k", k)}, activation("q_rotated", q));
      rope.outputs.push_back(activation("k_rotated", k));
      q_source = add(std::move(rope), qk_producers);
    }
    const std::vector<Axis> kv_axes{
        batch(), seq(tokens), {"kv_heads", spec_.num_kv_heads}, {"head_dim", spec_.head_dim}};
    const DType kv_dtype = stage_.writes_kv_cache ? precision().kv_cache : precision().activations;
    const TensorRole kv_role =
        stage_.writes_kv_cache ? TensorRole::kv_cache : TensorRole::activation;
    if (stage_.writes_kv_cache) {
      Op write;
      write.name = "kv_cache_write";
      write.kind = OpKind::kv_cache_write;
      write.compute_path = scenario_.hardware.vector_path;
      write.inputs = {activation("k", kv_axes), activation("v", kv_axes)};
      write.outputs = {{"k_cache", kv_axes, kv_dtype, kv_role},
                       {"v_cache", kv_axes, kv_dtype, kv_role}};
      kv_writer_ = add(std::move(write), previous());
    }
    const std::vector<Axis> q_axes{
        batch(), seq(tokens), {"heads", spec_.num_heads}, {"head_dim", spec_.head_dim}};
    std::vector<OpGraph::Vertex> producers = previous();
    if (cache_source_) {
      producers.push_back(*cache_source_);
    }
    // Q goes straight to attention (without RoPE; or past the cache write, which a plan may
    // lay out differently from the queries: a KV cache split by batch).
    if (std::find(producers.begin(), producers.end(), q_source) == producers.end()) {
      producers.push_back(q_source);
    }
    if (scenario_.fusion.attention_fused) {
      add_fused_attention(q_axes, {"k", kv_axes, kv_dtype, kv_role}, producers);
    } else {
      add_unfused_attention(kv_dtype, kv_role, producers);
    }
    add(matmul("o_proj", "attention", activation("attn_out", q_axes),
               weight("o_proj.weight",
                      {{"heads", spec_.num_heads}, {"head_dim", spec_.head_dim}, embed()}),
               {batch(), seq(tokens), embed()}, spec_.attention_bias ? spec_.hidden_size : 0),
        previous());
    add_residual("attn_residual", block_input);
  }

  void add_mlp_block() {
    const std::int64_t tokens = stage_.tokens;
    const Axis mlp{"mlp", spec_.intermediate_size};
    const OpGraph::Vertex block_input = *last_;
    add_norm("mlp_norm");
    std::vector<Axis> up_weight{embed(), mlp};
    std::vector<Axis> up_out{batch(), seq(tokens), mlp};
    if (spec_.gated_mlp) {
      // Gate and up projections as one matmul (the usual fused GEMM); gate_up = 2.
      up_weight.insert(up_weight.begin() + 1, Axis{"gate_up", 2});
      up_out.insert(up_out.begin() + 2, Axis{"gate_up", 2});
    }
    const std::int64_t up_features = (spec_.gated_mlp ? 2 : 1) * spec_.intermediate_size;
    add(matmul(spec_.gated_mlp ? "gate_up_proj" : "up_proj", "mlp",
               activation("x_norm", {batch(), seq(tokens), embed()}),
               weight("up.weight", up_weight), up_out, spec_.mlp_bias ? up_features : 0),
        previous());
    const double act_flops =
        activation_flops(spec_.activation) + (spec_.gated_mlp ? kGateMultiplyFlops : 0.0);
    add(elementwise("mlp_act", ElementwiseKind::activation, act_flops, {activation("up", up_out)},
                    activation("hidden", {batch(), seq(tokens), mlp})),
        previous());
    add(matmul("down_proj", "mlp", activation("hidden", {batch(), seq(tokens), mlp}),
               weight("down_proj.weight", {mlp, embed()}), {batch(), seq(tokens), embed()},
               spec_.mlp_bias ? spec_.hidden_size : 0),
        previous());
    add_residual("mlp_residual", block_input);
  }

  // Mixture of experts (Mixtral's MixtralSparseMoeBlock): a router matmul [D, E] and top-k per
  // token, a dispatch that copies each token to its k experts' rows, the expert MLPs as batched
  // matmuls over an `experts` axis (weights and activations), and a combine that sums each
  // token's k expert outputs weighted by its router probabilities. T = batch · seq tokens make
  // T·k expert rows, routed evenly (capacity factor 1): the experts hit are E_hit = min(E, T·k)
  // (a decode step with few tokens reads only their weights), each running
  // ⌈T·k / E_hit⌉ rows (the expert capacity; exact when E_hit divides T·k).
  void add_moe_block() {
    const std::int64_t tokens = stage_.tokens;
    const std::int64_t k = spec_.experts_per_token;
    const OpGraph::Vertex block_input = *last_;
    add_norm("mlp_norm");
    const OpGraph::Vertex normed = *last_;
    const std::vector<Axis> token_axes{batch(), seq(tokens), embed()};
    const Axis router{"router", spec_.num_experts};
    const Axis topk{"topk", k};
    add(matmul("router", "router", activation("x_norm", token_axes),
               weight("router.weight", {embed(), router}), {batch(), seq(tokens), router}, 0),
        {normed});
    // Softmax over the E logits (kSoftmaxFlops each) and k passes of a max over them (E
    // compares each), per token; counted per output element (k per token).
    const double topk_flops = (kSoftmaxFlops + static_cast<double>(k)) *
                              static_cast<double>(spec_.num_experts) / static_cast<double>(k);
    const OpGraph::Vertex gates =
        add(elementwise("router_topk", ElementwiseKind::routing, topk_flops,
                        {activation("router_logits", {batch(), seq(tokens), router})},
                        activation("gates", {batch(), seq(tokens), topk})),
            previous());
    const std::int64_t assignments = batch_ * tokens * k;
    const std::int64_t experts_hit = std::min(spec_.num_experts, assignments);
    const Axis experts{"experts", experts_hit};
    const Axis rows{"expert_tokens", (assignments + experts_hit - 1) / experts_hit};
    const Axis mlp{"mlp", spec_.intermediate_size};
    // Dispatch: a copy of the rows (no arithmetic).
    add(elementwise(
            "dispatch", ElementwiseKind::routing, 0.0,
            {activation("x_norm", token_axes), activation("gates", {batch(), seq(tokens), topk})},
            activation("expert_in", {experts, rows, embed()})),
        {normed, gates});
    std::vector<Axis> up_weight{experts, embed(), mlp};
    std::vector<Axis> up_out{experts, rows, mlp};
    if (spec_.gated_mlp) {
      up_weight.insert(up_weight.begin() + 2, Axis{"gate_up", 2});
      up_out.insert(up_out.begin() + 2, Axis{"gate_up", 2});
    }
    const std::int64_t up_features = (spec_.gated_mlp ? 2 : 1) * spec_.intermediate_size;
    // Expert biases, if any, are per expert: E_hit × features.
    add(matmul(spec_.gated_mlp ? "expert_gate_up_proj" : "expert_up_proj", "experts",
               activation("expert_in", {experts, rows, embed()}),
               weight("experts.up.weight", up_weight), up_out,
               spec_.mlp_bias ? experts_hit * up_features : 0),
        previous());
    const double act_flops =
        activation_flops(spec_.activation) + (spec_.gated_mlp ? kGateMultiplyFlops : 0.0);
    add(elementwise("expert_act", ElementwiseKind::activation, act_flops,
                    {activation("expert_up", up_out)},
                    activation("expert_hidden", {experts, rows, mlp})),
        previous());
    add(matmul("expert_down_proj", "experts", activation("expert_hidden", {experts, rows, mlp}),
               weight("experts.down.weight", {experts, mlp, embed()}), {experts, rows, embed()},
               spec_.mlp_bias ? experts_hit * spec_.hidden_size : 0),
        previous());
    // Combine: per output element k products with the gates and k − 1 sums.
    add(elementwise("combine", ElementwiseKind::routing, static_cast<double>(2 * k - 1),
                    {activation("expert_out", {experts, rows, embed()}),
                     activation("gates", {batch(), seq(tokens), topk})},
                    activation("branch", token_axes)),
        {*last_, gates});
    add_residual("mlp_residual", block_input);
  }

  void add_layer() {
    check_window();
    if (!last_) {
      // A stage with no embedding op starts from its upstream (vision tokens → prefix).
      RSIM_CHECK(upstream_.has_value(), "a stage without inputs has nothing to transform");
      last_ = upstream_;
    }
    add_attention_block();
    if (spec_.moe()) {
      add_moe_block();
    } else {
      add_mlp_block();
    }
  }

  void add_lm_head() {
    if (stage_.lm_head == LmHead::none) {
      return;
    }
    const std::int64_t rows = stage_.lm_head == LmHead::last_token ? 1 : stage_.tokens;
    add(matmul("lm_head", "lm_head", activation("x_norm", {batch(), seq(rows), embed()}),
               weight("lm_head.weight", {embed(), {"vocab", spec_.vocab_size}}),
               {batch(), seq(rows), {"vocab", spec_.vocab_size}}, 0),
        previous());
  }

  // Keys already in a KV cache: an earlier stage's (π0.5's prefix) and this stage's own context
  // (a decode step).
  std::int64_t cached_tokens() const {
    const StageSpec* other =
        stage_.attends_to.empty() ? nullptr : scenario_.model.find_stage(stage_.attends_to);
    const std::int64_t cached = (other != nullptr ? other->tokens : 0) + stage_.context;
    // A sliding window of W keys: the first query of the pass sees the last W − 1 cached keys
    // and itself, and a rolling cache keeps no more (Mistral's reference RotatingBufferCache).
    return spec_.sliding_window > 0 ? std::min(cached, spec_.sliding_window - 1) : cached;
  }

  // A pass whose queries see fewer keys than the causal mask gives them (T queries past a
  // W-key window) would be costed with the masked pairs counted: the bounds would not bound.
  void check_window() const {
    const std::int64_t window = spec_.sliding_window;
    if (window > 0 && stage_.tokens + cached_tokens() > window) {
      throw InputError(fmt::format(
          "{}: a pass of {} tokens after {} cached ones exceeds the sliding_window of {} keys; "
          "rsim models windowed attention for decode steps and for passes within the window",
          spec_.name, stage_.tokens, cached_tokens(), window));
    }
  }

  const Scenario& scenario_;
  const StageSpec& stage_;
  const TransformerSpec& spec_;
  OpGraph& graph_;
  std::int64_t batch_;
  std::int64_t runs_;  // runs of the stage: its steps × a training step's microbatches
  Block block_ = Block::none;
  std::int64_t count_ = 1;
  std::optional<OpGraph::Vertex> upstream_;
  std::optional<OpGraph::Vertex> last_;
  std::optional<OpGraph::Vertex> kv_writer_;
  std::optional<OpGraph::Vertex> cache_source_;
};

}  // namespace

OpGraph build_forward_graph(const Scenario& scenario) {
  OpGraph graph;
  std::optional<OpGraph::Vertex> upstream;
  std::vector<std::pair<std::string, OpGraph::Vertex>> kv_writers;
  for (const StageSpec& stage : scenario.model.stages) {
    StageBuilder builder(scenario, stage, graph);
    for (const auto& [name, writer] : kv_writers) {
      if (name == stage.attends_to) {
        builder.set_cache_source(writer);
      }
    }
    upstream = builder.build(upstream);
    if (const auto writer = builder.kv_writer()) {
      kv_writers.emplace_back(stage.name, *writer);
    }
    graph.stages.push_back({stage.name, stage.steps, stage.component.num_layers, stage.context,
                            stage.component.num_experts, scenario.workload.training.microbatches,
                            scenario.workload.training.pipeline_interleave});
  }
  return graph;
}

Op make_matmul(const MatmulShape& shape) {
  Op op;
  op.name = "matmul";
  op.stage = "matmul";
  op.block = Block::matmul;
  op.kind = OpKind::matmul;
  op.compute_path = shape.compute_path;
  const Axis batch{"batch", shape.batch};
  const Axis embed{"embed", shape.contract};
  const Axis mlp{"mlp", shape.out};
  op.inputs.push_back({"x", {batch, embed}, shape.input, TensorRole::activation});
  op.inputs.push_back({"w",
                       shape.per_batch_weights ? std::vector<Axis>{batch, embed, mlp}
                                               : std::vector<Axis>{embed, mlp},
                       shape.weights, TensorRole::weight});
  op.outputs.push_back({"y", {batch, mlp}, shape.output, TensorRole::activation});
  return op;
}

}  // namespace rsim
