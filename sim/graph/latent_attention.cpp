// SPDX-License-Identifier: MIT
// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1; DeepSeek-V3's
// DeepseekV3Attention) in the two forms engines run: expanded (the latent up-projected to every
// head's K and V, then ordinary attention) for a pass without a cache, and weight-absorbed for a
// pass that reads one (a decode step: W_UK folded into the query, attention over the cached
// latent as one shared KV head, W_UV applied to the output; vLLM's MLA decode, FlashMLA).
#include "sim/graph/elementwise_flops.hpp"
#include "sim/graph/stage_builder.hpp"

namespace rsim {

void StageBuilder::add_latent_attention_block() {
  const LatentAttention& latent = *spec_.latent_attention;
  const std::int64_t tokens = stage_.tokens;
  const OpGraph::Vertex block_input = *last_;
  add_norm("attn_norm");
  const OpGraph::Vertex normed = *last_;
  const Axis heads{"heads", spec_.num_heads};
  const Axis qk_dim{"head_dim", latent.qk_head_dim()};
  const Axis nope{"qk_nope", latent.qk_nope_head_dim};
  const Axis rope_dim{"qk_rope", latent.qk_rope_head_dim};
  const Axis v_dim{"v_head_dim", latent.v_head_dim};
  const Axis kv_rank{"kv_lora", latent.kv_lora_rank};
  const Axis cache_values{"latent", latent.cache_values()};
  const std::vector<Axis> x_axes{batch(), seq(tokens), embed()};
  const std::vector<Axis> q_axes{batch(), seq(tokens), heads, qk_dim};

  // Q: a low-rank pair with a norm between (q_a_proj, q_a_layernorm, q_b_proj), or one q_proj.
  OpGraph::Vertex q_vertex = normed;
  if (latent.q_lora_rank > 0) {
    const Axis q_rank{"q_lora", latent.q_lora_rank};
    add(matmul("q_a_proj", "attention", activation("x_norm", x_axes),
               weight("q_a_proj.weight", {embed(), q_rank}), {batch(), seq(tokens), q_rank}, 0),
        {normed});
    add_feature_norm("q_a_norm", q_rank, previous());
    q_vertex =
        add(matmul("q_b_proj", "attention", activation("q_latent", {batch(), seq(tokens), q_rank}),
                   weight("q_b_proj.weight", {q_rank, heads, qk_dim}), q_axes, 0),
            previous());
  } else {
    q_vertex = add(matmul("q_proj", "attention", activation("x_norm", x_axes),
                          weight("q_proj.weight", {embed(), heads, qk_dim}), q_axes, 0),
                   {normed});
  }
  // The latent and the rotary key (kv_a_proj_with_mqa), the latent normed (kv_a_layernorm).
  add(matmul("kv_a_proj", "attention", activation("x_norm", x_axes),
             weight("kv_a_proj.weight", {embed(), cache_values}),
             {batch(), seq(tokens), cache_values}, 0),
      {normed});
  add_feature_norm("kv_a_norm", kv_rank, previous());
  const OpGraph::Vertex kv_latent = *last_;
  // RoPE on each query head's rotary part and on the one rotary key.
  const std::vector<Axis> q_rope{batch(), seq(tokens), heads, rope_dim};
  Op rope = elementwise(
      "rope", ElementwiseKind::rope, kRopeFlops,
      {activation("q_rope", q_rope), activation("k_rope", {batch(), seq(tokens), rope_dim})},
      activation("q_rotated", q_rope));
  rope.outputs.push_back(activation("k_rotated", {batch(), seq(tokens), rope_dim}));
  const OpGraph::Vertex rotated = add(std::move(rope), {q_vertex, kv_latent});
  const Axis shared{"kv_heads", 1};
  const Axis latent_dim{"head_dim", latent.cache_values()};
  std::vector<OpGraph::Vertex> producers{rotated, kv_latent};
  if (stage_.writes_kv_cache) {
    // The new tokens' latent and rotary key join the cache (a decode step's write).
    const std::vector<Axis> written{batch(), seq(tokens), shared, latent_dim};
    kv_writer_ =
        add(kv_cache_write({activation("latent", written)},
                           {{"latent_cache", written, precision().kv_cache, TensorRole::kv_cache}}),
            {rotated});
    producers.push_back(*kv_writer_);
  }

  Op attention;
  attention.name = "attention";
  attention.kind = OpKind::attention;
  attention.compute_path = precision().attention_path();
  AttentionShape& shape = attention.attention;
  shape.mask = stage_.attention;
  shape.batch = batch_;
  shape.query_tokens = tokens;
  shape.heads = spec_.num_heads;
  const std::int64_t cached = cached_tokens(false);
  if (cached > 0) {
    // Absorbed: q_nope · W_UK per head puts the query in the latent space; every head then
    // attends over the cached latent and rotary key (kv_lora_rank + qk_rope_head_dim values, one
    // shared KV head) and takes its first kv_lora_rank values as V.
    producers.push_back(add(
        matmul("q_absorb", "attention", activation("q_nope", {batch(), seq(tokens), heads, nope}),
               weight("kv_b_proj.k.weight", {heads, nope, kv_rank}),
               {batch(), seq(tokens), heads, kv_rank}, 0),
        {q_vertex}));
    shape.head_dim = latent.cache_values();
    shape.value_head_dim = latent.kv_lora_rank;
    shape.cached_tokens = cached;
    attention.inputs = {activation("q", {batch(), seq(tokens), heads, latent_dim}),
                        activation("k", {batch(), seq(tokens), shared, latent_dim}),
                        {"latent_cache",
                         {batch(), {"kv_seq", cached}, shared, latent_dim},
                         precision().kv_cache,
                         TensorRole::kv_cache}};
    attention.outputs.push_back(activation("attn_latent", {batch(), seq(tokens), heads, kv_rank}));
    add(std::move(attention), producers);
    add(matmul("v_up", "attention",
               activation("attn_latent", {batch(), seq(tokens), heads, kv_rank}),
               weight("kv_b_proj.v.weight", {heads, kv_rank, v_dim}),
               {batch(), seq(tokens), heads, v_dim}, 0),
        previous());
  } else {
    // Expanded: kv_b_proj up-projects the latent to every head's position-free key and value.
    const Axis kv_up{"kv_up", latent.qk_nope_head_dim + latent.v_head_dim};
    producers.push_back(add(
        matmul("kv_b_proj", "attention", activation("kv_latent", {batch(), seq(tokens), kv_rank}),
               weight("kv_b_proj.weight", {kv_rank, heads, kv_up}),
               {batch(), seq(tokens), heads, kv_up}, 0),
        {kv_latent}));
    const Axis kv_heads{"kv_heads", spec_.num_heads};
    shape.head_dim = latent.qk_head_dim();
    shape.value_head_dim = latent.v_head_dim;
    attention.inputs = {activation("q", q_axes),
                        activation("k", {batch(), seq(tokens), kv_heads, qk_dim}),
                        activation("v", {batch(), seq(tokens), kv_heads, v_dim})};
    attention.outputs.push_back(activation("attn_out", {batch(), seq(tokens), heads, v_dim}));
    add(std::move(attention), producers);
  }
  add(matmul("o_proj", "attention", activation("attn_out", {batch(), seq(tokens), heads, v_dim}),
             weight("o_proj.weight", {heads, v_dim, embed()}), {batch(), seq(tokens), embed()},
             spec_.attention_bias ? spec_.hidden_size : 0),
      previous());
  add_residual("attn_residual", block_input);
}

}  // namespace rsim
