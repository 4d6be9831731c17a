// SPDX-License-Identifier: MIT
#include "sim/bounds.hpp"

#include <algorithm>

namespace rsim {
namespace {

// Totals of the rows selected by `mask` (1 = included).
Totals sum_rows(const CostTable& table, const Eigen::ArrayXd& mask) {
  const Eigen::ArrayXd weight = table.counts * mask;
  const Eigen::ArrayXd t_math = table.times.col(CostTable::kMathColumn);
  const Eigen::ArrayXd t_mem = table.times.col(CostTable::kMemoryColumn);
  const Eigen::ArrayXd t_net = table.times.col(CostTable::kNetworkColumn);
  Totals totals;
  totals.t_math = Seconds((t_math * weight).sum());
  totals.t_mem = Seconds((t_mem * weight).sum());
  totals.t_net = Seconds((t_net * weight).sum());
  totals.t_lower = Seconds((table.times.rowwise().maxCoeff() * weight).sum());
  totals.t_upper = Seconds((table.times.rowwise().sum() * weight).sum());
  totals.t_overlapped = std::max({totals.t_math, totals.t_mem, totals.t_net});
  totals.bound = totals.t_net > std::max(totals.t_math, totals.t_mem) ? Bound::network
                 : totals.t_math > totals.t_mem                       ? Bound::compute
                                                                      : Bound::memory;
  for (std::size_t row = 0; row < table.costs.size(); ++row) {
    const double count = weight(static_cast<Eigen::Index>(row));
    totals.flops += table.costs[row].flops * count;
    totals.bytes += table.costs[row].bytes * count;
  }
  return totals;
}

template <class Predicate>
Eigen::ArrayXd select(const OpGraph& graph, const CostTable& table, Predicate predicate) {
  Eigen::ArrayXd mask(static_cast<Eigen::Index>(table.order.size()));
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    mask(static_cast<Eigen::Index>(row)) = predicate(graph.op(table.order[row])) ? 1.0 : 0.0;
  }
  return mask;
}

}  // namespace

Bounds compute_bounds(const OpGraph& graph, const CostTable& table) {
  Bounds bounds;
  bounds.total =
      sum_rows(table, Eigen::ArrayXd::Ones(static_cast<Eigen::Index>(table.order.size())));
  for (const OpGraph::Stage& graph_stage : graph.stages) {
    const std::string& stage = graph_stage.name;
    const std::int64_t steps = graph_stage.steps;
    bounds.stages.push_back(
        {stage, "", steps,
         sum_rows(table, select(graph, table, [&](const Op& op) { return op.stage == stage; }))});
    for (const char* block : {"embed", "layer", "head"}) {
      const Eigen::ArrayXd mask = select(
          graph, table, [&](const Op& op) { return op.stage == stage && op.block == block; });
      if (mask.sum() > 0.0) {
        bounds.blocks.push_back({stage, block, steps, sum_rows(table, mask)});
      }
    }
  }
  return bounds;
}

}  // namespace rsim
