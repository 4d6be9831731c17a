// SPDX-License-Identifier: MIT
#include "sim/spec/model.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"

#include <fmt/format.h>

#include <array>

namespace rsim {
namespace {

constexpr std::array kActivations{
    Named<Activation>{Activation::gelu, "gelu"},
    Named<Activation>{Activation::gelu_tanh, "gelu_tanh"},
    Named<Activation>{Activation::silu, "silu"},
    Named<Activation>{Activation::relu, "relu"},
};
constexpr std::array kNorms{
    Named<NormKind>{NormKind::rmsnorm, "rmsnorm"},
    Named<NormKind>{NormKind::layernorm, "layernorm"},
};
constexpr std::array kPositions{
    Named<PositionEmbedding>{PositionEmbedding::rope, "rope"},
    Named<PositionEmbedding>{PositionEmbedding::learned, "learned"},
    Named<PositionEmbedding>{PositionEmbedding::none, "none"},
};
constexpr std::array kMasks{
    Named<AttentionMask>{AttentionMask::causal, "causal"},
    Named<AttentionMask>{AttentionMask::bidirectional, "bidirectional"},
};

VisionInput parse_vision(const ConfigNode& node) {
  node.allow_only({"image_size", "patch_size", "num_channels"});
  VisionInput vision;
  vision.image_size = node.at("image_size").as_positive_int();
  vision.patch_size = node.at("patch_size").as_positive_int();
  vision.num_channels = node.at("num_channels").as_positive_int();
  // Tokens per image are (image_size / patch_size)²; past 4096² (16.7 M, against SigLIP's 256 or
  // 729) the activations' byte counts overflow downstream (issue 23 #2: negative bytes and times).
  constexpr std::int64_t kMaxPatchesPerSide = 4096;
  if (vision.image_size / vision.patch_size > kMaxPatchesPerSide) {
    node.at("image_size")
        .fail(fmt::format("image_size / patch_size = {} patches per side; at most {} (a {}² "
                          "token image)",
                          vision.image_size / vision.patch_size, kMaxPatchesPerSide,
                          kMaxPatchesPerSide));
  }
  if (vision.image_size % vision.patch_size != 0) {
    node.at("patch_size")
        .fail(fmt::format("image_size {} is not a multiple of patch_size {}", vision.image_size,
                          vision.patch_size));
  }
  return vision;
}

void parse_routing(const ConfigNode& document, TransformerSpec& spec);

void parse_experts(const ConfigNode& document, TransformerSpec& spec) {
  const ConfigNode* experts = document.find("num_local_experts");
  const ConfigNode* per_token = document.find("num_experts_per_tok");
  spec.num_experts = experts != nullptr ? experts->as_count() : 0;
  if (spec.num_experts == 0) {
    if (per_token != nullptr) {
      per_token->fail("needs 'num_local_experts' ≥ 1 (a dense MLP has no experts to pick)");
    }
    return;
  }
  if (per_token == nullptr) {
    experts->fail(
        fmt::format("{} experts need 'num_experts_per_tok' (k, the experts each token runs)",
                    spec.num_experts));
  }
  spec.experts_per_token = per_token->as_positive_int();
  if (spec.experts_per_token > spec.num_experts) {
    per_token->fail(fmt::format("expected 1 ≤ num_experts_per_tok ≤ num_local_experts ({}), got {}",
                                spec.num_experts, spec.experts_per_token));
  }
  parse_routing(document, spec);
}

// DeepSeekMoE and Qwen-MoE: expert width, shared experts, dense first layers, grouped routing.
void parse_routing(const ConfigNode& document, TransformerSpec& spec) {
  if (const ConfigNode* width = document.find("moe_intermediate_size")) {
    spec.moe_intermediate_size = width->as_positive_int();
  }
  if (const ConfigNode* shared = document.find("shared_expert_intermediate_size")) {
    spec.shared_expert_intermediate_size = shared->as_count();
  }
  if (const ConfigNode* gate = document.find("shared_expert_gate")) {
    spec.shared_expert_gate = gate->as_bool();
    if (spec.shared_expert_gate && spec.shared_expert_intermediate_size == 0) {
      gate->fail("a shared expert gate needs shared_expert_intermediate_size > 0");
    }
  }
  if (const ConfigNode* dense = document.find("first_k_dense_replace")) {
    spec.first_k_dense_replace = dense->as_count();
    if (spec.first_k_dense_replace >= spec.num_layers) {
      dense->fail(fmt::format("expected fewer than num_hidden_layers ({}) dense layers, got {}",
                              spec.num_layers, spec.first_k_dense_replace));
    }
  }
  if (const ConfigNode* bias = document.find("router_bias")) {
    spec.router_bias = bias->as_bool();
  }
  const ConfigNode* groups = document.find("routing_groups");
  const ConfigNode* per_token = document.find("routing_groups_per_token");
  if ((groups == nullptr) != (per_token == nullptr)) {
    (groups != nullptr ? groups : per_token)
        ->fail("routing_groups and routing_groups_per_token go together");
  }
  if (groups == nullptr) {
    return;
  }
  spec.routing_groups = groups->as_positive_int();
  spec.routing_groups_per_token = per_token->as_positive_int();
  if (spec.num_experts % spec.routing_groups != 0) {
    groups->fail(fmt::format("{} experts do not split into {} groups", spec.num_experts,
                             spec.routing_groups));
  }
  const std::int64_t reachable =
      spec.routing_groups_per_token * (spec.num_experts / spec.routing_groups);
  if (spec.routing_groups_per_token > spec.routing_groups || reachable < spec.experts_per_token) {
    per_token->fail(fmt::format(
        "expected at most routing_groups ({}) groups holding at least num_experts_per_tok ({}) "
        "experts, got {} groups of {} experts",
        spec.routing_groups, spec.experts_per_token, spec.routing_groups_per_token,
        spec.num_experts / spec.routing_groups));
  }
}

// Multi-head latent attention's keys (DeepSeek-V3 config.json's names); head_dim is the query
// and key width, qk_nope_head_dim + qk_rope_head_dim.
void parse_latent_attention(const ConfigNode& document, TransformerSpec& spec) {
  const ConfigNode* kv_rank = document.find("kv_lora_rank");
  if (kv_rank == nullptr) {
    for (const char* key : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      if (const ConfigNode* node = document.find(key)) {
        node->fail("latent attention keys need 'kv_lora_rank'");
      }
    }
    return;
  }
  LatentAttention latent;
  latent.kv_lora_rank = kv_rank->as_positive_int();
  if (const ConfigNode* q_rank = document.find("q_lora_rank")) {
    latent.q_lora_rank = q_rank->as_count();
  }
  latent.qk_nope_head_dim = document.at("qk_nope_head_dim").as_positive_int();
  latent.qk_rope_head_dim = document.at("qk_rope_head_dim").as_positive_int();
  latent.v_head_dim = document.at("v_head_dim").as_positive_int();
  if (spec.head_dim != latent.qk_head_dim()) {
    document.at("head_dim")
        .fail(fmt::format(
            "with latent attention head_dim is qk_nope_head_dim + qk_rope_head_dim = {}, got {}",
            latent.qk_head_dim(), spec.head_dim));
  }
  if (spec.num_kv_heads != spec.num_heads) {
    document.at("num_key_value_heads")
        .fail(fmt::format("latent attention expands K and V for every head: expected "
                          "num_attention_heads ({}), got {}",
                          spec.num_heads, spec.num_kv_heads));
  }
  if (spec.qkv_bias || spec.qk_norm || spec.sliding_window > 0) {
    kv_rank->fail("latent attention with qkv_bias, qk_norm or a sliding_window is not modelled");
  }
  spec.latent_attention = latent;
}

void parse_windows(const ConfigNode& document, TransformerSpec& spec) {
  if (const ConfigNode* window = document.find("sliding_window")) {
    spec.sliding_window = window->as_positive_int();
  }
  if (const ConfigNode* pattern = document.find("sliding_window_pattern")) {
    if (spec.sliding_window == 0) {
      pattern->fail("a sliding_window_pattern needs a sliding_window");
    }
    spec.sliding_window_pattern = pattern->as_positive_int();
  }
}

std::int64_t norm_parameters(const TransformerSpec& spec, const StageSpec* stage) {
  const std::int64_t width = spec.hidden_size;
  if (stage != nullptr && stage->adaptive_norm) {
    // adaRMSNorm (openpi gemma.py RMSNorm with cond): Dense(cond → 3·width) with bias, no scale.
    return stage->condition_width * 3 * width + 3 * width;
  }
  return spec.norm == NormKind::layernorm ? 2 * width : width;  // LayerNorm: scale and shift
}

}  // namespace

std::string_view to_string(Activation activation) { return name_of(activation, kActivations); }
std::string_view to_string(NormKind norm) { return name_of(norm, kNorms); }
std::string_view to_string(PositionEmbedding position) { return name_of(position, kPositions); }
std::string_view to_string(AttentionMask mask) { return name_of(mask, kMasks); }

AttentionMask parse_attention_mask(const ConfigNode& node) { return parse_named(node, kMasks); }

Activation parse_activation(const ConfigNode& node) { return parse_named(node, kActivations); }

const StageSpec* ModelSpec::find_stage(std::string_view stage_name) const {
  for (const StageSpec& stage : stages) {
    if (stage.name == stage_name) {
      return &stage;
    }
  }
  return nullptr;
}

TransformerSpec parse_transformer(const ConfigNode& document) {
  document.allow_only({"name",
                       "source",
                       "architecture",
                       "hidden_size",
                       "num_hidden_layers",
                       "num_attention_heads",
                       "num_key_value_heads",
                       "head_dim",
                       "intermediate_size",
                       "hidden_act",
                       "gated_mlp",
                       "norm",
                       "vocab_size",
                       "tie_word_embeddings",
                       "attention_bias",
                       "qkv_bias",
                       "qk_norm",
                       "mlp_bias",
                       "position_embedding",
                       "max_position_embeddings",
                       "vision",
                       "num_local_experts",
                       "num_experts_per_tok",
                       "moe_intermediate_size",
                       "shared_expert_intermediate_size",
                       "shared_expert_gate",
                       "first_k_dense_replace",
                       "router_bias",
                       "routing_groups",
                       "routing_groups_per_token",
                       "sliding_window",
                       "sliding_window_pattern",
                       "post_norms",
                       "attention_sinks",
                       "parallel_residual",
                       "lm_head_bias",
                       "attention_dropout",
                       "q_lora_rank",
                       "kv_lora_rank",
                       "qk_nope_head_dim",
                       "qk_rope_head_dim",
                       "v_head_dim",
                       "notes"});
  TransformerSpec spec;
  spec.file = document.mark().file;
  spec.name = document.at("name").as_string();
  spec.source = document.at("source").as_string();
  spec.decoder = document.at("architecture").as_choice({"decoder", "encoder"}) == "decoder";
  spec.hidden_size = document.at("hidden_size").as_positive_int();
  spec.num_layers = document.at("num_hidden_layers").as_positive_int();
  spec.num_heads = document.at("num_attention_heads").as_positive_int();
  const ConfigNode& kv_heads = document.at("num_key_value_heads");
  spec.num_kv_heads = kv_heads.as_positive_int();
  if (spec.num_heads % spec.num_kv_heads != 0) {
    kv_heads.fail(fmt::format("num_attention_heads {} is not divisible by num_key_value_heads {}",
                              spec.num_heads, spec.num_kv_heads));
  }
  spec.head_dim = document.at("head_dim").as_positive_int();
  spec.intermediate_size = document.at("intermediate_size").as_positive_int();
  spec.activation = parse_named(document.at("hidden_act"), kActivations);
  spec.gated_mlp = document.at("gated_mlp").as_bool();
  spec.norm = parse_named(document.at("norm"), kNorms);
  spec.vocab_size = document.at("vocab_size").as_count();
  spec.tied_embeddings = document.at("tie_word_embeddings").as_bool();
  if (spec.tied_embeddings && spec.vocab_size == 0) {
    document.at("tie_word_embeddings").fail("tied embeddings need a vocab_size > 0");
  }
  spec.attention_bias = document.at("attention_bias").as_bool();
  // attention_bias puts a bias on all four projections (Hugging Face's Llama); qkv_bias, where
  // given, decides Q, K and V alone (Qwen2: biased Q, K, V and an unbiased output projection).
  spec.qkv_bias = spec.attention_bias;
  if (const ConfigNode* qkv_bias = document.find("qkv_bias")) {
    spec.qkv_bias = qkv_bias->as_bool();
  }
  if (const ConfigNode* qk_norm = document.find("qk_norm")) {
    spec.qk_norm = qk_norm->as_bool();
  }
  spec.mlp_bias = document.at("mlp_bias").as_bool();
  spec.position = parse_named(document.at("position_embedding"), kPositions);
  if (const ConfigNode* vision = document.find("vision")) {
    spec.vision = parse_vision(*vision);
  }
  if (const ConfigNode* positions = document.find("max_position_embeddings")) {
    spec.max_position_embeddings = positions->as_positive_int();
  }
  if (spec.position == PositionEmbedding::learned && !spec.vision &&
      spec.max_position_embeddings == 0) {
    document.at("position_embedding")
        .fail("learned positions need 'max_position_embeddings' (or a 'vision' input)");
  }
  for (const auto& [key, flag] : {std::pair{"post_norms", &spec.post_norms},
                                  std::pair{"attention_sinks", &spec.attention_sinks},
                                  std::pair{"parallel_residual", &spec.parallel_residual},
                                  std::pair{"lm_head_bias", &spec.lm_head_bias}}) {
    if (const ConfigNode* node = document.find(key)) {
      *flag = node->as_bool();
    }
  }
  if (const ConfigNode* dropout = document.find("attention_dropout")) {
    spec.attention_dropout = dropout->as_number();
    if (!(spec.attention_dropout >= 0.0 && spec.attention_dropout < 1.0)) {
      dropout->fail(fmt::format("a dropout probability in [0, 1), got {}", spec.attention_dropout));
    }
  }
  parse_windows(document, spec);
  parse_latent_attention(document, spec);
  parse_experts(document, spec);
  if (const ConfigNode* notes = document.find("notes")) {
    for (const ConfigNode& note : notes->items()) {
      spec.notes.push_back(note.as_string());
    }
  }
  return spec;
}

std::int64_t attention_parameters(const TransformerSpec& spec) {
  const std::int64_t width = spec.hidden_size;
  const std::int64_t heads = spec.num_heads;
  std::int64_t attention = spec.attention_bias ? width : 0;  // o_proj's bias
  if (spec.attention_sinks) {
    attention += heads;
  }
  if (const auto& latent = spec.latent_attention) {
    // DeepSeek-V3 (modeling_deepseek.py DeepseekV3Attention): q_a_proj, q_a_layernorm, q_b_proj
    // (or one q_proj); kv_a_proj_with_mqa to the latent and the rotary key, kv_a_layernorm,
    // kv_b_proj up to each head's K (position-free part) and V; o_proj.
    const std::int64_t q_out = heads * latent->qk_head_dim();
    attention += latent->q_lora_rank > 0 ? width * latent->q_lora_rank + latent->q_lora_rank +
                                               latent->q_lora_rank * q_out
                                         : width * q_out;
    attention += width * latent->cache_values() + latent->kv_lora_rank +
                 latent->kv_lora_rank * heads * (latent->qk_nope_head_dim + latent->v_head_dim);
    return attention + heads * latent->v_head_dim * width;
  }
  const std::int64_t q_width = heads * spec.head_dim;
  const std::int64_t kv_width = spec.num_kv_heads * spec.head_dim;
  // Q, K, V projections and the output projection (transformers.md: 2D(N+K)H).
  attention += width * (q_width + 2 * kv_width) + q_width * width;
  if (spec.qkv_bias) {
    attention += q_width + 2 * kv_width;
  }
  if (spec.qk_norm) {
    attention += 2 * spec.head_dim * (spec.norm == NormKind::layernorm ? 2 : 1);
  }
  return attention;
}

std::int64_t mlp_parameters(const TransformerSpec& spec, std::int64_t ffn) {
  // Gated = gate, up, down (3DF); plain = up, down (2DF).
  const std::int64_t width = spec.hidden_size;
  const std::int64_t up_width = spec.gated_mlp ? 2 * ffn : ffn;
  std::int64_t mlp = width * up_width + ffn * width;
  if (spec.mlp_bias) {
    mlp += up_width + width;
  }
  return mlp;
}

std::int64_t moe_parameters(const TransformerSpec& spec) {
  // E experts and the router, a [D, E] linear (Mixtral's `gate`), with a bias per expert where
  // the model has one; the shared experts and their sigmoid gate [D, 1].
  const std::int64_t experts = spec.num_experts;
  std::int64_t moe = experts * mlp_parameters(spec, spec.expert_intermediate_size()) +
                     spec.hidden_size * experts + (spec.router_bias ? experts : 0);
  if (spec.shared_expert_intermediate_size > 0) {
    moe += mlp_parameters(spec, spec.shared_expert_intermediate_size);
  }
  return moe + (spec.shared_expert_gate ? spec.hidden_size : 0);
}

namespace {

// a × b + c, or an InputError: a size that overflows 2^63 parameters is the user's (issue 23 #2:
// 10^15 layers printed −2.3E parameters).
std::int64_t multiply_add(std::int64_t a, std::int64_t b, std::int64_t c = 0) {
  std::int64_t product = 0;
  std::int64_t sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) {
    throw InputError(fmt::format(
        "the model has more than 2^63 parameters ({} × {} overflows): check num_hidden_layers, "
        "hidden_size, intermediate_size, vocab_size and the experts",
        a, b));
  }
  return sum;
}

// Every block's attention and norms (four with post_norms), the dense MLPs of the dense layers
// and the expert blocks of the others.
std::int64_t layer_parameters(const TransformerSpec& spec, const StageSpec* stage) {
  const std::int64_t norms = (spec.post_norms          ? 4
                              : spec.parallel_residual ? 1
                                                       : 2) *
                             norm_parameters(spec, stage);
  const std::int64_t shared = multiply_add(spec.num_layers, attention_parameters(spec) + norms);
  const std::int64_t dense =
      multiply_add(spec.dense_layers(), mlp_parameters(spec, spec.intermediate_size), shared);
  return spec.moe() ? multiply_add(spec.moe_layers(), moe_parameters(spec), dense) : dense;
}

}  // namespace

ParameterCount count_parameters(const TransformerSpec& spec) {
  ParameterCount count;
  count.embedding = multiply_add(spec.vocab_size, spec.hidden_size);
  if (spec.vision) {
    const VisionInput& vision = *spec.vision;
    count.embedding =
        multiply_add(multiply_add(multiply_add(vision.num_channels, vision.patch_size),
                                  multiply_add(vision.patch_size, spec.hidden_size)),
                     1, multiply_add(spec.hidden_size, 1, count.embedding));
  }
  if (spec.position == PositionEmbedding::learned) {
    const std::int64_t positions =
        spec.vision ? spec.vision->tokens() : spec.max_position_embeddings;
    count.embedding = multiply_add(positions, spec.hidden_size, count.embedding);
  }
  count.layers = layer_parameters(spec, nullptr);
  if (spec.moe()) {
    count.inactive_experts =
        multiply_add(multiply_add(spec.moe_layers(), spec.num_experts - spec.experts_per_token),
                     mlp_parameters(spec, spec.expert_intermediate_size()));
  }
  count.final_norm = norm_parameters(spec, nullptr);
  if (spec.vocab_size > 0 && !spec.tied_embeddings) {
    count.lm_head = multiply_add(spec.vocab_size, spec.hidden_size);
  }
  if (spec.lm_head_bias) {
    count.lm_head += spec.vocab_size;
  }
  // The sum the reports print.
  multiply_add(1, count.embedding, multiply_add(1, count.layers, count.lm_head));
  return count;
}

ParameterCount count_parameters(const StageSpec& stage) {
  ParameterCount count = count_parameters(stage.component);
  count.layers = layer_parameters(stage.component, &stage);
  count.final_norm = norm_parameters(stage.component, &stage);
  for (const auto* list : {&stage.pre, &stage.post}) {
    for (const DenseLayer& layer : *list) {
      count.extra += layer.in_features * layer.out_features + (layer.bias ? layer.out_features : 0);
    }
  }
  return count;
}

ParameterCount count_parameters(const ModelSpec& model) {
  ParameterCount total;
  for (const StageSpec& stage : model.stages) {
    const ParameterCount count = count_parameters(stage);
    total.embedding += count.embedding;
    total.layers += count.layers;
    total.final_norm += count.final_norm;
    total.lm_head += count.lm_head;
    total.extra += count.extra;
    total.inactive_experts += count.inactive_experts;
  }
  return total;
}

}  // namespace rsim
