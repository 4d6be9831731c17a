// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/op.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

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
  void add_edge(Vertex producer, Vertex consumer, const std::string& tensor);
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

}  // namespace rsim
