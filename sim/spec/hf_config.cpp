// SPDX-License-Identifier: MIT
#include "sim/spec/hf_config.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/spec/hf_architecture.hpp"
#include "sim/spec/json_document.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

namespace rsim {
namespace {

using Json = nlohmann::json;

// Hugging Face activation names (transformers activations.py ACT2FN) → rsim's. gelu_new,
// gelu_fast and gelu_pytorch_tanh are all the tanh approximation of GELU.
constexpr std::array kActivationNames{
    Named<Activation>{Activation::silu, "silu"},
    Named<Activation>{Activation::silu, "swish"},
    Named<Activation>{Activation::gelu, "gelu"},
    Named<Activation>{Activation::gelu_tanh, "gelu_new"},
    Named<Activation>{Activation::gelu_tanh, "gelu_fast"},
    Named<Activation>{Activation::gelu_tanh, "gelu_pytorch_tanh"},
    Named<Activation>{Activation::relu, "relu"},
};

constexpr SizeKey kHiddenSize{"hidden_size", "n_embd"};
constexpr SizeKey kLayers{"num_hidden_layers", "n_layer"};
constexpr SizeKey kHeads{"num_attention_heads", "n_head"};
constexpr SizeKey kPositions{"max_position_embeddings", "n_positions"};
constexpr SizeKey kIntermediate{"intermediate_size", "n_inner"};

// The activation key, in the order transformers reads them: Gemma's hidden_activation wins over
// its legacy hidden_act (google/gemma-2b's config.json on Hugging Face gives both); GPT-2 style
// configs say activation_function.
constexpr std::array<std::string_view, 3> kActivationKeys{"hidden_activation", "hidden_act",
                                                          "activation_function"};

Activation parse_activation(const JsonDocument& config) {
  for (const std::string_view key : kActivationKeys) {
    if (config.find(key) == nullptr) {
      continue;
    }
    const std::string name = config.text(key);
    if (const auto activation = find_named(name, kActivationNames)) {
      return *activation;
    }
    config.fail(key, fmt::format("unknown activation \"{}\" (rsim knows {})", name,
                                 names_of(kActivationNames)));
  }
  config.fail_missing("'hidden_act' (or 'hidden_activation', 'activation_function')");
}

std::string default_name(const Json* name_or_path, const std::filesystem::path& file) {
  if (name_or_path != nullptr && name_or_path->is_string() &&
      !name_or_path->get<std::string>().empty()) {
    return name_or_path->get<std::string>();
  }
  if (file.filename() == "config.json" && file.has_parent_path() &&
      !file.parent_path().filename().empty()) {
    return file.parent_path().filename().string();
  }
  return file.stem().string();
}

}  // namespace

bool is_hf_config(const std::filesystem::path& path) { return path.extension() == ".json"; }

TransformerSpec parse_hf_config(const std::string& text, const std::string& file_label,
                                std::string_view name) {
  const JsonDocument config = parse_json_document(text, file_label);
  const HfArchitecture& architecture = find_hf_architecture(config);

  TransformerSpec spec;
  spec.file = file_label;
  spec.name =
      name.empty() ? default_name(config.find("_name_or_path"), file_label) : std::string(name);
  spec.source = fmt::format(
      "Hugging Face config.json {} (model_type {}; MLP, norm and positions from "
      "rsim's model_type table)",
      file_label, architecture.model_type);
  spec.decoder = true;
  spec.hidden_size = config.required_size(kHiddenSize);
  spec.num_layers = config.required_size(kLayers);
  spec.num_heads = config.required_size(kHeads);
  spec.num_kv_heads = config.optional_int("num_key_value_heads").value_or(spec.num_heads);
  if (spec.num_heads % spec.num_kv_heads != 0) {
    config.fail("num_key_value_heads",
                fmt::format("num_attention_heads {} is not divisible by num_key_value_heads {}",
                            spec.num_heads, spec.num_kv_heads));
  }
  if (const auto head_dim = config.optional_int("head_dim")) {
    spec.head_dim = *head_dim;
  } else if (spec.hidden_size % spec.num_heads != 0) {
    config.fail(*config.used_key(kHeads),
                fmt::format("no head_dim, and hidden_size {} is not divisible by {} heads",
                            spec.hidden_size, spec.num_heads));
  } else {
    spec.head_dim = spec.hidden_size / spec.num_heads;
  }
  const SizeKey intermediate_key = architecture.intermediate_key.empty()
                                       ? kIntermediate
                                       : SizeKey{architecture.intermediate_key, {}};
  if (const auto intermediate = config.optional_size(intermediate_key)) {
    spec.intermediate_size = *intermediate;
  } else if (architecture.default_ffn_multiple > 0) {
    // 4 × hidden_size past 2^63 wrapped to 0 and was written as intermediate_size: 0 (issue 23).
    if (__builtin_mul_overflow(architecture.default_ffn_multiple, spec.hidden_size,
                               &spec.intermediate_size)) {
      config.fail(*config.used_key(kHiddenSize),
                  fmt::format("{} × hidden_size {} (the MLP width of {}) overflows 2^63",
                              architecture.default_ffn_multiple, spec.hidden_size,
                              architecture.model_type));
    }
  } else {
    config.fail_missing(fmt::format("'{}'", intermediate_key.key));
  }
  spec.activation = parse_activation(config);
  spec.gated_mlp = architecture.gated_mlp;
  spec.norm = architecture.norm;
  if (config.find("vocab_size") == nullptr) {
    config.fail_missing("'vocab_size'");
  }
  spec.vocab_size = config.positive_int("vocab_size");
  spec.tied_embeddings = config.boolean("tie_word_embeddings", architecture.tied_by_default);
  spec.attention_bias = config.boolean("attention_bias", architecture.attention_bias);
  spec.qkv_bias = architecture.qkv_bias || spec.attention_bias;
  spec.qk_norm = architecture.qk_norm;
  spec.mlp_bias = config.boolean("mlp_bias", architecture.mlp_bias);
  // Llama, Qwen, Mistral: attention_dropout; GPT-2 and GPT-J: attn_pdrop.
  for (const std::string_view key : {"attention_dropout", "attn_pdrop"}) {
    if (const auto* value = config.find(key); value != nullptr && value->is_number()) {
      spec.attention_dropout = value->get<double>();
      if (!(spec.attention_dropout >= 0.0 && spec.attention_dropout < 1.0)) {
        config.fail(key,
                    fmt::format("a dropout probability in [0, 1), got {}", spec.attention_dropout));
      }
      break;
    }
  }
  spec.position = architecture.position;
  // The position table only counts (and only is a parameter) for learned positions.
  if (spec.position == PositionEmbedding::learned) {
    const auto positions = config.optional_size(kPositions);
    if (!positions) {
      config.fail_missing("'max_position_embeddings' (or 'n_positions') for learned positions");
    }
    spec.max_position_embeddings = *positions;
  }
  read_hf_family(config, architecture, spec);
  return spec;
}

TransformerSpec import_hf_config(const std::filesystem::path& path, std::string_view name) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    throw ConfigError(SourceMark{path.string(), 0, 0}, "cannot open the file");
  }
  std::ostringstream text;
  text << stream.rdbuf();
  return parse_hf_config(text.str(), path.string(), name);
}

}  // namespace rsim
