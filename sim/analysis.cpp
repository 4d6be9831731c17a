// SPDX-License-Identifier: MIT
#include "sim/analysis.hpp"

#include <algorithm>

namespace rsim {
namespace {

std::vector<GroupCritical> group_criticals(const OpGraph& graph, const CostTable& table,
                                           const Roofs& roofs) {
  std::vector<GroupCritical> result;
  for (const OpGraph::Stage& stage : graph.stages) {
    for (std::string_view group : matmul_groups()) {
      std::vector<const Op*> ops;
      for (OpGraph::Vertex vertex : table.order) {
        const Op& op = graph.op(vertex);
        if (op.kind == OpKind::matmul && op.stage == stage.name && op.group == group) {
          ops.push_back(&op);
        }
      }
      if (!ops.empty()) {
        result.push_back({stage.name, std::string(group), critical_token_batch(ops, roofs)});
      }
    }
  }
  return result;
}

// Weights: every parameter once in the weight dtype; a per-batch group holds `batch` copies,
// which its graph tensors already carry (their batch axis), so add the difference. KV cache: the
// cache writes of one run of each stage (count / steps = layers).
Footprint footprint(const Scenario& scenario, const OpGraph& graph, const ParameterCount& count) {
  Footprint result;
  result.weights =
      Bytes(static_cast<double>(count.total()) * bytes_per_element(scenario.precision.weights));
  for (const OpGraph::Stage& stage : graph.stages) {
    for (OpGraph::Vertex vertex : graph.topological_order()) {
      const Op& op = graph.op(vertex);
      if (op.stage != stage.name) {
        continue;
      }
      const double runs = static_cast<double>(op.count) / static_cast<double>(stage.steps);
      if (op.kind == OpKind::kv_cache_write) {
        for (const Tensor& tensor : op.outputs) {
          result.kv_cache += tensor.bytes() * runs;
        }
      }
      const auto& per_batch = scenario.per_batch_weights;
      if (op.kind == OpKind::matmul &&
          std::find(per_batch.begin(), per_batch.end(), op.group) != per_batch.end()) {
        for (const Tensor& tensor : op.inputs) {
          if (tensor.role == TensorRole::weight) {
            const auto copies = static_cast<double>(tensor.axes.front().size);
            result.weights += tensor.bytes() * (runs * (1.0 - 1.0 / copies));
          }
        }
      }
    }
  }
  return result;
}

}  // namespace

Roofs scenario_roofs(const Scenario& scenario, std::string_view mode, const RoofOverrides& extra) {
  RoofOverrides overrides = scenario.roof_overrides;
  overrides.peaks.insert(overrides.peaks.end(), extra.peaks.begin(), extra.peaks.end());
  overrides.bandwidths.insert(overrides.bandwidths.end(), extra.bandwidths.begin(),
                              extra.bandwidths.end());
  return resolve_roofs(scenario.hardware, mode.empty() ? std::string_view(scenario.mode) : mode,
                       overrides);
}

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
  std::vector<GroupCritical> groups = group_criticals(graph, table, roofs);
  const Footprint memory = footprint(scenario, graph, parameters);
  return RunResult{std::move(scenario), std::move(roofs),    std::move(graph),
                   std::move(table),    std::move(critical), std::move(bounds),
                   parameters,          std::move(groups),   memory};
}

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs) {
  Op op = make_matmul(shape);
  OpCost cost = cost_op(op, roofs);
  std::optional<CriticalBatch> critical = critical_token_batch(op, roofs);
  return MatmulResult{std::move(roofs), std::move(op), cost, critical};
}

}  // namespace rsim
