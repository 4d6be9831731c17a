// SPDX-License-Identifier: MIT
#include "sim/spec/model_yaml.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <utility>

namespace rsim {
namespace {

using Json = nlohmann::json;

std::string quoted(const std::string& text) {
  // A JSON string literal is a valid YAML double-quoted scalar.
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string model_yaml(const TransformerSpec& spec) {
  std::string yaml;
  auto out = std::back_inserter(yaml);
  fmt::format_to(out, "name: {}\nsource: {}\n", quoted(spec.name), quoted(spec.source));
  fmt::format_to(out, "architecture: {}\n", spec.decoder ? "decoder" : "encoder");
  fmt::format_to(out, "hidden_size: {}\n", spec.hidden_size);
  fmt::format_to(out, "num_hidden_layers: {}\n", spec.num_layers);
  fmt::format_to(out, "num_attention_heads: {}\n", spec.num_heads);
  fmt::format_to(out, "num_key_value_heads: {}\n", spec.num_kv_heads);
  fmt::format_to(out, "head_dim: {}\n", spec.head_dim);
  fmt::format_to(out, "intermediate_size: {}\n", spec.intermediate_size);
  fmt::format_to(out, "hidden_act: {}\n", to_string(spec.activation));
  fmt::format_to(out, "gated_mlp: {}\n", spec.gated_mlp);
  fmt::format_to(out, "norm: {}\n", to_string(spec.norm));
  fmt::format_to(out, "vocab_size: {}\n", spec.vocab_size);
  fmt::format_to(out, "tie_word_embeddings: {}\n", spec.tied_embeddings);
  fmt::format_to(out, "attention_bias: {}\n", spec.attention_bias);
  if (spec.qkv_bias != spec.attention_bias) {
    fmt::format_to(out, "qkv_bias: {}\n", spec.qkv_bias);
  }
  if (spec.qk_norm) {
    fmt::format_to(out, "qk_norm: true\n");
  }
  fmt::format_to(out, "mlp_bias: {}\n", spec.mlp_bias);
  fmt::format_to(out, "position_embedding: {}\n", to_string(spec.position));
  if (spec.max_position_embeddings > 0) {
    fmt::format_to(out, "max_position_embeddings: {}\n", spec.max_position_embeddings);
  }
  if (spec.sliding_window > 0) {
    fmt::format_to(out, "sliding_window: {}\n", spec.sliding_window);
  }
  if (spec.sliding_window_pattern > 0) {
    fmt::format_to(out, "sliding_window_pattern: {}\n", spec.sliding_window_pattern);
  }
  if (spec.post_norms) {
    fmt::format_to(out, "post_norms: true\n");
  }
  if (spec.attention_sinks) {
    fmt::format_to(out, "attention_sinks: true\n");
  }
  if (spec.parallel_residual) {
    fmt::format_to(out, "parallel_residual: true\n");
  }
  if (spec.lm_head_bias) {
    fmt::format_to(out, "lm_head_bias: true\n");
  }
  if (spec.attention_dropout > 0.0) {
    fmt::format_to(out, "attention_dropout: {}\n", spec.attention_dropout);
  }
  if (const auto& latent = spec.latent_attention) {
    fmt::format_to(out,
                   "q_lora_rank: {}\nkv_lora_rank: {}\nqk_nope_head_dim: {}\nqk_rope_head_dim: "
                   "{}\nv_head_dim: {}\n",
                   latent->q_lora_rank, latent->kv_lora_rank, latent->qk_nope_head_dim,
                   latent->qk_rope_head_dim, latent->v_head_dim);
  }
  if (spec.vision) {
    fmt::format_to(out, "vision: {{image_size: {}, patch_size: {}, num_channels: {}}}\n",
                   spec.vision->image_size, spec.vision->patch_size, spec.vision->num_channels);
  }
  if (spec.moe()) {
    fmt::format_to(out, "num_local_experts: {}\nnum_experts_per_tok: {}\n", spec.num_experts,
                   spec.experts_per_token);
  }
  for (const auto& [key, value] :
       {std::pair{"moe_intermediate_size", spec.moe_intermediate_size},
        std::pair{"shared_expert_intermediate_size", spec.shared_expert_intermediate_size},
        std::pair{"first_k_dense_replace", spec.first_k_dense_replace},
        std::pair{"routing_groups", spec.routing_groups},
        std::pair{"routing_groups_per_token", spec.routing_groups_per_token}}) {
    if (value > 0) {
      fmt::format_to(out, "{}: {}\n", key, value);
    }
  }
  if (spec.shared_expert_gate) {
    fmt::format_to(out, "shared_expert_gate: true\n");
  }
  if (spec.router_bias) {
    fmt::format_to(out, "router_bias: true\n");
  }
  if (!spec.notes.empty()) {
    fmt::format_to(out, "notes:\n");
    for (const std::string& note : spec.notes) {
      fmt::format_to(out, "  - {}\n", quoted(note));
    }
  }
  return yaml;
}

}  // namespace rsim
