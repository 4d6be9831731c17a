// SPDX-License-Identifier: MIT
// Model files: a model YAML (one component or a composite of stages) or a Hugging Face
// config.json, chosen by the file.
#include "sim/spec/model_files.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/hf_config.hpp"

#include <fmt/format.h>

#include <array>

namespace rsim {
namespace {

constexpr std::array kLmHeads{
    Named<LmHead>{LmHead::none, "none"},
    Named<LmHead>{LmHead::last_token, "last"},
    Named<LmHead>{LmHead::all_tokens, "all"},
};

bool optional_bool(const ConfigNode& document, std::string_view key, bool fallback) {
  const ConfigNode* node = document.find(key);
  return node != nullptr ? node->as_bool() : fallback;
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
    layer.activation = parse_activation(*activation);
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
  // A component that is not found is this file's error, at its 'component' key (it was blamed on
  // the scenario's 'model:' key, issue 23 #7).
  std::filesystem::path component_path;
  try {
    component_path =
        resolve(component.as_string(), "models", std::filesystem::path(node.mark().file));
  } catch (const ConfigError&) {
    throw;
  } catch (const InputError& error) {
    component.fail(error.what());
  }
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
    stage.attention = parse_attention_mask(*attention);
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
    // A stage reads its upstream stage's output, its own embedded tokens, its images or its
    // 'pre' layers; the first has no upstream (issue 23 #4: an internal error later).
    const StageSpec& stage = model.stages.back();
    if (model.stages.size() == 1 && !stage.component.vision && stage.embedded_tokens == 0 &&
        stage.pre.empty()) {
      stage_node.fail(fmt::format(
          "the first stage '{}' has no input: give it 'embedded_tokens' (tokens looked up in "
          "{}'s embedding) or 'pre' layers, or put a vision stage before it",
          stage.name, stage.component.name));
    }
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
}  // namespace

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
  try {
    count_parameters(model);  // every report prints it: a size that overflows is refused here
  } catch (const InputError& error) {
    throw InputError(fmt::format("{}: error: {}", model.file, error.what()));
  }
  return model;
}

}  // namespace rsim
