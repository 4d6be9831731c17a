// SPDX-License-Identifier: MIT
#include "sim/cost/expected.hpp"

#include "sim/cost/collectives.hpp"

#include <algorithm>

namespace rsim {
namespace {

double collective_expected(const Op& op, const OpCostPlan& plan) {
  const CollectiveCost cost = collective_cost(op.collective, plan.networks, false);
  if (plan.networks.size() == 1) {
    const NetworkTier& tier = *plan.networks.front();
    // NCCL's model (tuning.cc): base latency + steps × per-step latency + bytes / bus bandwidth.
    const double steps =
        tier.hop_latency ? tier.hop_latency->si() * static_cast<double>(cost.hops) : 0.0;
    return std::max(cost.time.si(),
                    tier.call_latency.si() + steps + cost.bandwidth_time.si() / tier.efficiency);
  }
  double call_latency = 0.0;
  double efficiency = 1.0;
  for (const NetworkTier* tier : plan.networks) {
    call_latency = std::max(call_latency, tier->call_latency.si());
    efficiency = std::min(efficiency, tier->efficiency);
  }
  return std::max(cost.time.si(),
                  call_latency + cost.latency_time.si() + cost.bandwidth_time.si() / efficiency);
}

}  // namespace

double expected_time(const Op& op, const OpCostPlan& plan, const Roofs& roofs,
                     const CostTable& table, Eigen::Index row) {
  if (op.kind == OpKind::collective) {
    return collective_expected(op, plan);
  }
  const double compute_efficiency = plan.path != nullptr ? plan.path->efficiency : 1.0;
  double longest = table.times(row, CostTable::kMathColumn) / compute_efficiency;
  for (std::size_t tier = 0; tier < roofs.memory.size(); ++tier) {
    longest = std::max(
        longest, table.times(row, CostTable::tier_column(tier)) / roofs.memory[tier].efficiency);
  }
  const bool launches = !(op.kind == OpKind::elementwise && op.fused) && longest > 0.0;
  return longest + (launches ? roofs.kernel_overhead.si() : 0.0);
}

}  // namespace rsim
