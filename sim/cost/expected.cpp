// SPDX-License-Identifier: MIT
#include "sim/cost/expected.hpp"

#include "sim/cost/collectives.hpp"

#include <algorithm>

namespace rsim {
namespace {

// max(T_math / η_path, T_tier / η_tier) + the launch gap (none for an elementwise op fused into
// its matmul, or an op with no work); `tier_time(i)` is memory tier i's time.
template <typename TierTime>
double device_expected(const Op& op, const ComputePath* path, double t_math, std::size_t tiers,
                       const TierTime& tier_time, const Roofs& roofs) {
  double longest = t_math / (path != nullptr ? path->efficiency : 1.0);
  for (std::size_t tier = 0; tier < tiers; ++tier) {
    longest = std::max(longest, tier_time(tier) / roofs.memory[tier].efficiency);
  }
  const bool launches = !(op.kind == OpKind::elementwise && op.fused) && longest > 0.0;
  return longest + (launches ? roofs.kernel_overhead.si() : 0.0);
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
  return device_expected(
      op, roofs.find_path(op.compute_path), cost.t_math.si(),
      std::min(cost.tiers.size(), roofs.memory.size()),
      [&](std::size_t tier) { return cost.tiers[tier].time.si(); }, roofs);
}

double expected_time(const Op& op, const OpCostPlan& plan, const Roofs& roofs,
                     const CostTable& table, Eigen::Index row) {
  if (op.kind == OpKind::collective) {
    return expected_collective_time(op.collective, plan.networks);
  }
  return device_expected(
      op, plan.path, table.times(row, CostTable::kMathColumn), roofs.memory.size(),
      [&](std::size_t tier) { return table.times(row, CostTable::tier_column(tier)); }, roofs);
}

}  // namespace rsim
