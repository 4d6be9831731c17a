// SPDX-License-Identifier: MIT
#include "sim/cost.hpp"

#include "sim/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rsim {
namespace {

// Visible (query, key) pairs. Causal: query i of this stage sees the cache and keys 0..i.
double visible_pairs(const AttentionShape& shape) {
  const auto queries = static_cast<double>(shape.query_tokens);
  if (shape.mask == AttentionMask::bidirectional) {
    return queries * static_cast<double>(shape.kv_tokens());
  }
  return queries * static_cast<double>(shape.cached_tokens) + queries * (queries + 1.0) / 2.0;
}

double attention_flops(const AttentionShape& shape) {
  return 4.0 * static_cast<double>(shape.batch) * static_cast<double>(shape.heads) *
         static_cast<double>(shape.head_dim) * visible_pairs(shape);
}

// The einsum operands of a matmul: activation and weight (a bias, if any, comes third).
double contraction_product(const Op& op) {
  std::vector<const Axis*> distinct;
  for (std::size_t index = 0; index < std::min<std::size_t>(2, op.inputs.size()); ++index) {
    for (const Axis& axis : op.inputs[index].axes) {
      const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                    [&](const Axis* other) { return other->name == axis.name; });
      if (!seen) {
        distinct.push_back(&axis);
      }
    }
  }
  double product = 1.0;
  for (const Axis* axis : distinct) {
    product *= static_cast<double>(axis->size);
  }
  return product;
}

Bytes tensor_bytes(const std::vector<Tensor>& tensors) {
  Bytes total;
  for (const Tensor& tensor : tensors) {
    total += tensor.bytes();
  }
  return total;
}

double output_elements(const Op& op) {
  double elements = 0.0;
  for (const Tensor& tensor : op.outputs) {
    elements += static_cast<double>(tensor.elements());
  }
  return elements;
}

std::string tensor_term(const Tensor& tensor) {
  return fmt::format("{} {} {} × {} B = {}", to_string(tensor.role), tensor.name, tensor.shape(),
                     bytes_per_element(tensor.dtype),
                     format_quantity(tensor.bytes().si(), Dimension::bytes));
}

}  // namespace

std::string_view to_string(Bound bound) {
  switch (bound) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::network:
      return "network";
  }
  return "unknown";
}

Flops op_flops(const Op& op) {
  switch (op.kind) {
    case OpKind::matmul: {
      const double bias_adds = op.inputs.size() > 2 ? output_elements(op) : 0.0;
      return Flops(2.0 * contraction_product(op) + bias_adds);
    }
    case OpKind::attention:
      return Flops(attention_flops(op.attention));
    case OpKind::elementwise:
    case OpKind::embedding_gather:
      return Flops(op.flops_per_element * output_elements(op));
    case OpKind::kv_cache_write:
    case OpKind::collective:
      return Flops(0.0);
  }
  return Flops(0.0);
}

Bytes op_bytes(const Op& op) {
  // A collective's bytes cross the network tier (T_net), not counted against DRAM.
  if ((op.kind == OpKind::elementwise && op.fused) || op.kind == OpKind::collective) {
    return Bytes(0.0);
  }
  return tensor_bytes(op.inputs) + tensor_bytes(op.outputs);
}

OpCost cost_op(const Op& op, const Roofs& roofs) {
  const ComputePath* path = roofs.find_path(op.compute_path);
  if (path == nullptr) {
    throw InputError(fmt::format("{} runs on compute path '{}', which {} does not have (paths: {})",
                                 op.qualified_name(), op.compute_path, roofs.hardware,
                                 roofs.path_names()));
  }
  const MemoryTier& memory = roofs.main_memory();
  RSIM_CHECK(memory.bandwidth.has_value(), "main memory without bandwidth passed validation");
  OpCost cost;
  cost.flops = op_flops(op);
  cost.bytes = op_bytes(op);
  cost.t_math = cost.flops / path->peak;
  cost.t_mem = cost.bytes / *memory.bandwidth;
  if (op.kind == OpKind::collective) {
    const auto tiers = roofs.find_networks(op.network);
    RSIM_CHECK(!tiers.empty(), "a plan put a collective on a tier the hardware lacks");
    cost.t_net = collective_cost(op.collective, tiers).time;
  }
  cost.t_lower = std::max({cost.t_math, cost.t_mem, cost.t_net});
  cost.t_upper = cost.t_math + cost.t_mem + cost.t_net;
  cost.intensity = cost.bytes.si() > 0.0 ? intensity(cost.flops, cost.bytes) : 0.0;
  cost.critical_intensity = ridge(path->peak, *memory.bandwidth);
  cost.bound = cost.t_net > std::max(cost.t_math, cost.t_mem) ? Bound::network
               : cost.t_math > cost.t_mem                     ? Bound::compute
                                                              : Bound::memory;
  return cost;
}

CostTable cost_graph(const OpGraph& graph, const Roofs& roofs) {
  CostTable table;
  table.order = graph.topological_order();
  const auto rows = static_cast<Eigen::Index>(table.order.size());
  table.times.resize(rows, 3);
  table.counts.resize(rows);
  for (Eigen::Index row = 0; row < rows; ++row) {
    const Op& op = graph.op(table.order[static_cast<std::size_t>(row)]);
    const OpCost cost = cost_op(op, roofs);
    table.times(row, CostTable::kMathColumn) = cost.t_math.si();
    table.times(row, CostTable::kMemoryColumn) = cost.t_mem.si();
    table.times(row, CostTable::kNetworkColumn) = cost.t_net.si();
    table.counts(row) = static_cast<double>(op.count);
    table.costs.push_back(cost);
  }
  return table;
}

std::vector<std::string> explain_op(const Op& op, const Roofs& roofs) {
  const OpCost cost = cost_op(op, roofs);
  const ComputePath& path = *roofs.find_path(op.compute_path);
  const MemoryTier& memory = roofs.main_memory();
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} ({}), × {} instances", op.qualified_name(), to_string(op.kind), op.count));
  switch (op.kind) {
    case OpKind::matmul:
      lines.push_back(fmt::format("  FLOPs = 2 × Π(distinct axes of {} and {}){} = {:.6g}",
                                  op.inputs[0].shape(), op.inputs[1].shape(),
                                  op.inputs.size() > 2 ? " + output elements (bias)" : "",
                                  cost.flops.si()));
      break;
    case OpKind::attention: {
      const AttentionShape& shape = op.attention;
      lines.push_back(fmt::format(
          "  FLOPs = 4 × batch {} × heads {} × head_dim {} × visible pairs {:.6g} ({}, "
          "{} queries × ({} cached + {} own) keys) = {:.6g}",
          shape.batch, shape.heads, shape.head_dim, visible_pairs(shape), to_string(shape.mask),
          shape.query_tokens, shape.cached_tokens, shape.query_tokens, cost.flops.si()));
      break;
    }
    case OpKind::elementwise:
    case OpKind::embedding_gather:
    case OpKind::collective: {
      const CollectiveCost collective =
          collective_cost(op.collective, roofs.find_networks(op.network));
      lines.push_back(
          fmt::format("  {} of {} over {} (axes [{}]): {}, {} hops → bandwidth {} , latency {}",
                      to_string(op.collective.kind),
                      format_quantity(op.collective.bytes.si(), Dimension::bytes), op.network,
                      fmt::join(op.collective.axes, " × "), collective.algorithm, collective.hops,
                      format_quantity(collective.bandwidth_time.si(), Dimension::seconds),
                      format_quantity(collective.latency_time.si(), Dimension::seconds)));
      lines.push_back(
          fmt::format("  T_net = {}", format_quantity(cost.t_net.si(), Dimension::seconds)));
      return lines;
    }
    case OpKind::kv_cache_write:
      lines.push_back(fmt::format("  FLOPs = {} per element × {:.6g} output elements = {:.6g}",
                                  op.flops_per_element, output_elements(op), cost.flops.si()));
      break;
  }
  if (op.kind == OpKind::elementwise && op.fused) {
    lines.push_back("  bytes = 0 (fused into a matmul: fusion.into_matmul)");
  } else {
    lines.push_back("  bytes = Σ inputs read once + Σ outputs written once:");
    for (const Tensor& tensor : op.inputs) {
      lines.push_back("    read  " + tensor_term(tensor));
    }
    for (const Tensor& tensor : op.outputs) {
      lines.push_back("    write " + tensor_term(tensor));
    }
    lines.push_back(fmt::format("    = {:.6g} B", cost.bytes.si()));
  }
  lines.push_back(fmt::format("  T_math = {:.6g} FLOP / {} ({}) = {}", cost.flops.si(),
                              format_quantity(path.peak.si(), Dimension::flop_rate), path.name,
                              format_quantity(cost.t_math.si(), Dimension::seconds)));
  lines.push_back(fmt::format("  T_mem  = {:.6g} B / {} ({}) = {}", cost.bytes.si(),
                              format_quantity(memory.bandwidth->si(), Dimension::byte_rate),
                              memory.name, format_quantity(cost.t_mem.si(), Dimension::seconds)));
  lines.push_back(fmt::format("  intensity = {:.4g} FLOP/B vs ridge {:.4g} FLOP/B → {}-bound",
                              cost.intensity, cost.critical_intensity, to_string(cost.bound)));
  lines.push_back(fmt::format("  lower = max = {}, upper = sum = {} (per instance)",
                              format_quantity(cost.t_lower.si(), Dimension::seconds),
                              format_quantity(cost.t_upper.si(), Dimension::seconds)));
  return lines;
}

}  // namespace rsim
