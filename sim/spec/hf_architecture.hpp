// SPDX-License-Identifier: MIT
#pragma once
// What a Hugging Face config.json leaves to the modelling code of its model_type (transformers
// models/<type>/modeling_<type>.py and configuration_<type>.py): rsim's table of model types,
// and the family features (experts, windows, latent attention) read from a config.

#include "sim/spec/json_document.hpp"
#include "sim/spec/model.hpp"

#include <cstdint>
#include <string_view>

namespace rsim {

/// How a model type routes tokens to experts, and under which keys.
enum class HfExperts {
  none,      ///< a dense MLP
  local,     ///< num_local_experts MLPs of intermediate_size (Mixtral, gpt-oss)
  qwen,      ///< num_experts of moe_intermediate_size, a gated shared expert (Qwen2-MoE, Qwen3-MoE)
  deepseek,  ///< n_routed_experts, n_shared_experts, dense first layers, groups (DeepSeek-V3)
};

/// How a model type uses a config's sliding_window.
enum class HfWindows {
  refused,      ///< a set window is refused unless use_sliding_window is false (Qwen2)
  every_layer,  ///< every layer (MistralAttention, Phi3Attention)
  alternating,  ///< one full layer per pattern (layer_types, sliding_window_pattern)
};

struct HfArchitecture {
  std::string_view model_type = {};
  bool gated_mlp = true;
  NormKind norm = NormKind::rmsnorm;
  PositionEmbedding position = PositionEmbedding::rope;
  bool tied_by_default = false;  ///< the config class's tie_word_embeddings default
  bool attention_bias = false;   ///< used when the config has no attention_bias key
  bool mlp_bias = false;         ///< used when the config has no mlp_bias key
  /// MLP width as a multiple of hidden_size when intermediate_size is absent or null (0: required).
  std::int64_t default_ffn_multiple = 0;
  HfExperts experts = HfExperts::none;
  /// Q, K and V carry biases whatever attention_bias says (Qwen2Attention: bias=True on
  /// q_proj/k_proj/v_proj, bias=False on o_proj).
  bool qkv_bias = false;
  bool qk_norm = false;  ///< q_norm / k_norm RMSNorms over head_dim (Qwen3Attention)
  HfWindows windows = HfWindows::refused;
  std::int64_t window_pattern = 0;  ///< alternating: layers per full one, when the config is silent
  bool post_norms = false;          ///< Gemma 2/3's four norms per block
  bool attention_sinks = false;     ///< gpt-oss's per-head sinks
  bool latent_attention = false;    ///< DeepSeek's MLA keys
  bool parallel_residual = false;   ///< one norm feeds attention and MLP (GPTJBlock)
  bool lm_head_bias = false;        ///< GPT-J's biased lm_head
  /// The MLP width's key where it is not intermediate_size / n_inner (OPT: ffn_dim).
  std::string_view intermediate_key = {};
  /// Rows of a learned position table beyond max_position_embeddings (OPT's offset of 2).
  std::int64_t position_offset = 0;
};

/// The row of config's model_type; unknown and unmodelled types are ConfigErrors at the key.
const HfArchitecture& find_hf_architecture(const JsonDocument& config);

/// Reads the experts, the windows and the latent attention of a config into `spec` (whose sizes
/// are already read), and refuses what the model type's code has but rsim does not model.
void read_hf_family(const JsonDocument& config, const HfArchitecture& architecture,
                    TransformerSpec& spec);

}  // namespace rsim
