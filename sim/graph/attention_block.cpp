// SPDX-License-Identifier: MIT
// The attention half of a block: grouped-query attention (fused or not, windowed or not) and
// multi-head latent attention.
#include "sim/graph/elementwise_flops.hpp"
#include "sim/graph/stage_builder.hpp"

#include <algorithm>

namespace rsim {

// FMHA: one op reading Q, K, V (and the cached K/V of an earlier stage), writing O.
void StageBuilder::add_fused_attention(const std::string& name, bool windowed,
                                       const std::vector<Axis>& q_axes, const Tensor& kv,
                                       const std::vector<OpGraph::Vertex>& producers) {
  Op attention;
  attention.name = name;
  attention.kind = OpKind::attention;
  attention.compute_path = precision().attention_path();
  Tensor v = kv;
  v.name = std::string("v");  // (= "v" trips GCC 12's -Wrestrict false positive, PR 105329)
  attention.inputs = {activation("q", q_axes), kv, v};
  AttentionShape& shape = attention.attention;
  shape.mask = stage_.attention;
  shape.batch = batch_;
  shape.query_tokens = stage_.tokens;
  shape.heads = spec_.num_heads;
  shape.head_dim = spec_.head_dim;
  if (windowed && stage_.attention == AttentionMask::causal) {
    shape.window = spec_.sliding_window;
  }
  if (const std::int64_t cached = cached_tokens(windowed); cached > 0) {
    shape.cached_tokens = cached;
    const std::vector<Axis> cache_axes{batch(),
                                       {"kv_seq", cached},
                                       {"kv_heads", spec_.num_kv_heads},
                                       {"head_dim", spec_.head_dim}};
    attention.inputs.push_back({"k_cache", cache_axes, precision().kv_cache, TensorRole::kv_cache});
    attention.inputs.push_back({"v_cache", cache_axes, precision().kv_cache, TensorRole::kv_cache});
  }
  attention.outputs.push_back(activation("attn_out", q_axes));
  add(std::move(attention), producers);
}

// Unfused attention: S = QKᵀ and O = PV as batched matmuls (heads split into kv_heads × group
// for GQA), softmax between them; S and P go through DRAM. Masked pairs are computed too. With
// a cache, this stage's K/V are appended to it and the matmuls read all keys in its dtype.
void StageBuilder::add_unfused_attention(const std::string& prefix, bool windowed, DType kv_dtype,
                                         TensorRole kv_role,
                                         const std::vector<OpGraph::Vertex>& producers) {
  const std::int64_t tokens = stage_.tokens;
  const std::int64_t cached = cached_tokens(windowed);
  const Axis kv_seq{"kv_seq", tokens + cached};
  const DType key_dtype = cached > 0 ? precision().kv_cache : kv_dtype;
  const TensorRole key_role = cached > 0 ? TensorRole::kv_cache : kv_role;
  const Axis kv_heads{"kv_heads", spec_.num_kv_heads};
  const Axis group{"group", spec_.group_size()};
  const Axis head_dim{"head_dim", spec_.head_dim};
  const std::vector<Axis> score_axes{batch(), kv_heads, group, seq(tokens), kv_seq};
  const std::vector<Axis> q_axes{batch(), seq(tokens), kv_heads, group, head_dim};
  const std::vector<Axis> key_axes{batch(), kv_seq, kv_heads, head_dim};
  const bool eager = scenario_.fusion.attention == AttentionKernels::eager;
  std::vector<OpGraph::Vertex> score_producers = producers;
  Tensor keys{"k", key_axes, key_dtype, key_role};
  Tensor values{"v", key_axes, key_dtype, key_role};
  if (eager) {
    // Eager PyTorch holds Q, K, V as [b, s, h, d] and its batched GEMMs take [b·h, s, d]: the
    // reshape of the transposed view copies each (a read and a write, no FLOPs). Under GQA the
    // copies of K and V are expanded to every query head (Hugging Face's repeat_kv: expand, then
    // reshape), group × the bytes, and the GEMMs read them so. With a cache, the keys copied are
    // all of them (Hugging Face's cache concatenation copies them too).
    const std::vector<Axis> expanded{batch(), kv_seq, kv_heads, group, head_dim};
    Op copy = elementwise(prefix + "attention_layout", ElementwiseKind::layout, 0.0,
                          {activation("q", q_axes), keys, values}, activation("q_batched", q_axes));
    keys = {"k_batched", expanded, key_dtype, TensorRole::activation};
    values = {"v_batched", expanded, key_dtype, TensorRole::activation};
    copy.outputs.push_back(keys);
    copy.outputs.push_back(values);
    add(std::move(copy), producers);
    score_producers = previous();
  }
  add(matmul(prefix + "attention_scores", "attention_scores", activation("q", q_axes), keys,
             score_axes, 0),
      score_producers);
  add(elementwise(prefix + "softmax", ElementwiseKind::softmax, kSoftmaxFlops,
                  {activation("scores", score_axes)}, activation("probabilities", score_axes)),
      previous());
  if (scenario_.workload.phase == Phase::train && spec_.attention_dropout > 0.0) {
    // torch's dropout after Megatron's fused scale-mask-softmax: reads P, writes the dropped P
    // and the mask the backward pass reads (1 B per element); a random draw, a compare and a
    // scale per element.
    Op dropout = elementwise(prefix + "attention_dropout", ElementwiseKind::dropout, 3.0,
                             {activation("probabilities", score_axes)},
                             activation("probabilities", score_axes));
    dropout.outputs.push_back({"dropout_mask", score_axes, DType::int8, TensorRole::activation});
    add(std::move(dropout), previous());
  }
  add(matmul(prefix + "attention_values", "attention_scores",
             activation("probabilities", score_axes), values, q_axes, 0),
      previous());
  if (eager) {
    // O back from [b·h, s, d] to [b, s, h·d] for the output projection (.contiguous()).
    add(elementwise(prefix + "attention_output_layout", ElementwiseKind::layout, 0.0,
                    {activation("attn_values", q_axes)}, activation("attn_out", q_axes)),
        previous());
  }
}

// Windowed layers and full-attention layers (Gemma 2 alternates them) each get their attention
// op with their own count, one after the other: over the layers their times add up.
void StageBuilder::add_attention_ops(const std::vector<Axis>& q_axes, const Tensor& kv,
                                     std::vector<OpGraph::Vertex> producers) {
  const std::int64_t windowed = spec_.windowed_layers();
  const std::int64_t full = spec_.full_attention_layers();
  const bool mixed = windowed > 0 && full > 0;
  for (const bool is_windowed : {true, false}) {
    const std::int64_t layers = is_windowed ? windowed : full;
    if (layers == 0) {
      continue;
    }
    set_layers(layers);
    const std::string prefix = mixed && is_windowed ? "window_" : "";
    if (scenario_.fusion.attention_fused()) {
      add_fused_attention(prefix + "attention", is_windowed, q_axes, kv, producers);
    } else {
      add_unfused_attention(prefix, is_windowed, kv.dtype, kv.role, producers);
    }
    producers = previous();
  }
  set_layers(spec_.num_layers);
}

void StageBuilder::add_attention_block() {
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
  const std::vector<Axis> kv_axes{batch(), seq(tokens), kv_heads, head_dim};
  const DType kv_dtype = stage_.writes_kv_cache ? precision().kv_cache : precision().activations;
  const TensorRole kv_role = stage_.writes_kv_cache ? TensorRole::kv_cache : TensorRole::activation;
  if (stage_.writes_kv_cache) {
    kv_writer_ = add(kv_cache_write({activation("k", kv_axes), activation("v", kv_axes)},
                                    {{"k_cache", kv_axes, kv_dtype, kv_role},
                                     {"v_cache", kv_axes, kv_dtype, kv_role}}),
                     previous());
  }
  std::vector<OpGraph::Vertex> producers = previous();
  if (cache_source_) {
    producers.push_back(*cache_source_);
  }
  // Q goes straight to attention (without RoPE; or past the cache write, which a plan may
  // lay out differently from the queries: a KV cache split by batch).
  if (std::find(producers.begin(), producers.end(), q_source) == producers.end()) {
    producers.push_back(q_source);
  }
  add_attention_ops(q, {"k", kv_axes, kv_dtype, kv_role}, producers);
  add(matmul("o_proj", "attention", activation("attn_out", q),
             weight("o_proj.weight", {heads, head_dim, embed()}), {batch(), seq(tokens), embed()},
             spec_.attention_bias ? spec_.hidden_size : 0),
      previous());
  if (spec_.post_norms) {
    add_norm("post_attention_norm");
  }
  add_residual("attn_residual", block_input);
}

// Keys already in a KV cache: an earlier stage's (π0.5's prefix) and this stage's own context
// (a decode step).
std::int64_t StageBuilder::cached_tokens(bool windowed) const {
  const StageSpec* other =
      stage_.attends_to.empty() ? nullptr : scenario_.model.find_stage(stage_.attends_to);
  const std::int64_t cached = (other != nullptr ? other->tokens : 0) + stage_.context;
  // A sliding window of W keys: the first query of the pass sees the last W − 1 cached keys
  // and itself, and a rolling cache keeps no more (Mistral's reference RotatingBufferCache).
  return windowed && spec_.sliding_window > 0 ? std::min(cached, spec_.sliding_window - 1) : cached;
}

}  // namespace rsim
