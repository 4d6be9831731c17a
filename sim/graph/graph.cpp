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

OpGraph::Vertex OpGraph::add_op(Op op) { return boost::add_vertex(std::move(op), *graph_); }

void OpGraph::add_edge(Vertex producer, Vertex consumer, std::string tensor) {
  boost::add_edge(producer, consumer, std::move(tensor), *graph_);
}

std::vector<OpGraph::Vertex> OpGraph::topological_order() const {
  std::vector<Vertex> reversed;
  boost::topological_sort(*graph_, std::back_inserter(reversed));
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace rsim
