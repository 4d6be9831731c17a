// SPDX-License-Identifier: MIT
#pragma once
// The op-level types of the graph: tensors with named logical axes, ops and the collectives a
// plan inserts. Everything above the graph reads these; the graph itself is in graph.hpp.

#include "sim/base/dtype.hpp"
#include "sim/base/units.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

enum class CollectiveKind { all_gather, reduce_scatter, all_reduce, all_to_all, send_recv };
std::string_view to_string(CollectiveKind kind);
std::optional<CollectiveKind> parse_collective(std::string_view name);

/// One collective over one or more mesh axes of one network tier.
struct Collective {
  CollectiveKind kind = CollectiveKind::all_gather;
  /// V: the whole array — gathered (all-gather), unreduced input (reduce-scatter, all-reduce),
  /// every device's data together (all-to-all); the message (send/recv).
  Bytes bytes;
  std::vector<std::int64_t> axes;     ///< devices along each mesh axis the collective spans
  bool wraparound = true;             ///< torus: the axes have wraparound links
  bool in_network_reduction = false;  ///< use the switch's reduction (NVLink SHARP), if it has one
};

/// Why a plan inserted a collective: what the analysis and the searches look for, instead of
/// the op's name.
enum class CollectiveRole {
  none,                ///< not inserted by a plan (or not a collective)
  tensor,              ///< a tensor-parallel activation all-reduce / all-gather / reduce-scatter
  expert,              ///< an expert-parallel all-to-all (dispatch or combine)
  weight_gather,       ///< FSDP / ZeRO-3: gathering a weight before its use
  gradient_reduction,  ///< data parallel: reducing a weight gradient over the replicas
  pipeline_send,       ///< a pipeline stage boundary's send / receive
  sequence,            ///< a sequence / context-parallel exchange (K/V gathering)
};
std::string_view to_string(CollectiveRole role);

/// One named logical axis of a tensor: batch, seq, kv_seq, embed, heads, kv_heads, head_dim,
/// qkv_heads, gate_up, mlp, vocab, patch, cond, features; MoE blocks add router (one logit per
/// expert), topk, experts and expert_tokens (the rows each expert runs). The parallel plans shard
/// by these names.
struct Axis {
  std::string name;
  std::int64_t size = 1;
};

enum class TensorRole { activation, weight, kv_cache };
std::string_view to_string(TensorRole role);

/// A tensor an op reads or writes, with its logical shape and storage dtype.
struct Tensor {
  std::string name;
  std::vector<Axis> axes;
  DType dtype = DType::bf16;
  TensorRole role = TensorRole::activation;

  [[nodiscard]] std::int64_t elements() const;
  [[nodiscard]] Bytes bytes() const;  ///< elements × bytes per element
  [[nodiscard]] bool has_axis(std::string_view axis_name) const;
  /// "[batch=1, seq=968, embed=2048]"
  [[nodiscard]] std::string shape() const;
};

enum class OpKind { matmul, attention, elementwise, embedding_gather, kv_cache_write, collective };
std::string_view to_string(OpKind kind);

/// The pass of a training step an op belongs to (inference graphs are all forward).
enum class Pass { forward, recompute, backward, optimizer };
std::string_view to_string(Pass pass);

/// The part of a stage an op belongs to: the embedding (and the dense layers before the
/// transformer layers), the transformer layers, the head (final norm, dense layers after, LM
/// head). A training step's recompute, backward and optimizer ops keep their forward op's block
/// (so a pipeline splits them too); a plan's collectives keep their op's. `matmul` is the lone op
/// of a matmul probe; `none` an op no builder placed.
enum class Block { none, embed, layer, head, matmul };
/// "embed", "layer", "head", "matmul"; "" for none: the names in op names, reports and JSON.
std::string_view to_string(Block block);

/// The shape of one fused attention (FMHA: the scores stay on chip): queries of this stage against
/// keys of this stage plus any cache.
struct AttentionShape {
  AttentionMask mask = AttentionMask::causal;
  std::int64_t batch = 0;           ///< sequences
  std::int64_t query_tokens = 0;    ///< tokens of this stage
  std::int64_t cached_tokens = 0;   ///< tokens of an earlier stage read from the KV cache
  std::int64_t heads = 0;           ///< query heads
  std::int64_t head_dim = 0;        ///< per head: Q and K
  std::int64_t value_head_dim = 0;  ///< per head: V and O; 0: head_dim (MLA: its own)
  /// Causal sliding window: a query sees at most this many keys, itself included. 0: all.
  std::int64_t window = 0;
  double flops_scale = 1.0;  ///< a backward pass's FLOPs over the forward's (FlashAttention-2: 2.5)
  /// Key/value tokens each query can see: cached + this stage's.
  [[nodiscard]] std::int64_t kv_tokens() const { return cached_tokens + query_tokens; }
  [[nodiscard]] std::int64_t value_dim() const {
    return value_head_dim > 0 ? value_head_dim : head_dim;
  }
};

/// One operation of the graph. Identical ops (the same op in each of L layers, in each of S
/// steps) are one Op with count = L·S: costed once, multiplied (keeps rsim fast).
struct Op {
  std::string name;           ///< e.g. "qkv_proj"
  std::string stage;          ///< e.g. "prefix"
  Block block = Block::none;  ///< embed, layer or head
  std::int64_t count = 1;
  OpKind kind = OpKind::elementwise;
  Pass pass = Pass::forward;
  /// Instances whose outputs are summed locally before one reduction: a weight gradient over the
  /// microbatches of a step, so its data-parallel reduction runs count / accumulated times.
  std::int64_t accumulated = 1;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::string compute_path;  ///< matmuls: the precision's path; elementwise: the vector path
  std::string group;         ///< matmuls: attention, mlp, modulation, dense, ... (matmul_groups)
  // Elementwise ops.
  ElementwiseKind elementwise = ElementwiseKind::norm;
  double flops_per_element = 0.0;  ///< per output element (see graph.cpp for each value's origin)
  bool fused = false;              ///< fused into a matmul: no DRAM traffic of its own
  // Attention ops.
  AttentionShape attention;
  // Collective ops (inserted by a parallel plan).
  Collective collective;
  CollectiveRole role = CollectiveRole::none;  ///< why the plan inserted it
  std::string network;                         ///< the network tier the collective runs on
  std::string mesh_axis;                       ///< the plan's mesh axis the collective spans

  /// "prefix/layer/qkv_proj"
  [[nodiscard]] std::string qualified_name() const;
};

}  // namespace rsim
