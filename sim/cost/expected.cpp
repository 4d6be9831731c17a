// SPDX-License-Identifier: MIT
#include "sim/cost/expected.hpp"

#include "sim/cost/gemm_quantization.hpp"
#include "sim/cost/op_cost_parts.hpp"

#include <algorithm>

namespace rsim {
namespace {

// The device's busy time from its math and (slowest tier's) memory time, each at its fraction:
// overlapped, or one after the other (serial_math_memory).
double device_busy(double math, double memory, bool serial) {
  return serial ? math + memory : std::max(math, memory);
}

// max(T_math / η_path, T_tier / η_tier) + the launch gap (none for an elementwise op fused into
// its matmul, or an op with no work); `tier_time(i)` is memory tier i's time.
template <typename TierTime>
double device_expected(const Op& op, const ComputePath* path, double t_math, std::size_t tiers,
                       const TierTime& tier_time, const Roofs& roofs) {
  // Times the reciprocal, as expected_device_rows does (a division per term is its hot spot).
  const double math =
      t_math * (1.0 / (compute_efficiency(op, path, roofs) * op_shape_share(op, roofs)));
  double memory = 0.0;
  for (std::size_t tier = 0; tier < tiers; ++tier) {
    memory = std::max(memory, tier_time(tier) * (1.0 / memory_efficiency(op, tier, roofs)));
  }
  const double longest = device_busy(math, memory, serial_math_memory(op));
  const bool launches = !(op.kind == OpKind::elementwise && op.fused) && longest > 0.0;
  return longest + (launches ? roofs.kernel_overhead.si() : 0.0);
}

}  // namespace

double memory_efficiency(const Op& op, std::size_t tier, const Roofs& roofs) {
  const std::optional<double>& unfused = roofs.attention_efficiency.unfused_memory;
  return tier == 0 && unfused && serial_math_memory(op) ? *unfused : roofs.memory[tier].efficiency;
}

bool serial_math_memory(const Op& op) {
  if (op.kind != OpKind::matmul) {
    return false;
  }
  const auto activation = [](const Tensor& tensor) {
    return tensor.role == TensorRole::activation;
  };
  return std::all_of(op.inputs.begin(), op.inputs.end(), activation) &&
         std::all_of(op.outputs.begin(), op.outputs.end(), activation);
}

double compute_efficiency(const Op& op, const ComputePath* path, const Roofs& roofs) {
  if (op.kind == OpKind::attention) {
    const std::optional<double>& pass = op.pass == Pass::backward
                                            ? roofs.attention_efficiency.backward
                                            : roofs.attention_efficiency.forward;
    if (pass) {
      return *pass;
    }
  }
  return path != nullptr ? path->efficiency : 1.0;
}

double attention_length_share(const Op& op, const Roofs& roofs) {
  const double overhead = roofs.attention_efficiency.length_overhead;
  if (op.kind != OpKind::attention || !(overhead > 0.0) || op.attention.query_tokens <= 0) {
    return 1.0;
  }
  const double keys =
      op_cost_parts::visible_pairs(op.attention) / static_cast<double>(op.attention.query_tokens);
  return keys > 0.0 ? keys / (keys + overhead) : 1.0;
}

double attention_head_dim_share(const Op& op, const Roofs& roofs) {
  const double overhead = roofs.attention_efficiency.head_dim_overhead;
  if (op.kind != OpKind::attention || !(overhead > 0.0) || op.attention.head_dim <= 0) {
    return 1.0;
  }
  const auto dims = static_cast<double>(op.attention.head_dim);
  return (dims / (dims + overhead)) / (128.0 / (128.0 + overhead));
}

double attention_shape_share(const Op& op, const Roofs& roofs) {
  return attention_length_share(op, roofs) * attention_head_dim_share(op, roofs);
}

double op_shape_share(const Op& op, const Roofs& roofs) {
  return op.kind == OpKind::attention ? attention_shape_share(op, roofs)
                                      : op_quantization(op, roofs.gemm_quantization);
}

double expected_collective_time(const Collective& collective,
                                const std::vector<const NetworkTier*>& tiers) {
  return expected_collective_time(collective_cost(collective, tiers, false), tiers);
}

double expected_collective_time(const CollectiveCost& cost,
                                const std::vector<const NetworkTier*>& tiers) {
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

void expected_device_rows(const CostPlan& plan, CostTable& table,
                          const std::vector<std::size_t>* rows) {
  // device_expected's arithmetic, the same products and maxima in the same order, allocating
  // nothing (a batch line runs it per point, on the rows it re-costed).
  const auto expected_row = [&](Eigen::Index row) {
    if (!plan.device_rows(row)) {
      return;
    }
    const double math =
        table.times(row, CostTable::kMathColumn) * plan.inverse_path_efficiency(row);
    const bool serial = plan.serial_rows(row);
    double memory = 0.0;
    for (std::size_t tier = 0; tier < plan.inverse_tier_efficiency.size(); ++tier) {
      memory = std::max(memory, table.times(row, CostTable::tier_column(tier)) *
                                    (serial && tier == 0 ? plan.inverse_serial_main_efficiency
                                                         : plan.inverse_tier_efficiency[tier]));
    }
    const double longest = device_busy(math, memory, serial);
    table.expected(row) = longest + (longest > 0.0 ? plan.launch_overhead(row) : 0.0);
  };
  if (rows == nullptr) {
    for (Eigen::Index row = 0; row < table.times.rows(); ++row) {
      expected_row(row);
    }
    return;
  }
  for (const std::size_t row : *rows) {
    expected_row(static_cast<Eigen::Index>(row));
  }
}

}  // namespace rsim
