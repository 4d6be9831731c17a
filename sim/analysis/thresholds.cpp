// SPDX-License-Identifier: MIT
#include "sim/analysis/thresholds.hpp"

#include "sim/cost/op_cost.hpp"

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

double ridge_against_main_memory(const Op& op, const Roofs& roofs) {
  return ridge(compute_path_of(op, roofs).peak, *roofs.main_memory().bandwidth);
}

}  // namespace

std::vector<Ridge> ridges(const Roofs& roofs) {
  std::vector<Ridge> result;
  for (const MemoryTier& tier : roofs.memory) {
    if (!tier.bandwidth) {
      continue;
    }
    for (const ComputePath& path : roofs.compute) {
      result.push_back(
          {path.name, tier.name, false, *tier.bandwidth, ridge(path.peak, *tier.bandwidth)});
    }
  }
  for (const NetworkTier& tier : roofs.network) {
    for (const ComputePath& path : roofs.compute) {
      result.push_back(
          {path.name, tier.name, true, tier.bandwidth, ridge(path.peak, tier.bandwidth)});
    }
  }
  return result;
}

std::optional<CriticalBatch> critical_token_batch(const Op& op, const Roofs& roofs) {
  return critical_token_batch(std::vector<const Op*>{&op}, roofs);
}

std::optional<CriticalBatch> critical_token_batch(const std::vector<const Op*>& ops,
                                                  const Roofs& roofs) {
  if (ops.empty()) {
    return std::nullopt;
  }
  for (const Op* op : ops) {
    if (op->kind != OpKind::matmul || op->inputs.empty() || !op->inputs.front().has_axis("batch")) {
      return std::nullopt;
    }
  }
  // The token batch of the first op's activation; the others scale with it (same batch axis).
  double tokens = 1.0;
  for (const Axis& axis : ops.front()->inputs.front().axes) {
    if (axis.name == "batch" || axis.name == "seq") {
      tokens *= static_cast<double>(axis.size);
    }
  }
  // Σ FLOPs and Σ bytes (× count) at the op's own batch and at twice it: both are affine. The
  // bytes are the ideal ones (each operand read once), the scaling book's definition; tiling
  // only adds bytes, which `rsim threshold` (a root finder over whole runs) includes.
  double flops_one = 0.0;
  double flops_two = 0.0;
  double bytes_one = 0.0;
  double bytes_two = 0.0;
  double ridge_intensity = 0.0;
  for (const Op* op : ops) {
    const auto count = static_cast<double>(op->count);
    const Op doubled = scale_batch(*op, 2);
    flops_one += op_flops(*op).si() * count;
    flops_two += op_flops(doubled).si() * count;
    bytes_one += op_bytes(*op).si() * count;
    bytes_two += op_bytes(doubled).si() * count;
    ridge_intensity = ridge_against_main_memory(*op, roofs);
  }
  const double flops_slope = (flops_two - flops_one) / tokens;
  const double flops_offset = flops_one - flops_slope * tokens;
  const double bytes_slope = (bytes_two - bytes_one) / tokens;
  const double bytes_offset = bytes_one - bytes_slope * tokens;
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
