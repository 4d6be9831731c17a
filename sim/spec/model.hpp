// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

class ConfigFiles;
class ConfigNode;

enum class Activation { gelu, gelu_tanh, silu, relu };
enum class NormKind { rmsnorm, layernorm };
enum class PositionEmbedding { rope, learned, none };
enum class AttentionMask { causal, bidirectional };

std::string_view to_string(Activation activation);
std::string_view to_string(NormKind norm);
std::string_view to_string(PositionEmbedding position);
std::string_view to_string(AttentionMask mask);

/// A vision front end: the image is cut into patches, each patch embedded by a linear layer.
struct VisionInput {
  std::int64_t image_size = 0;  ///< pixels per side
  std::int64_t patch_size = 0;  ///< pixels per patch side
  std::int64_t num_channels = 3;
  /// Tokens per image: (image_size / patch_size)².
  [[nodiscard]] std::int64_t tokens() const {
    const std::int64_t side = image_size / patch_size;
    return side * side;
  }
};

/// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1.2–2.1.3; DeepSeek-V3): K and
/// V are up-projected from a per-token latent of kv_lora_rank values, and RoPE runs on a separate
/// qk_rope_head_dim part of each query and on one key part shared by all heads. The KV cache keeps
/// the latent and that rotary key: kv_lora_rank + qk_rope_head_dim values per token and layer.
struct LatentAttention {
  std::int64_t q_lora_rank = 0;  ///< 0: a full-rank q_proj (DeepSeek-V2-Lite)
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  /// Query and key width per head: the position-free part and the rotary part.
  [[nodiscard]] std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  /// Values cached per token and layer.
  [[nodiscard]] std::int64_t cache_values() const { return kv_lora_rank + qk_rope_head_dim; }
};

/// A stack of transformer blocks (pre-norm), keyed as in Hugging Face config.json. The blocks
/// share their attention; they may differ in their MLP (DeepSeek's first dense layers) and in
/// their attention span (Gemma 2/3's alternating local and global layers).
struct TransformerSpec {
  std::string name;
  std::string source;
  std::string file;
  bool decoder = true;  ///< decoder (causal by default) or encoder (bidirectional)
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate_size = 0;
  Activation activation = Activation::gelu;
  bool gated_mlp = false;
  NormKind norm = NormKind::rmsnorm;
  std::int64_t vocab_size = 0;  ///< 0: no token embedding
  /// The model file's vocabulary before a plan padded it (Plan::vocab_padding); 0: not padded.
  std::int64_t unpadded_vocab_size = 0;
  bool tied_embeddings = false;
  bool attention_bias = false;  ///< a bias on the output projection (o_proj)
  bool qkv_bias = false;  ///< biases on Q, K and V (Llama's attention_bias: all four; Qwen2: these)
  /// An RMSNorm over each query and key head before RoPE, weights of head_dim (Qwen3, OLMo 2).
  bool qk_norm = false;
  bool mlp_bias = false;
  PositionEmbedding position = PositionEmbedding::rope;
  std::int64_t max_position_embeddings = 0;  ///< learned positions only
  /// Sliding-window attention on every layer (Mistral 7B v0.1, Phi-3-mini): a query sees the
  /// last `sliding_window` keys, itself included, and the KV cache keeps that many. 0: all keys.
  std::int64_t sliding_window = 0;
  /// With a sliding_window: one layer in every N attends to all keys, the last of each N (Gemma
  /// 3's sliding_window_pattern; Gemma 2 and gpt-oss alternate, N = 2). 0: every layer windowed.
  std::int64_t sliding_window_pattern = 0;
  /// An RMSNorm on each branch's output before its residual add (Gemma 2/3's
  /// post_attention_layernorm and post_feedforward_layernorm): four norms per block.
  bool post_norms = false;
  /// A learned logit per head that joins each softmax's denominator (gpt-oss's sinks).
  bool attention_sinks = false;
  /// Attention and MLP read one norm's output and add to the residual side by side: one norm
  /// per block (GPT-J's ln_1).
  bool parallel_residual = false;
  bool lm_head_bias = false;  ///< a bias on the vocabulary projection (GPT-J)
  /// Dropout probability on the attention probabilities in training (Megatron-LM's
  /// --attention-dropout, default 0.1; Hugging Face attention_dropout): an unfused attention
  /// writes the dropped probabilities and a 1-byte mask (a fused one draws it on chip).
  double attention_dropout = 0.0;
  std::optional<LatentAttention> latent_attention;
  std::optional<VisionInput> vision;
  /// Mixture of experts (Mixtral): E expert MLPs per block and a router [hidden_size, E]; each
  /// token runs its top-k experts. 0: a dense MLP.
  std::int64_t num_experts = 0;
  std::int64_t experts_per_token = 0;  ///< k (top-k routing); 0 for a dense MLP
  /// Each expert's MLP width (DeepSeek, Qwen-MoE); 0: intermediate_size.
  std::int64_t moe_intermediate_size = 0;
  /// Width of the shared experts every token runs beside its routed ones (DeepSeekMoE:
  /// n_shared_experts × moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size). 0:
  /// none.
  std::int64_t shared_expert_intermediate_size = 0;
  bool shared_expert_gate = false;  ///< a sigmoid gate [hidden_size, 1] on it (Qwen2-MoE)
  /// The first k layers keep a dense MLP of intermediate_size (DeepSeek-V3: 3 of 61).
  std::int64_t first_k_dense_replace = 0;
  bool router_bias = false;  ///< a bias per expert on the router (gpt-oss; DeepSeek-V3's
                             ///< e_score_correction_bias)
  /// Grouped routing (DeepSeek-V3's n_group / topk_group): each token picks its experts among
  /// the experts of its best routing_groups_per_token of routing_groups groups. 0: no groups.
  std::int64_t routing_groups = 0;
  std::int64_t routing_groups_per_token = 0;
  /// What the model file approximates (an import names them; reports repeat them).
  std::vector<std::string> notes;

  /// Query heads per KV head (G in the scaling book).
  [[nodiscard]] std::int64_t group_size() const { return num_heads / num_kv_heads; }
  [[nodiscard]] bool moe() const { return num_experts > 0; }
  /// Layers whose MLP is a mixture of experts, and those with a dense MLP.
  [[nodiscard]] std::int64_t moe_layers() const {
    return moe() ? num_layers - first_k_dense_replace : 0;
  }
  [[nodiscard]] std::int64_t dense_layers() const { return num_layers - moe_layers(); }
  [[nodiscard]] std::int64_t expert_intermediate_size() const {
    return moe_intermediate_size > 0 ? moe_intermediate_size : intermediate_size;
  }
  /// Layers that attend within the sliding window, and those that see every key.
  [[nodiscard]] std::int64_t windowed_layers() const {
    return num_layers - full_attention_layers();
  }
  [[nodiscard]] std::int64_t full_attention_layers() const {
    if (sliding_window == 0) {
      return num_layers;
    }
    return sliding_window_pattern > 1 ? num_layers / sliding_window_pattern : 0;
  }
};

/// A dense layer outside the transformer blocks (projector, time MLP, action in/out).
struct DenseLayer {
  std::string name;
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool bias = false;
  bool per_sequence = false;  ///< runs on one row per sequence, not on every token
  std::optional<Activation> activation;
};

/// How many rows of a stage the vocabulary projection (LM head) runs on.
enum class LmHead { none, last_token, all_tokens };

/// One stage of a (possibly composite) model: a transformer stack run on some tokens.
struct StageSpec {
  std::string name;
  TransformerSpec component;
  std::int64_t tokens = 0;           ///< tokens per sequence (per image for vision stages)
  std::int64_t images = 1;           ///< images per sequence; multiplies the batch
  std::int64_t embedded_tokens = 0;  ///< tokens looked up in the embedding table
  std::int64_t steps = 1;            ///< times the stage runs per inference (denoising steps)
  std::int64_t context = 0;          ///< tokens already in its own KV cache (a decode step)
  AttentionMask attention = AttentionMask::causal;
  std::string attends_to;        ///< an earlier stage whose cached K/V this stage also reads
  bool writes_kv_cache = false;  ///< a later stage attends to this one
  bool adaptive_norm = false;    ///< adaRMSNorm: Dense(condition → 3·width) per norm
  std::int64_t condition_width = 0;
  LmHead lm_head = LmHead::none;
  std::vector<DenseLayer> pre;
  std::vector<DenseLayer> post;
};

/// A model: one stage for a plain transformer, several for a composite such as π0.5.
struct ModelSpec {
  std::string name;
  std::string source;
  std::string file;
  bool composite = false;  ///< stage lengths are fixed by the model, not by the workload
  std::vector<StageSpec> stages;

  [[nodiscard]] const StageSpec* find_stage(std::string_view name) const;
};

/// Parameter counts by part; all in parameters (elements), not bytes.
struct ParameterCount {
  std::int64_t embedding = 0;  ///< token, patch and position embeddings
  std::int64_t layers = 0;     ///< all transformer blocks
  std::int64_t final_norm = 0;
  std::int64_t lm_head = 0;  ///< untied vocabulary projection only
  std::int64_t extra = 0;    ///< dense layers outside the blocks
  /// Of `layers`: the expert MLPs a token does not run, (E − k) per MoE block (0 when dense).
  std::int64_t inactive_experts = 0;
  [[nodiscard]] std::int64_t total() const {
    return embedding + layers + final_norm + lm_head + extra;
  }
  /// Parameters one token uses: all but the experts it is not routed to (Mixtral: "12.9B active").
  [[nodiscard]] std::int64_t active() const { return total() - inactive_experts; }
};

/// Parameters of one block's attention: the projections, their biases, Q/K norms and sinks.
std::int64_t attention_parameters(const TransformerSpec& spec);
/// Parameters of one MLP of `width`: gate/up and down, with their biases.
std::int64_t mlp_parameters(const TransformerSpec& spec, std::int64_t width);
/// Parameters of one mixture-of-experts block: E experts, the shared experts and the router.
std::int64_t moe_parameters(const TransformerSpec& spec);
ParameterCount count_parameters(const TransformerSpec& spec);
ParameterCount count_parameters(const StageSpec& stage);
ParameterCount count_parameters(const ModelSpec& model);

/// Builds a TransformerSpec from a parsed component document.
TransformerSpec parse_transformer(const ConfigNode& document);
/// `attention: causal | bidirectional`.
AttentionMask parse_attention_mask(const ConfigNode& node);
/// `activation: gelu | gelu_tanh | silu | relu`.
Activation parse_activation(const ConfigNode& node);

}  // namespace rsim
