// SPDX-License-Identifier: MIT
#include "sim/spec/model.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/hf_config.hpp"

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
constexpr std::array kLmHeads{
    Named<LmHead>{LmHead::none, "none"},
    Named<LmHead>{LmHead::last_token, "last"},
    Named<LmHead>{LmHead::all_tokens, "all"},
};

bool optional_bool(const ConfigNode& document, std::string_view key, bool fallback) {
  const ConfigNode* node = document.find(key);
  return node != nullptr ? node->as_bool() : fallback;
}

VisionInput parse_vision(const ConfigNode& node) {
  node.allow_only({"image_size", "patch_size", "num_channels"});
  VisionInput vision;
  vision.image_size = node.at("image_size").as_positive_int();
  vision.patch_size = node.at("patch_size").as_positive_int();
  vision.num_channels = node.at("num_channels").as_positive_int();
  if (vision.image_size % vision.patch_size != 0) {
    node.at("patch_size")
        .fail(fmt::format("image_size {} is not a multiple of patch_size {}", vision.image_size,
                          vision.patch_size));
  }
  return vision;
}

DenseLayer parse_dense(const ConfigNode& node) {
  node.allow_only({"name", "in", "out", "bias", "rows", "activation"});
  DenseLayer layer;
  layer.name = node.at("name").as_string();
  layer.in_features = node.at("in").as_positive_int();
  layer.out_features = node.at("out").as_positive_int();
  layer.bias = optional_bool(node, "bias", false);
  if (const ConfigNode* rows = node.find("rows")) {
    layer.per_sequence = rows->as_choice({"tokens", "sequence"}) == "sequence";
  }
  if (const ConfigNode* activation = node.find("activation")) {
    layer.activation = parse_named(*activation, kActivations);
  }
  return layer;
}

std::vector<DenseLayer> parse_dense_list(const ConfigNode& stage, std::string_view key) {
  std::vector<DenseLayer> layers;
  if (const ConfigNode* list = stage.find(key)) {
    for (const ConfigNode& item : list->items()) {
      layers.push_back(parse_dense(item));
    }
  }
  return layers;
}

StageSpec parse_stage(const ConfigNode& node, const ModelSpec& model, const PresetResolver& resolve,
                      ConfigFiles* files) {
  node.allow_only({"name", "component", "tokens", "images", "embedded_tokens", "steps", "attention",
                   "attends_to", "norm", "condition_width", "lm_head", "pre", "post"});
  StageSpec stage;
  stage.name = node.at("name").as_string();
  if (model.find_stage(stage.name) != nullptr) {
    node.at("name").fail(fmt::format("a stage named '{}' already exists", stage.name));
  }
  const ConfigNode& component = node.at("component");
  const auto component_path =
      resolve(component.as_string(), "models", std::filesystem::path(node.mark().file));
  stage.component = load_component(component_path, files);
  const TransformerSpec& spec = stage.component;
  if (spec.vision) {
    if (node.find("tokens") != nullptr) {
      node.at("tokens").fail(
          fmt::format("a vision stage has (image_size / patch_size)² = {} "
                      "tokens per image; set 'images' instead",
                      spec.vision->tokens()));
    }
    stage.tokens = spec.vision->tokens();
  } else {
    stage.tokens = node.at("tokens").as_positive_int();
  }
  if (const ConfigNode* images = node.find("images")) {
    if (!spec.vision) {
      images->fail("only a vision component takes 'images'");
    }
    stage.images = images->as_positive_int();
  }
  if (const ConfigNode* embedded = node.find("embedded_tokens")) {
    stage.embedded_tokens = embedded->as_count();
    if (spec.vocab_size == 0 && stage.embedded_tokens > 0) {
      embedded->fail(
          fmt::format("component '{}' has no token embedding (vocab_size 0)", spec.name));
    }
    if (stage.embedded_tokens > stage.tokens) {
      embedded->fail(fmt::format("{} embedded tokens exceed the stage's {} tokens",
                                 stage.embedded_tokens, stage.tokens));
    }
  }
  if (const ConfigNode* steps = node.find("steps")) {
    stage.steps = steps->as_positive_int();
  }
  stage.attention = spec.decoder ? AttentionMask::causal : AttentionMask::bidirectional;
  if (const ConfigNode* attention = node.find("attention")) {
    stage.attention = parse_named(*attention, kMasks);
  }
  if (const ConfigNode* attends_to = node.find("attends_to")) {
    stage.attends_to = attends_to->as_string();
    const StageSpec* target = model.find_stage(stage.attends_to);
    if (target == nullptr) {
      attends_to->fail(fmt::format("no earlier stage named '{}'", stage.attends_to));
    }
    const TransformerSpec& other = target->component;
    if (other.num_layers != spec.num_layers || other.num_kv_heads != spec.num_kv_heads ||
        other.head_dim != spec.head_dim) {
      attends_to->fail(fmt::format(
          "stage '{}' shares attention with '{}', so layers, num_key_value_heads and head_dim "
          "must match ({}/{}/{} vs {}/{}/{})",
          stage.name, target->name, spec.num_layers, spec.num_kv_heads, spec.head_dim,
          other.num_layers, other.num_kv_heads, other.head_dim));
    }
  }
  if (const ConfigNode* norm = node.find("norm")) {
    stage.adaptive_norm = norm->as_choice({"plain", "adaptive"}) == "adaptive";
    if (stage.adaptive_norm) {
      stage.condition_width = node.at("condition_width").as_positive_int();
    }
  }
  if (const ConfigNode* lm_head = node.find("lm_head")) {
    stage.lm_head = parse_named(*lm_head, kLmHeads);
    if (stage.lm_head != LmHead::none && spec.vocab_size == 0) {
      lm_head->fail(fmt::format("component '{}' has no vocabulary", spec.name));
    }
  }
  stage.pre = parse_dense_list(node, "pre");
  stage.post = parse_dense_list(node, "post");
  return stage;
}

ModelSpec parse_composite(const ConfigNode& document, const PresetResolver& resolve,
                          ConfigFiles* files) {
  document.allow_only({"name", "source", "stages"});
  ModelSpec model;
  model.composite = true;
  model.file = document.mark().file;
  model.name = document.at("name").as_string();
  model.source = document.at("source").as_string();
  const ConfigNode& stages = document.at("stages");
  for (const ConfigNode& stage_node : stages.items()) {
    model.stages.push_back(parse_stage(stage_node, model, resolve, files));
  }
  if (model.stages.empty()) {
    stages.fail("expected at least one stage");
  }
  for (const StageSpec& stage : model.stages) {
    for (StageSpec& target : model.stages) {
      if (target.name == stage.attends_to) {
        target.writes_kv_cache = true;
      }
    }
  }
  return model;
}

// num_local_experts E (0 or absent: dense) and num_experts_per_tok k, 1 ≤ k ≤ E.
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
                       "mlp_bias",
                       "position_embedding",
                       "max_position_embeddings",
                       "vision",
                       "num_local_experts",
                       "num_experts_per_tok"});
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
  parse_experts(document, spec);
  return spec;
}

std::int64_t block_parameters(const TransformerSpec& spec, const StageSpec* stage) {
  const std::int64_t width = spec.hidden_size;
  const std::int64_t q_width = spec.num_heads * spec.head_dim;
  const std::int64_t kv_width = spec.num_kv_heads * spec.head_dim;
  // Attention: Q, K, V projections and the output projection (transformers.md: 2D(N+K)H).
  std::int64_t attention = width * (q_width + 2 * kv_width) + q_width * width;
  if (spec.attention_bias) {
    attention += q_width + 2 * kv_width + width;
  }
  // MoE: E expert MLPs and the router, a bias-free [D, E] linear (Mixtral's `gate`).
  const std::int64_t mlp = spec.moe()
                               ? spec.num_experts * mlp_parameters(spec) + width * spec.num_experts
                               : mlp_parameters(spec);
  return attention + mlp + 2 * norm_parameters(spec, stage);
}

std::int64_t mlp_parameters(const TransformerSpec& spec) {
  // Gated = gate, up, down (3DF); plain = up, down (2DF).
  const std::int64_t width = spec.hidden_size;
  const std::int64_t ffn = spec.intermediate_size;
  const std::int64_t up_width = spec.gated_mlp ? 2 * ffn : ffn;
  std::int64_t mlp = width * up_width + ffn * width;
  if (spec.mlp_bias) {
    mlp += up_width + width;
  }
  return mlp;
}

ParameterCount count_parameters(const TransformerSpec& spec) {
  ParameterCount count;
  count.embedding = spec.vocab_size * spec.hidden_size;
  if (spec.vision) {
    const VisionInput& vision = *spec.vision;
    count.embedding +=
        vision.num_channels * vision.patch_size * vision.patch_size * spec.hidden_size +
        spec.hidden_size;
  }
  if (spec.position == PositionEmbedding::learned) {
    const std::int64_t positions =
        spec.vision ? spec.vision->tokens() : spec.max_position_embeddings;
    count.embedding += positions * spec.hidden_size;
  }
  count.layers = spec.num_layers * block_parameters(spec, nullptr);
  if (spec.moe()) {
    count.inactive_experts =
        spec.num_layers * (spec.num_experts - spec.experts_per_token) * mlp_parameters(spec);
  }
  count.final_norm = norm_parameters(spec, nullptr);
  if (spec.vocab_size > 0 && !spec.tied_embeddings) {
    count.lm_head = spec.vocab_size * spec.hidden_size;
  }
  return count;
}

ParameterCount count_parameters(const StageSpec& stage) {
  ParameterCount count = count_parameters(stage.component);
  count.layers = stage.component.num_layers * block_parameters(stage.component, &stage);
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

TransformerSpec load_component(const std::filesystem::path& path, ConfigFiles* files) {
  return is_hf_config(path) ? import_hf_config(path)
                            : parse_transformer(load_config_file(path, files));
}

ModelSpec load_model(const std::filesystem::path& path, const PresetResolver& resolve,
                     ConfigFiles* files) {
  StageSpec stage;
  if (is_hf_config(path)) {
    stage.component = import_hf_config(path);
  } else {
    const ConfigNode document = load_config_file(path, files);
    if (document.find("stages") != nullptr) {
      return parse_composite(document, resolve, files);
    }
    stage.component = parse_transformer(document);
  }
  ModelSpec model;
  model.file = path.string();
  model.name = stage.component.name;
  model.source = stage.component.source;
  stage.name = stage.component.decoder ? "decoder" : "encoder";
  stage.attention = stage.component.decoder ? AttentionMask::causal : AttentionMask::bidirectional;
  if (stage.component.vision) {
    stage.tokens = stage.component.vision->tokens();
  }
  model.stages.push_back(std::move(stage));
  return model;
}

}  // namespace rsim
