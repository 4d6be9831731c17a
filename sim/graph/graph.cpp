// SPDX-License-Identifier: MIT
#include "sim/graph/graph.hpp"

#include <boost/graph/topological_sort.hpp>

#include <iterator>

namespace rsim {

OpGraph::OpGraph(const OpGraph& other)
    : stages(other.stages),
      graph_(other.graph_ ? std::make_unique<Graph>(*other.graph_) : std::make_unique<Graph>()) {}

OpGraph& OpGraph::operator=(const OpGraph& other) {
  OpGraph copy(other);  // whole or not at all: the copy may throw, the move may not
  *this = std::move(copy);
  return *this;
}

// Boost 1.74's add_vertex and add_edge take their property by const reference only: the op is
// moved into a default-constructed vertex instead of copied.
OpGraph::Vertex OpGraph::add_op(Op op) {
  const Vertex vertex = boost::add_vertex(*graph_);
  (*graph_)[vertex] = std::move(op);
  return vertex;
}

void OpGraph::add_edge(Vertex producer, Vertex consumer, const std::string& tensor) {
  boost::add_edge(producer, consumer, tensor, *graph_);
}

std::vector<OpGraph::Vertex> OpGraph::topological_order() const {
  std::vector<Vertex> reversed;
  boost::topological_sort(*graph_, std::back_inserter(reversed));
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace rsim
