// SPDX-License-Identifier: MIT
#pragma once
// Builds the ops of one stage of a model (transformer.hpp's build_forward_graph runs one per
// stage). Its parts: stage_builder.cpp (embedding, norms, dense layers, the layer, the head),
// attention_block.cpp (attention), latent_attention.cpp (DeepSeek's MLA) and mlp_block.cpp
// (dense and expert MLPs).

#include "sim/graph/graph.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// Builds the ops of one stage. Each op is added once per repeated structure with its count:
/// ops every layer runs once with the stage's runs × layers, ops of some layers (windowed
/// attention, the dense MLP of DeepSeek's first layers) with theirs.
class StageBuilder {
 public:
  StageBuilder(const Scenario& scenario, const StageSpec& stage, OpGraph& graph);

  /// Adds every op of the stage; returns its last op, which later stages depend on.
  OpGraph::Vertex build(std::optional<OpGraph::Vertex> upstream);

  /// The vertex whose output K/V a later stage reads (the cache write of this stage).
  [[nodiscard]] std::optional<OpGraph::Vertex> kv_writer() const { return kv_writer_; }

  void set_cache_source(OpGraph::Vertex writer) { cache_source_ = writer; }

 private:
  // stage_builder.cpp
  [[nodiscard]] const Precision& precision() const { return scenario_.precision; }
  [[nodiscard]] Axis batch() const { return {"batch", batch_}; }
  [[nodiscard]] Axis seq(std::int64_t tokens) const { return {"seq", tokens}; }
  [[nodiscard]] Axis embed() const { return {"embed", spec_.hidden_size}; }
  [[nodiscard]] Tensor activation(std::string name, std::vector<Axis> axes) const;
  [[nodiscard]] Tensor weight(std::string name, std::vector<Axis> axes) const;
  OpGraph::Vertex add(Op op, const std::vector<OpGraph::Vertex>& producers);
  /// Inference on a narrower compute path (FP8, INT8, FP4) than the activations: the GEMM
  /// reads X in its own type, so X is cast first; nullopt when `op` needs no cast.
  [[nodiscard]] std::optional<DType> input_cast(const Op& op) const;
  /// The cast of `op`'s X (added once for the GEMMs that read the same X from the same
  /// producers); `op` then reads the cast X.
  OpGraph::Vertex add_input_cast(Op& op, DType path, const std::vector<OpGraph::Vertex>& producers);
  [[nodiscard]] std::vector<OpGraph::Vertex> previous() const;
  [[nodiscard]] Op matmul(std::string name, std::string_view group, Tensor input,
                          Tensor weight_tensor, std::vector<Axis> out_axes,
                          std::int64_t bias_features) const;
  [[nodiscard]] Op elementwise(std::string name, ElementwiseKind kind, double flops_per_element,
                               std::vector<Tensor> inputs, Tensor output) const;
  /// This pass's K/V (or MLA latents) written to the cache a later step or stage reads.
  [[nodiscard]] Op kv_cache_write(std::vector<Tensor> inputs, std::vector<Tensor> outputs) const;
  void add_embedding();
  void add_dense(const DenseLayer& layer);
  void add_norm(const std::string& name);
  /// A norm over `width` features of each token (MLA's latent norms).
  void add_feature_norm(const std::string& name, const Axis& features,
                        const std::vector<OpGraph::Vertex>& producers);
  void add_residual(const std::string& name, OpGraph::Vertex skip_source);
  void add_layer();
  void add_lm_head();
  /// Layers that run what is being added: the stage's runs × `layers`.
  void set_layers(std::int64_t layers) { count_ = runs_ * layers; }

  // attention_block.cpp
  void add_attention_block();
  /// The attention op(s) after Q and K/V: windowed and full layers each get their own.
  void add_attention_ops(const std::vector<Axis>& q_axes, const Tensor& kv,
                         std::vector<OpGraph::Vertex> producers);
  void add_fused_attention(const std::string& name, bool windowed, const std::vector<Axis>& q_axes,
                           const Tensor& kv, const std::vector<OpGraph::Vertex>& producers);
  void add_unfused_attention(const std::string& prefix, bool windowed, DType kv_dtype,
                             TensorRole kv_role, const std::vector<OpGraph::Vertex>& producers);
  // latent_attention.cpp
  void add_latent_attention_block();
  /// Keys already in a KV cache for a layer (windowed or not).
  [[nodiscard]] std::int64_t cached_tokens(bool windowed) const;

  // mlp_block.cpp
  void add_mlp_block(const std::string& prefix);
  void add_moe_block(const std::string& prefix);
  OpGraph::Vertex add_mlp(const std::string& prefix, std::int64_t width,
                          const std::vector<OpGraph::Vertex>& producers);
  OpGraph::Vertex add_shared_experts(const std::vector<Axis>& token_axes, OpGraph::Vertex normed);

  const Scenario& scenario_;
  const StageSpec& stage_;
  const TransformerSpec& spec_;
  OpGraph& graph_;
  std::int64_t batch_;
  std::int64_t runs_;  // runs of the stage: its steps × a training step's microbatches
  Block block_ = Block::none;
  std::int64_t count_ = 1;
  std::optional<OpGraph::Vertex> upstream_;
  std::optional<OpGraph::Vertex> last_;
  std::optional<OpGraph::Vertex> kv_writer_;
  std::optional<OpGraph::Vertex> cache_source_;
  struct InputCast {
    std::string tensor;
    std::vector<OpGraph::Vertex> producers;
    OpGraph::Vertex vertex;
  };
  std::vector<InputCast> input_casts_;
};

}  // namespace rsim
