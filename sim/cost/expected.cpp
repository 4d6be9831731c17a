// SPDX-License-Identifier: MIT
#include "sim/cost/expected.hpp"

#include "sim/cost/collectives.hpp"

#include <algorithm>

namespace rsim {
namespace {

// The launch gap: none for an elementwise op fused into its matmul, or an op with no work.
double launch(const Op& op, double longest, const Roofs& roofs) {
  const bool launches = !(op.kind == OpKind::elementwise && op.fused) && longest > 0.0;
  return launches ? roofs.kernel_overhead.si() : 0.0;
}

}  // namespace

double expected_collective_time(const Collective& collective,
                                const std::vector<const NetworkTier*>& tiers) {
  const CollectiveCost cost = collective_cost(collective, tiers, false);
  if (tiers.size() == 1) {
    const NetworkTier& tier = *tiers.front();
    // NCCL's model (tuning.cc): base latency + steps × per-step latency + bytes / bus bandwidth.
    const double steps =
        tier.hop_latency ? tier.hop_latency->si() * static_cast<double>(cost.hops) : 0.0;
    return std::max(cost.time.si(),
                    tier.call_latency.si() + steps + cost.bandwidth_time.si() / tier.efficiency);
  }
  double call_latency = 0.0;
  double efficiency = 1.0;
  for (const NetworkTier* tier : tiers) {
    call_latency = std::max(call_latency, tier->call_latency.si());
    efficiency = std::min(efficiency, tier->efficiency);
  }
  return std::max(cost.time.si(),
                  call_latency + cost.latency_time.si() + cost.bandwidth_time.si() / efficiency);
}

double expected_device_time(const Op& op, const OpCost& cost, const Roofs& roofs) {
  const ComputePath* path = roofs.find_path(op.compute_path);
  double longest = cost.t_math.si() / (path != nullptr ? path->efficiency : 1.0);
  for (std::size_t tier = 0; tier < std::min(cost.tiers.size(), roofs.memory.size()); ++tier) {
    longest = std::max(longest, cost.tiers[tier].time.si() / roofs.memory[tier].efficiency);
  }
  return longest + launch(op, longest, roofs);
}

double expected_time(const Op& op, const OpCostPlan& plan, const Roofs& roofs,
                     const CostTable& table, Eigen::Index row) {
  if (op.kind == OpKind::collective) {
    return expected_collective_time(op.collective, plan.networks);
  }
  const double compute_efficiency = plan.path != nullptr ? plan.path->efficiency : 1.0;
  double longest = table.times(row, CostTable::kMathColumn) / compute_efficiency;
  for (std::size_t tier = 0; tier < roofs.memory.size(); ++tier) {
    longest = std::max(
        longest, table.times(row, CostTable::tier_column(tier)) / roofs.memory[tier].efficiency);
  }
  return longest + launch(op, longest, roofs);
}

}  // namespace rsim
