// SPDX-License-Identifier: MIT
#include "sim/thresholds.hpp"

#include "sim/cost.hpp"

namespace rsim {
namespace {

Op scale_batch(const Op& op, std::int64_t factor) {
  Op scaled = op;
  for (auto* tensors : {&scaled.inputs, &scaled.outputs}) {
    for (Tensor& tensor : *tensors) {
      for (Axis& axis : tensor.axes) {
        if (axis.name == "batch") {
          axis.size *= factor;
        }
      }
    }
  }
  return scaled;
}

}  // namespace

std::vector<Ridge> ridges(const Roofs& roofs) {
  std::vector<Ridge> result;
  for (const MemoryTier& tier : roofs.memory) {
    if (!tier.bandwidth) {
      continue;
    }
    for (const ComputePath& path : roofs.compute) {
      result.push_back({path.name, tier.name, ridge(path.peak, *tier.bandwidth)});
    }
  }
  return result;
}

std::optional<CriticalBatch> critical_token_batch(const Op& op, const Roofs& roofs) {
  if (op.kind != OpKind::matmul || op.inputs.empty() || !op.inputs.front().has_axis("batch")) {
    return std::nullopt;
  }
  double tokens = 1.0;
  for (const Axis& axis : op.inputs.front().axes) {
    if (axis.name == "batch" || axis.name == "seq") {
      tokens *= static_cast<double>(axis.size);
    }
  }
  const OpCost at_one = cost_op(op, roofs);
  const OpCost at_two = cost_op(scale_batch(op, 2), roofs);
  const double flops_slope = (at_two.flops.si() - at_one.flops.si()) / tokens;
  const double flops_offset = at_one.flops.si() - flops_slope * tokens;
  const double bytes_slope = (at_two.bytes.si() - at_one.bytes.si()) / tokens;
  const double bytes_offset = at_one.bytes.si() - bytes_slope * tokens;
  const double ridge_intensity = at_one.critical_intensity;
  const double denominator = flops_slope - ridge_intensity * bytes_slope;
  if (denominator <= 0.0) {
    return CriticalBatch{CriticalBatch::Kind::never, 0.0};
  }
  const double root = (ridge_intensity * bytes_offset - flops_offset) / denominator;
  if (root <= 0.0) {
    return CriticalBatch{CriticalBatch::Kind::always, 0.0};
  }
  return CriticalBatch{CriticalBatch::Kind::at, root};
}

}  // namespace rsim
