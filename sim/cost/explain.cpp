// SPDX-License-Identifier: MIT
#include "sim/cost/explain.hpp"

#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/base/units.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/expected.hpp"
#include "sim/cost/gemm_quantization.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/cost/op_cost_parts.hpp"
#include "sim/cost/tiling.hpp"
#include "sim/spec/catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstddef>

namespace rsim {

using op_cost_parts::output_elements;
using op_cost_parts::visible_pairs;

namespace {

std::string tensor_term(const Tensor& tensor) {
  return fmt::format("{} {} {} × {} B = {}", to_string(tensor.role), tensor.name, tensor.shape(),
                     bytes_per_element(tensor.dtype),
                     format_quantity(tensor.bytes().si(), Dimension::bytes));
}

// "dram serves 1.2 MB = s_x·M·K·⌈N/bn⌉ + …" with the numbers of the chosen tile put in.
std::string traffic_line(const Op& op, const TierCost& tier) {
  const std::string head = fmt::format("  {:<9} serves {}{}", tier.tier,
                                       format_quantity(tier.bytes.si(), Dimension::bytes),
                                       tier.timed ? "" : " (no bandwidth figure: not timed)");
  if (!tier.tile) {
    return head + " (every byte once: no reuse to win)";
  }
  const Tile& tile = *tier.tile;
  const std::string where =
      fmt::format(" with tile {} in {}{}", to_string(tile), tier.tile_tier,
                  tier.panels ? " (full-K panels kept while waves sweep the tile)" : std::string());
  if (op.kind == OpKind::attention) {
    const FlashShape shape = flash_shape(op);
    return head + where +
           fmt::format(" = Q+O {} + K/V {} × {} re-reads{}",
                       format_quantity(shape.query_output_bytes.si(), Dimension::bytes),
                       format_quantity(shape.key_value_bytes.si(), Dimension::bytes),
                       format_plain((tier.bytes - shape.query_output_bytes).si() /
                                    shape.key_value_bytes.si()),
                       tier.operand_resident ? " (K/V resident)" : "");
  }
  const GemmShape shape = gemm_shape(op);
  const TiledTraffic traffic = gemm_traffic(shape, tile);
  return head + where +
         fmt::format(" = {:g}×({}·M·K·{} + {}·K·N·{} + {}·M·N), M={} N={} K={}{}", shape.batch,
                     shape.x_element_bytes,
                     traffic.x_resident
                         ? "1 (resident)"
                         : fmt::format("⌈N/bn⌉={:g}", std::ceil(static_cast<double>(shape.n) /
                                                                static_cast<double>(tile.bn))),
                     shape.w_element_bytes,
                     traffic.w_resident
                         ? "1 (resident)"
                         : fmt::format("⌈M/bm⌉={:g}", std::ceil(static_cast<double>(shape.m) /
                                                                static_cast<double>(tile.bm))),
                     shape.out_element_bytes, shape.m, shape.n, shape.k,
                     op.inputs.size() > 2 ? " + bias" : "");
}

// "expected = max(T_math / (0.8 × tiles fill 97 %), T_hbm / 0.89, …) + launch 2.5 µs = …" (a GEMM
// of two activations: "T_math / … + max(T_hbm / …, …)"): the expected time's terms
// (sim/cost/expected.hpp) with the fractions put in.
std::string expected_line(const Op& op, const OpCost& cost, const Roofs& roofs) {
  const ComputePath* path = roofs.find_path(op.compute_path);
  const double share = op_shape_share(op, roofs);
  const std::string math = fmt::format(
      "T_math / ({:.3g}{})", compute_efficiency(op, path, roofs),
      share < 1.0
          ? fmt::format(" × {} {:.3g} %",
                        op.kind == OpKind::attention ? "length and head-dim share" : "tiles fill",
                        100.0 * share)
          : "");
  std::vector<std::string> memory_terms;
  for (std::size_t index = 0; index < cost.tiers.size() && index < roofs.memory.size(); ++index) {
    if (roofs.memory[index].bandwidth) {
      memory_terms.push_back(fmt::format("T_{} / {:.3g}", cost.tiers[index].tier,
                                         memory_efficiency(op, index, roofs)));
    }
  }
  // A GEMM of two activations adds its math and memory (serial_math_memory).
  const std::string sum = serial_math_memory(op)
                              ? fmt::format("{} + max({})", math, fmt::join(memory_terms, ", "))
                              : fmt::format("max({}{}{})", math, memory_terms.empty() ? "" : ", ",
                                            fmt::join(memory_terms, ", "));
  const bool launches = !(op.kind == OpKind::elementwise && op.fused);
  return fmt::format(
      "  expected = {}{} = {} (per instance; the hardware's efficiency:)", sum,
      launches ? " + launch " + format_quantity(roofs.kernel_overhead.si(), Dimension::seconds)
               : "",
      format_quantity(expected_device_time(op, cost, roofs), Dimension::seconds));
}

}  // namespace

std::vector<std::string> explain_op(const Op& op, const Roofs& roofs, const TileChoices& tiles) {
  const OpCost cost = cost_op(op, roofs, tiles);
  const ComputePath& path = *roofs.find_path(op.compute_path);
  const MemoryTier& memory = roofs.main_memory();
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} ({}), × {} instances", op.qualified_name(), to_string(op.kind), op.count));
  switch (op.kind) {
    case OpKind::matmul:
      lines.push_back(fmt::format("  FLOPs = 2 × Π(distinct axes of {} and {}){} = {}",
                                  op.inputs[0].shape(), op.inputs[1].shape(),
                                  op.inputs.size() > 2 ? " + output elements (bias)" : "",
                                  format_plain(cost.flops.si(), 6)));
      break;
    case OpKind::attention: {
      const AttentionShape& shape = op.attention;
      const std::string width =
          shape.value_dim() == shape.head_dim
              ? fmt::format("4 × batch {} × heads {} × head_dim {}", shape.batch, shape.heads,
                            shape.head_dim)
              : fmt::format("2 × batch {} × heads {} × (head_dim {} + value_head_dim {})",
                            shape.batch, shape.heads, shape.head_dim, shape.value_dim());
      lines.push_back(fmt::format(
          "  FLOPs = {} × visible pairs {} ({}{}, {} queries × ({} cached + {} own) keys) = "
          "{}",
          width, format_plain(visible_pairs(shape), 6), to_string(shape.mask),
          shape.window > 0 ? fmt::format(" within a {}-key window", shape.window) : "",
          shape.query_tokens, shape.cached_tokens, shape.query_tokens,
          format_plain(cost.flops.si(), 6)));
      break;
    }
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
      lines.push_back(fmt::format(
          "  expected = α + steps × hop latency + bandwidth time / fraction = {}",
          format_quantity(expected_collective_time(collective, roofs.find_networks(op.network)),
                          Dimension::seconds)));
      return lines;
    }
    case OpKind::elementwise:
    case OpKind::embedding_gather:
    case OpKind::kv_cache_write:
      lines.push_back(fmt::format("  FLOPs = {} per element × {} output elements = {}",
                                  op.flops_per_element, format_plain(output_elements(op), 6),
                                  format_plain(cost.flops.si(), 6)));
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
    lines.push_back(
        fmt::format("    = {} B (ideal: perfect reuse)", format_plain(cost.ideal_bytes.si(), 6)));
  }
  for (const TierCost& tier : cost.tiers) {
    lines.push_back(traffic_line(op, tier));
  }
  lines.push_back(fmt::format("  T_math = {} FLOP / {} ({}) = {}", format_plain(cost.flops.si(), 6),
                              format_quantity(path.peak.si(), Dimension::flop_rate), path.name,
                              format_quantity(cost.t_math.si(), Dimension::seconds)));
  for (std::size_t index = 0; index < cost.tiers.size(); ++index) {
    const TierCost& tier = cost.tiers[index];
    const MemoryTier& memory_tier = roofs.memory[index];
    if (memory_tier.bandwidth) {
      lines.push_back(
          fmt::format("  T_{:<5} = {} B / {} = {}", tier.tier, format_plain(tier.bytes.si(), 6),
                      format_quantity(memory_tier.bandwidth->si(), Dimension::byte_rate),
                      format_quantity(tier.time.si(), Dimension::seconds)));
    }
  }
  lines.push_back(
      fmt::format("  intensity = {} FLOP/B ({}, tiled; ideal {}) vs ridge {} FLOP/B → bound by {}",
                  format_plain(cost.intensity), memory.name, format_plain(cost.ideal_intensity),
                  format_plain(cost.critical_intensity), bound_label(op, cost)));
  lines.push_back(fmt::format("  lower = max = {}, upper = sum = {} (per instance)",
                              format_quantity(cost.t_lower.si(), Dimension::seconds),
                              format_quantity(cost.t_upper.si(), Dimension::seconds)));
  lines.push_back(expected_line(op, cost, roofs));
  return lines;
}

OpGraph::Vertex find_explained_op(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                                  std::string_view name) {
  std::vector<OpGraph::Vertex> matches;
  std::vector<std::string> names;
  // (fmt::format, not operator+: GCC 12's -Wrestrict false positive, PR 105329)
  const std::string suffix = fmt::format("/{}", name);
  for (const OpGraph::Vertex vertex : order) {
    const Op& op = graph.op(vertex);
    const std::string qualified = op.qualified_name();
    if (qualified == name) {
      return vertex;
    }
    // STAGE/OP: the qualified name without its block.
    const std::string stage_op = fmt::format("{}/{}", op.stage, op.name);
    if (op.name == name || qualified.ends_with(suffix) || stage_op == name) {
      matches.push_back(vertex);
    }
    names.push_back(qualified);
    names.push_back(op.name);
  }
  if (matches.size() == 1) {
    return matches.front();
  }
  if (matches.empty()) {
    const auto closest = closest_name(name, names);
    throw InputError(fmt::format(
        "--explain {}: no such op{} (names look like \"prefix/layer/q_proj\", \"prefix/q_proj\" "
        "or \"q_proj\")",
        name, closest ? fmt::format("; did you mean '{}'?", *closest) : std::string()));
  }
  std::vector<std::string> candidates;
  for (const OpGraph::Vertex vertex : matches) {
    candidates.push_back(graph.op(vertex).qualified_name());
  }
  throw InputError(fmt::format("--explain {}: {} ops match ({}); name one by STAGE/BLOCK/OP", name,
                               candidates.size(), fmt::join(candidates, ", ")));
}

}  // namespace rsim
