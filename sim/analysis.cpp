// SPDX-License-Identifier: MIT
#include "sim/analysis.hpp"

namespace rsim {

RunResult analyze(Scenario scenario, Roofs roofs) {
  OpGraph graph = build_graph(scenario);
  CostTable table = cost_graph(graph, roofs);
  std::vector<std::optional<CriticalBatch>> critical;
  critical.reserve(table.order.size());
  for (OpGraph::Vertex vertex : table.order) {
    critical.push_back(critical_token_batch(graph.op(vertex), roofs));
  }
  Bounds bounds = compute_bounds(graph, table);
  ParameterCount parameters = count_parameters(scenario.model);
  return RunResult{std::move(scenario), std::move(roofs),  std::move(graph), std::move(table),
                   std::move(critical), std::move(bounds), parameters};
}

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs) {
  Op op = make_matmul(shape);
  OpCost cost = cost_op(op, roofs);
  std::optional<CriticalBatch> critical = critical_token_batch(op, roofs);
  return MatmulResult{std::move(roofs), std::move(op), cost, critical};
}

}  // namespace rsim
