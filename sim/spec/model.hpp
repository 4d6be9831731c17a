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

/// A stack of identical transformer blocks (pre-norm), keyed as in Hugging Face config.json.
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
  std::optional<VisionInput> vision;
  /// Mixture of experts (Mixtral): E expert MLPs of intermediate_size per block and a router
  /// [hidden_size, E]; each token runs its top-k experts. 0: a dense MLP.
  std::int64_t num_experts = 0;
  std::int64_t experts_per_token = 0;  ///< k (top-k routing); 0 for a dense MLP

  /// Query heads per KV head (G in the scaling book).
  [[nodiscard]] std::int64_t group_size() const { return num_heads / num_kv_heads; }
  [[nodiscard]] bool moe() const { return num_experts > 0; }
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

/// Parameters of one transformer block (attention, MLP or E experts and the router, its two norms).
std::int64_t block_parameters(const TransformerSpec& spec, const StageSpec* stage = nullptr);
/// Parameters of one MLP (one expert of an MoE block): gate/up and down, with their biases.
std::int64_t mlp_parameters(const TransformerSpec& spec);
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
