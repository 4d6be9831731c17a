// SPDX-License-Identifier: MIT
#include "sim/spec/hf_architecture.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <string>
#include <vector>

namespace rsim {
namespace {

using Json = nlohmann::json;

// LlamaConfig, MistralConfig, MixtralConfig: tie_word_embeddings=False; GemmaConfig: True;
// GPT2Config inherits PretrainedConfig's True and hard-codes biases on c_attn/c_proj/c_fc with
// n_inner=None → 4·n_embd; GPTNeoXConfig: attention_bias=True, MLP biases always, untied.
constexpr std::array kArchitectures{
    HfArchitecture{.model_type = "llama"},
    HfArchitecture{.model_type = "mistral", .windows = HfWindows::every_layer},
    HfArchitecture{
        .model_type = "mixtral", .experts = HfExperts::local, .windows = HfWindows::every_layer},
    HfArchitecture{.model_type = "gemma", .tied_by_default = true},
    HfArchitecture{.model_type = "gpt2",
                   .gated_mlp = false,
                   .norm = NormKind::layernorm,
                   .position = PositionEmbedding::learned,
                   .tied_by_default = true,
                   .attention_bias = true,
                   .mlp_bias = true,
                   .default_ffn_multiple = 4},
    HfArchitecture{.model_type = "gpt_neox",
                   .gated_mlp = false,
                   .norm = NormKind::layernorm,
                   .attention_bias = true,
                   .mlp_bias = true},
    // Gemma2DecoderLayer: input, post_attention, pre_feedforward and post_feedforward RMSNorms;
    // layer i windowed when i is even (Gemma2Config.layer_types).
    HfArchitecture{.model_type = "gemma2",
                   .tied_by_default = true,
                   .windows = HfWindows::alternating,
                   .window_pattern = 2,
                   .post_norms = true},
    // Gemma3TextConfig: sliding_window_pattern 6 (five local layers, then a global one), q/k norms.
    HfArchitecture{.model_type = "gemma3_text",
                   .tied_by_default = true,
                   .qk_norm = true,
                   .windows = HfWindows::alternating,
                   .window_pattern = 6,
                   .post_norms = true},
    HfArchitecture{.model_type = "qwen2", .qkv_bias = true},
    HfArchitecture{.model_type = "qwen2_moe", .experts = HfExperts::qwen, .qkv_bias = true},
    HfArchitecture{.model_type = "qwen3", .qk_norm = true},
    HfArchitecture{.model_type = "qwen3_moe", .experts = HfExperts::qwen, .qk_norm = true},
    // Phi3Attention fuses Q, K, V into qkv_proj and Phi3MLP gate and up into gate_up_proj: the
    // same weights as Llama's separate projections, no biases.
    HfArchitecture{.model_type = "phi3", .windows = HfWindows::every_layer},
    HfArchitecture{
        .model_type = "deepseek_v3", .experts = HfExperts::deepseek, .latent_attention = true},
    // GptOssAttention: biased Q, K, V and O and a sink per head; GptOssExperts: biased gate_up
    // and down; GptOssTopKRouter: a biased linear; layer_types alternate windowed and full.
    HfArchitecture{.model_type = "gpt_oss",
                   .attention_bias = true,
                   .mlp_bias = true,
                   .experts = HfExperts::local,
                   .windows = HfWindows::alternating,
                   .window_pattern = 2,
                   .attention_sinks = true},
    // OPTDecoder: OPTLearnedPositionalEmbedding keeps max_position_embeddings + 2 rows; biases
    // everywhere (enable_bias); fc1/fc2 of ffn_dim; the LM head tied to embed_tokens.
    HfArchitecture{.model_type = "opt",
                   .gated_mlp = false,
                   .norm = NormKind::layernorm,
                   .position = PositionEmbedding::learned,
                   .tied_by_default = true,
                   .attention_bias = true,
                   .mlp_bias = true,
                   .intermediate_key = "ffn_dim",
                   .position_offset = 2},
    // GPTJBlock: ln_1 feeds attention (no biases) and the MLP (fc_in/fc_out with biases) side
    // by side; n_inner null → 4 · n_embd; lm_head has a bias; untied.
    HfArchitecture{.model_type = "gptj",
                   .gated_mlp = false,
                   .norm = NormKind::layernorm,
                   .mlp_bias = true,
                   .default_ffn_multiple = 4,
                   .parallel_residual = true,
                   .lm_head_bias = true},
};

// OPT-350m projects 512-wide embeddings to 1024 and normalizes after each block: neither is in
// rsim's blocks (the other OPT sizes have neither).
void read_opt(const JsonDocument& config, TransformerSpec& spec) {
  if (const Json* projection = config.find("word_embed_proj_dim");
      projection != nullptr && *projection != spec.hidden_size) {
    config.fail("word_embed_proj_dim",
                fmt::format("an embedding of {} projected to hidden_size {} is not modelled; rsim "
                            "will not import it as a different model",
                            projection->dump(), spec.hidden_size));
  }
  if (!config.boolean("do_layer_norm_before", true)) {
    config.fail("do_layer_norm_before",
                "post-norm blocks (OPT-350m) are not modelled; rsim will not import them as "
                "pre-norm ones");
  }
  const bool bias = config.boolean("enable_bias", true);
  spec.attention_bias = bias;
  spec.qkv_bias = bias;
  spec.mlp_bias = bias;
}

/// An expert key of another family: refused rather than imported as a different model.
struct ForeignKey {
  std::string_view key;
  HfExperts family;
  std::string_view feature;
};
constexpr std::array kExpertKeys{
    ForeignKey{"num_local_experts", HfExperts::local, "num_local_experts MoE"},
    ForeignKey{"num_experts", HfExperts::qwen, "Qwen-MoE experts"},
    ForeignKey{"n_routed_experts", HfExperts::deepseek, "DeepSeekMoE routed experts"},
    ForeignKey{"n_shared_experts", HfExperts::deepseek, "DeepSeekMoE shared experts"},
};

void check_experts_per_token(const JsonDocument& config, std::string_view experts_key,
                             TransformerSpec& spec) {
  spec.num_experts = config.positive_int(experts_key);
  std::string_view key = "num_experts_per_tok";
  if (config.find(key) == nullptr) {
    key = "experts_per_token";  // gpt-oss's original name
  }
  if (config.find(key) == nullptr) {
    config.fail_missing("'num_experts_per_tok' (k, the experts each token runs)");
  }
  spec.experts_per_token = config.positive_int(key);
  if (spec.experts_per_token > spec.num_experts) {
    config.fail(key, fmt::format("expected 1 ≤ {} ≤ {} ({}), got {}", key, experts_key,
                                 spec.num_experts, spec.experts_per_token));
  }
}

// Every layer an MoE layer: Qwen's decoder_sparse_step 1 and no mlp_only_layers, DeepSeek's
// moe_layer_freq 1 (after the first_k_dense_replace dense ones).
void require_every_layer(const JsonDocument& config, std::string_view key) {
  const Json* value = config.find(key);
  if (value == nullptr) {
    return;
  }
  const bool every = value->is_array() ? value->empty() : (*value == 1);
  if (!every) {
    config.fail(key, fmt::format("MoE on some layers only ({}: {}) is not modelled; rsim will "
                                 "not import it as a different model",
                                 key, value->dump()));
  }
}

void read_experts(const JsonDocument& config, const HfArchitecture& architecture,
                  TransformerSpec& spec) {
  for (const ForeignKey& rule : kExpertKeys) {
    const Json* value = config.find(rule.key);
    if (rule.family != architecture.experts && value != nullptr && value->is_number_integer() &&
        value->get<std::int64_t>() > (rule.key == "n_shared_experts" ? 0 : 1)) {
      config.fail(rule.key,
                  fmt::format("{} ({}: {}) on model_type {}, whose modelling code has "
                              "none; rsim will not import it as a different model",
                              rule.feature, rule.key, value->dump(), architecture.model_type));
    }
  }
  switch (architecture.experts) {
    case HfExperts::none:
      return;
    case HfExperts::local:
      if (config.find("num_local_experts") == nullptr) {
        config.fail_missing(
            fmt::format("'num_local_experts' (model_type {} routes tokens to "
                        "experts)",
                        architecture.model_type));
      }
      check_experts_per_token(config, "num_local_experts", spec);
      spec.router_bias = architecture.model_type == "gpt_oss";
      return;
    case HfExperts::qwen:
      if (config.find("num_experts") == nullptr) {
        config.fail_missing("'num_experts' (Qwen-MoE routes tokens to experts)");
      }
      check_experts_per_token(config, "num_experts", spec);
      spec.moe_intermediate_size = config.positive_int("moe_intermediate_size");
      require_every_layer(config, "decoder_sparse_step");
      require_every_layer(config, "mlp_only_layers");
      if (config.find("shared_expert_intermediate_size") != nullptr) {
        spec.shared_expert_intermediate_size = config.count("shared_expert_intermediate_size");
        spec.shared_expert_gate = spec.shared_expert_intermediate_size > 0;
      }
      return;
    case HfExperts::deepseek:
      if (config.find("n_routed_experts") == nullptr) {
        config.fail_missing("'n_routed_experts' (DeepSeekMoE routes tokens to experts)");
      }
      check_experts_per_token(config, "n_routed_experts", spec);
      spec.moe_intermediate_size = config.positive_int("moe_intermediate_size");
      if (config.find("n_shared_experts") != nullptr) {
        spec.shared_expert_intermediate_size =
            config.count("n_shared_experts") * spec.moe_intermediate_size;
      }
      if (config.find("first_k_dense_replace") != nullptr) {
        spec.first_k_dense_replace = config.count("first_k_dense_replace");
        if (spec.first_k_dense_replace >= spec.num_layers) {
          config.fail("first_k_dense_replace",
                      fmt::format("expected fewer than num_hidden_layers ({}), got {}",
                                  spec.num_layers, spec.first_k_dense_replace));
        }
      }
      require_every_layer(config, "moe_layer_freq");
      // noaux_tc adds e_score_correction_bias, one value per routed expert, to the router.
      spec.router_bias =
          config.find("topk_method") != nullptr && config.text("topk_method") == "noaux_tc";
      if (config.find("n_group") != nullptr && config.find("topk_group") != nullptr &&
          config.positive_int("n_group") > 1) {
        spec.routing_groups = config.positive_int("n_group");
        spec.routing_groups_per_token = config.positive_int("topk_group");
      }
      return;
  }
}

// The layers per full-attention layer that `layer_types` spells out, when it repeats one: the
// windowed layers, then a full one (Gemma 2, gpt-oss: 2; Gemma 3: 6).
std::int64_t pattern_of_layer_types(const JsonDocument& config, std::int64_t layers) {
  const Json& types = *config.find("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != layers) {
    config.fail("layer_types", fmt::format("expected a list of {} layer types", layers));
  }
  std::int64_t pattern = 0;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    if (types[static_cast<std::size_t>(layer)] == "full_attention") {
      pattern = layer + 1;
      break;
    }
  }
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const bool full = pattern > 0 && (layer + 1) % pattern == 0;
    const Json& type = types[static_cast<std::size_t>(layer)];
    if (type != (full ? "full_attention" : "sliding_attention")) {
      config.fail("layer_types",
                  fmt::format("layer {} is {}: rsim models windowed layers with one full layer "
                              "every N (a repeating pattern)",
                              layer, type.dump()));
    }
  }
  return pattern;
}

void read_windows(const JsonDocument& config, const HfArchitecture& architecture,
                  TransformerSpec& spec) {
  const Json* window = config.find("sliding_window");
  if (window == nullptr || !config.boolean("use_sliding_window", true)) {
    return;
  }
  switch (architecture.windows) {
    case HfWindows::refused:
      if (window->is_number_integer() && window->get<std::int64_t>() > 0) {
        config.fail("sliding_window",
                    fmt::format("sliding-window attention (sliding_window: {}) is not modelled "
                                "yet; rsim will not import it as a different model",
                                window->dump()));
      }
      return;
    case HfWindows::every_layer:
      spec.sliding_window = config.positive_int("sliding_window");
      return;
    case HfWindows::alternating:
      spec.sliding_window = config.positive_int("sliding_window");
      if (config.find("layer_types") != nullptr) {
        spec.sliding_window_pattern = pattern_of_layer_types(config, spec.num_layers);
      } else if (config.find("sliding_window_pattern") != nullptr) {
        spec.sliding_window_pattern = config.positive_int("sliding_window_pattern");
      } else {
        spec.sliding_window_pattern = architecture.window_pattern;
      }
      return;
  }
}

void read_latent_attention(const JsonDocument& config, TransformerSpec& spec) {
  LatentAttention latent;
  latent.q_lora_rank = config.find("q_lora_rank") != nullptr ? config.count("q_lora_rank") : 0;
  for (const auto& [key, value] : {std::pair{"kv_lora_rank", &latent.kv_lora_rank},
                                   std::pair{"qk_nope_head_dim", &latent.qk_nope_head_dim},
                                   std::pair{"qk_rope_head_dim", &latent.qk_rope_head_dim},
                                   std::pair{"v_head_dim", &latent.v_head_dim}}) {
    if (config.find(key) == nullptr) {
      config.fail_missing(fmt::format("'{}' (multi-head latent attention)", key));
    }
    *value = config.positive_int(key);
  }
  // DeepseekV3Attention: K and V expanded for every head; config's head_dim (where written) is
  // the rotary width, not the query width.
  spec.head_dim = latent.qk_head_dim();
  spec.num_kv_heads = spec.num_heads;
  spec.latent_attention = latent;
}

// What the import approximates, said in the model YAML and in reports.
void add_notes(const JsonDocument& config, const HfArchitecture& architecture,
               TransformerSpec& spec) {
  if (const Json* mtp = config.find("num_nextn_predict_layers");
      mtp != nullptr && mtp->is_number_integer() && mtp->get<std::int64_t>() > 0) {
    spec.notes.push_back(fmt::format(
        "the multi-token-prediction module (num_nextn_predict_layers: {}) is left out, as in the "
        "published parameter total",
        mtp->dump()));
  }
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    if (config.find(key) != nullptr) {
      spec.notes.push_back(
          fmt::format("{} (a tanh per logit) is not costed: a few FLOPs per score", key));
    }
  }
  if (const Json* rotary = config.find("rotary_dim");
      rotary != nullptr && rotary->is_number_integer() && *rotary != spec.head_dim) {
    spec.notes.push_back(fmt::format(
        "RoPE on {} of each head's {} values (rotary_dim), costed as on all of them: a few "
        "FLOPs per element",
        rotary->dump(), spec.head_dim));
  }
  if (architecture.model_type == "gpt_oss") {
    spec.notes.push_back(
        "gpt-oss's clamped SwiGLU (alpha 1.702, swiglu_limit) is costed as a gated SiLU");
  }
  if (spec.moe()) {
    spec.notes.push_back("routed experts are costed evenly loaded (capacity factor 1)");
  }
}

}  // namespace

const HfArchitecture& find_hf_architecture(const JsonDocument& config) {
  if (config.find("model_type") == nullptr) {
    config.fail_missing(
        "'model_type' (rsim takes the MLP, norm and position embedding from it; write the model "
        "YAML by hand for a config without one)");
  }
  const std::string model_type = config.text("model_type");
  for (const HfArchitecture& architecture : kArchitectures) {
    if (architecture.model_type == model_type) {
      return architecture;
    }
  }
  std::vector<std::string_view> known;
  for (const HfArchitecture& architecture : kArchitectures) {
    known.push_back(architecture.model_type);
  }
  config.fail("model_type",
              fmt::format("unknown model_type \"{}\" (rsim knows {}); write the model YAML by hand "
                          "(docs/yaml.md \"Model\")",
                          model_type, fmt::join(known, ", ")));
}

void read_hf_family(const JsonDocument& config, const HfArchitecture& architecture,
                    TransformerSpec& spec) {
  read_experts(config, architecture, spec);
  read_windows(config, architecture, spec);
  if (architecture.latent_attention) {
    read_latent_attention(config, spec);
  }
  spec.post_norms = architecture.post_norms;
  spec.attention_sinks = architecture.attention_sinks;
  spec.parallel_residual = architecture.parallel_residual;
  spec.lm_head_bias = architecture.lm_head_bias;
  if (architecture.model_type == "opt") {
    read_opt(config, spec);
  }
  if (architecture.position_offset > 0 && spec.max_position_embeddings > 0) {
    spec.max_position_embeddings += architecture.position_offset;
    spec.notes.push_back(
        fmt::format("the position table keeps {} offset rows beyond "
                    "max_position_embeddings ({} rows)",
                    architecture.position_offset, spec.max_position_embeddings));
  }
  add_notes(config, architecture, spec);
}

}  // namespace rsim
