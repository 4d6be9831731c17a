// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/dtype.hpp"
#include "sim/base/units.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

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

/// The shape of one fused attention (FMHA: the scores stay on chip): queries of this stage against
/// keys of this stage plus any cache.
struct AttentionShape {
  AttentionMask mask = AttentionMask::causal;
  std::int64_t batch = 0;          ///< sequences
  std::int64_t query_tokens = 0;   ///< tokens of this stage
  std::int64_t cached_tokens = 0;  ///< tokens of an earlier stage read from the KV cache
  std::int64_t heads = 0;          ///< query heads
  std::int64_t head_dim = 0;
  double flops_scale = 1.0;  ///< a backward pass's FLOPs over the forward's (FlashAttention-2: 2.5)
  /// Key/value tokens each query can see: cached + this stage's.
  [[nodiscard]] std::int64_t kv_tokens() const { return cached_tokens + query_tokens; }
};

/// One operation of the graph. Identical ops (the same op in each of L layers, in each of S
/// steps) are one Op with count = L·S: costed once, multiplied (keeps rsim fast).
struct Op {
  std::string name;   ///< e.g. "qkv_proj"
  std::string stage;  ///< e.g. "prefix"
  std::string block;  ///< "embed", "layer", "head" or "optimizer"
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
  std::string network;    ///< the network tier the collective runs on
  std::string mesh_axis;  ///< the plan's mesh axis the collective spans

  /// "prefix/layer/qkv_proj"
  [[nodiscard]] std::string qualified_name() const;
};

/// The op graph: a DAG of ops whose edges carry tensors from producer to consumer.
class OpGraph {
 public:
  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op, std::string>;
  using Vertex = Graph::vertex_descriptor;

  OpGraph() = default;
  /// Copies every op and edge.
  OpGraph(const OpGraph& other);
  OpGraph& operator=(const OpGraph& other);
  /// Hands the ops over without copying them (Boost 1.74's adjacency_list has no move, and its
  /// swap copies too); a moved-from graph may only be assigned to, copied (as an empty graph)
  /// or destroyed.
  OpGraph(OpGraph&& other) noexcept = default;
  OpGraph& operator=(OpGraph&& other) noexcept = default;
  ~OpGraph() = default;

  Vertex add_op(Op op);
  void add_edge(Vertex producer, Vertex consumer, std::string tensor);
  [[nodiscard]] const Op& op(Vertex vertex) const { return (*graph_)[vertex]; }
  [[nodiscard]] Op& mutable_op(Vertex vertex) { return (*graph_)[vertex]; }
  [[nodiscard]] std::size_t size() const { return boost::num_vertices(*graph_); }
  [[nodiscard]] std::size_t edge_count() const { return boost::num_edges(*graph_); }
  /// Ops in a topological order (producers before consumers; ties in insertion order).
  [[nodiscard]] std::vector<Vertex> topological_order() const;
  [[nodiscard]] const Graph& graph() const { return *graph_; }
  /// A stage of the graph, in the order the model runs them.
  struct Stage {
    std::string name;
    std::int64_t steps = 1;            ///< runs per inference (π0.5's denoising steps)
    std::int64_t layers = 1;           ///< transformer blocks per run
    std::int64_t context = 0;          ///< tokens already in its own KV cache (decode)
    std::int64_t experts = 0;          ///< E of an MoE stack (its expert weights stored); 0: dense
    std::int64_t microbatches = 1;     ///< a training step's microbatches
    std::int64_t pipeline_chunks = 1;  ///< layer chunks per pipeline stage (interleaving)
  };
  std::vector<Stage> stages;

 private:
  std::unique_ptr<Graph> graph_ = std::make_unique<Graph>();
};

/// Builds the op graph of a scenario's model for its workload, precision and fusion.
OpGraph build_graph(const Scenario& scenario);

/// One X·W matmul on one device, X[batch=B, embed=D] · W[embed=D, mlp=F] → [batch, mlp]; with
/// per-batch weights W is [batch=B, embed=D, mlp=F] (scaling book roofline Q4).
struct MatmulShape {
  std::int64_t batch = 1;
  std::int64_t contract = 1;
  std::int64_t out = 1;
  DType input = DType::bf16;
  DType weights = DType::bf16;
  DType output = DType::bf16;
  std::string compute_path;
  bool per_batch_weights = false;
};
Op make_matmul(const MatmulShape& shape);

}  // namespace rsim
