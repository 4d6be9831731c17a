// SPDX-License-Identifier: MIT
#include "sim/analysis/bounds.hpp"

#include <algorithm>
#include <span>

namespace rsim {
namespace {

// memory_side by index into t_by_tier (t_by_tier.size() where there are no tiers): the first
// tier whose time exceeds T_mem and every earlier one's, with that time; else the first tier
// (main memory) with T_mem.
std::pair<std::size_t, Seconds> memory_side_tier(const Totals& totals) {
  std::pair<std::size_t, Seconds> side{0, totals.t_mem};
  for (std::size_t tier = 0; tier < totals.t_by_tier.size(); ++tier) {
    if (totals.t_by_tier[tier].second > side.second) {
      side = {tier, totals.t_by_tier[tier].second};
    }
  }
  return side;
}

// Zero per-tier sums named after the table's tiers (their names kept where they already are: a
// sweep's totals, point after point). A table of no rows has none.
template <typename Value>
void zero_tiers(const CostTable& table, std::vector<std::pair<std::string, Value>>& sums) {
  const std::span<const std::string> names =
      table.order.empty() ? std::span<const std::string>() : std::span(table.tier_names);
  const bool named =
      sums.size() == names.size() &&
      std::equal(names.begin(), names.end(), sums.begin(),
                 [](const std::string& name, const auto& entry) { return name == entry.first; });
  if (!named) {
    sums.clear();
    for (const std::string& name : names) {
      sums.emplace_back(name, Value(0.0));
    }
    return;
  }
  for (auto& entry : sums) {
    entry.second = Value(0.0);
  }
}

// The time sums of the rows weighted by `weight` (their counts, times a 0/1 mask for a
// selection), from the table's times alone, into `totals` (its vectors' storage reused). Eigen
// expressions throughout: a sweep's point allocates nothing here.
template <typename Weight>
void sum_times(const CostTable& table, const Weight& weight, Totals& totals) {
  const auto t_math = table.times.col(CostTable::kMathColumn);
  const auto t_mem = table.times.col(CostTable::kMemoryColumn);
  const auto t_net = table.times.col(CostTable::kNetworkColumn);
  totals.t_critical = Seconds(0.0);
  totals.t_math = Seconds((t_math * weight).sum());
  totals.t_mem = Seconds((t_mem * weight).sum());
  totals.t_net = Seconds((t_net * weight).sum());
  totals.t_lower = Seconds((table.times.rowwise().maxCoeff() * weight).sum());
  totals.t_upper = Seconds((table.times.rowwise().sum() * weight).sum());
  totals.t_expected = Seconds((table.expected * weight).sum());
  zero_tiers(table, totals.t_by_tier);
  // Tier by tier down its column (each sum still adds the rows in order).
  const auto rows = static_cast<Eigen::Index>(table.order.size());
  const std::size_t tiers = totals.t_by_tier.size();
  for (std::size_t tier = 0; tier < tiers; ++tier) {
    const auto column = table.times.col(CostTable::tier_column(tier));
    Seconds sum = totals.t_by_tier[tier].second;
    for (Eigen::Index row = 0; row < rows; ++row) {
      sum += Seconds(column(row)) * weight(row);
    }
    totals.t_by_tier[tier].second = sum;
  }
  const auto [side, t_memory_side] = memory_side_tier(totals);
  totals.t_overlapped = std::max({totals.t_math, t_memory_side, totals.t_net});
  totals.bound = totals.t_net > std::max(totals.t_math, t_memory_side) ? Bound::network
                 : totals.t_math > t_memory_side                       ? Bound::compute
                                                                       : Bound::memory;
  if (totals.bound == Bound::memory && side < totals.t_by_tier.size()) {
    totals.bound_tier = totals.t_by_tier[side].first;
  } else {
    totals.bound_tier.clear();
  }
}

// Totals of the rows weighted by `weight`: their time sums (sum_times), then their FLOP, byte
// and network sums from the rows' costs.
template <typename Weight>
void sum_rows(const OpGraph& graph, const CostTable& table, const Weight& weight, Totals& totals) {
  sum_times(table, weight, totals);
  totals.flops = Flops(0.0);
  totals.bytes = Bytes(0.0);
  totals.ideal_bytes = Bytes(0.0);
  totals.t_net_by_tier.clear();
  totals.net_bytes_by_tier.clear();
  zero_tiers(table, totals.bytes_by_tier);
  for (std::size_t row = 0; row < table.costs.size(); ++row) {
    const double count = weight(static_cast<Eigen::Index>(row));
    const OpCost& cost = table.costs[row];
    totals.flops += cost.flops * count;
    totals.bytes += cost.bytes * count;
    totals.ideal_bytes += cost.ideal_bytes * count;
    // A row re-costed into the times alone (recost_times) has no tiers to add.
    for (std::size_t tier = 0; tier < std::min(totals.bytes_by_tier.size(), cost.tiers.size());
         ++tier) {
      totals.bytes_by_tier[tier].second += cost.tiers[tier].bytes * count;
    }
    const Op& op = graph.op(table.order[row]);
    if (op.kind == OpKind::collective && count > 0.0) {
      auto tier = std::find_if(totals.t_net_by_tier.begin(), totals.t_net_by_tier.end(),
                               [&](const auto& entry) { return entry.first == op.network; });
      if (tier == totals.t_net_by_tier.end()) {
        totals.t_net_by_tier.emplace_back(op.network, Seconds(0.0));
        tier = std::prev(totals.t_net_by_tier.end());
      }
      tier->second += cost.t_net * count;
      auto bytes = std::find_if(totals.net_bytes_by_tier.begin(), totals.net_bytes_by_tier.end(),
                                [&](const auto& entry) { return entry.first == op.network; });
      if (bytes == totals.net_bytes_by_tier.end()) {
        totals.net_bytes_by_tier.emplace_back(op.network, Bytes(0.0));
        bytes = std::prev(totals.net_bytes_by_tier.end());
      }
      bytes->second += op.collective.bytes * count;
    }
  }
}

Totals sum_rows(const OpGraph& graph, const CostTable& table, const Eigen::ArrayXd& mask) {
  Totals totals;
  sum_rows(graph, table, table.counts * mask, totals);
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

// The critical path of one block: its ops list-scheduled in topological order on two streams, the
// device (compute and memory: max(T_math, T_mem)) and the network (T_net), each op starting when
// its producers in the block are done and its stream is free; × the block's count (its most
// frequent op's). An op that runs fewer times than that (a gradient reduced once per step after
// several microbatches, an optimizer update) is spread evenly over the instances: count /
// block count of its time in each. Weight gathers have no producers, so they overlap compute.
Seconds block_critical_path(const OpGraph& graph, const CostTable& table,
                            const Eigen::ArrayXd& mask) {
  std::vector<double> finish(graph.size(), 0.0);
  std::vector<bool> in_block(graph.size(), false);
  double device_free = 0.0;
  double network_free = 0.0;
  double makespan = 0.0;
  double count = 0.0;
  for (Eigen::Index row = 0; row < mask.size(); ++row) {
    count = mask(row) != 0.0 ? std::max(count, table.counts(row)) : count;
  }
  // Issue order: topological, except that an op with no producers (a weight gather) is issued
  // just before the op it feeds, as a prefetching runtime would.
  std::vector<std::size_t> position(graph.size(), 0);
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    position[table.order[row]] = row;
  }
  std::vector<std::pair<double, std::size_t>> issue;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const OpGraph::Vertex vertex = table.order[row];
    double key = static_cast<double>(row);
    if (boost::in_degree(vertex, graph.graph()) == 0 &&
        boost::out_degree(vertex, graph.graph()) > 0) {
      const auto consumer =
          boost::target(*boost::out_edges(vertex, graph.graph()).first, graph.graph());
      key = static_cast<double>(position[consumer]) - 0.5;
    }
    issue.emplace_back(key, row);
  }
  std::stable_sort(issue.begin(), issue.end());
  for (const auto& [key, row] : issue) {
    const auto index = static_cast<Eigen::Index>(row);
    if (mask(index) == 0.0) {
      continue;
    }
    const OpGraph::Vertex vertex = table.order[row];
    in_block[vertex] = true;
    double ready = 0.0;
    for (auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
      const OpGraph::Vertex producer = boost::source(edge, graph.graph());
      ready = in_block[producer] ? std::max(ready, finish[producer]) : ready;
    }
    const bool network = graph.op(vertex).kind == OpKind::collective;
    double& stream = network ? network_free : device_free;
    const double share = table.counts(index) / count;
    const double duration = share * (network ? table.times(index, CostTable::kNetworkColumn)
                                             : device_time(table, index));
    finish[vertex] = std::max(ready, stream) + duration;
    stream = finish[vertex];
    makespan = std::max(makespan, finish[vertex]);
  }
  return Seconds(makespan * count);
}

}  // namespace

MemorySide memory_side(const Totals& totals) {
  const auto [side, time] = memory_side_tier(totals);
  return {side < totals.t_by_tier.size() ? totals.t_by_tier[side].first : std::string(), time};
}

std::string bound_label(const Totals& totals) {
  return bound_label(totals.bound, totals.bound_tier);
}

Totals compute_totals(const OpGraph& graph, const CostTable& table) {
  Totals totals;
  compute_totals(graph, table, totals);
  return totals;
}

void compute_totals(const OpGraph& graph, const CostTable& table, Totals& totals) {
  sum_rows(graph, table, table.counts, totals);
}

void compute_time_totals(const CostTable& table, Totals& totals) {
  sum_times(table, table.counts, totals);
}

Bounds compute_bounds(const OpGraph& graph, const CostTable& table) {
  Bounds bounds;
  bounds.total = compute_totals(graph, table);
  for (const OpGraph::Stage& graph_stage : graph.stages) {
    const std::string& stage = graph_stage.name;
    const std::int64_t steps = graph_stage.steps;
    GroupBounds stage_bounds{stage, Block::none, steps,
                             sum_rows(graph, table, select(graph, table, [&](const Op& op) {
                                        return op.stage == stage;
                                      }))};
    for (const Block block : {Block::embed, Block::layer, Block::head}) {
      const Eigen::ArrayXd mask = select(
          graph, table, [&](const Op& op) { return op.stage == stage && op.block == block; });
      if (mask.sum() > 0.0) {
        GroupBounds block_bounds{stage, block, steps, sum_rows(graph, table, mask)};
        block_bounds.totals.t_critical = block_critical_path(graph, table, mask);
        stage_bounds.totals.t_critical += block_bounds.totals.t_critical;
        bounds.blocks.push_back(block_bounds);
      }
    }
    bounds.total.t_critical += stage_bounds.totals.t_critical;
    bounds.stages.push_back(stage_bounds);
  }
  return bounds;
}

}  // namespace rsim
