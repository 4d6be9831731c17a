// SPDX-License-Identifier: MIT
#include "sim/cost.hpp"

#include "sim/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
         static_cast<double>(shape.head_dim) * visible_pairs(shape) * shape.flops_scale;
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

// Bytes of the inputs a tile does not cover (a matmul's bias): read once.
Bytes untiled_inputs(const Op& op, std::size_t tiled) {
  Bytes total;
  for (std::size_t index = tiled; index < op.inputs.size(); ++index) {
    total += op.inputs[index].bytes();
  }
  return total;
}

// The traffic a tier serves when `inner` holds the tile: the user's tile for matmuls where one is
// fixed for `inner`, else the best that fits; nullopt for ops the tiling model does not cover.
// What a tile in `inner` may occupy. Accumulators live in `inner` unless it names a holder
// (GPU registers); a shared tier's tile is the region one wave of every SM computes at once, so
// its accumulators get the holder's capacity over all its instances (20 SMs × 256 KiB on Thor).
TileBudget tile_budget(const MemoryTier& inner, const Roofs& roofs) {
  TileBudget budget{inner.capacity, std::nullopt};
  if (const MemoryTier* holder = roofs.find_tier(inner.accumulator_tier)) {
    budget.accumulator_capacity =
        holder->capacity * (static_cast<double>(holder->count) / static_cast<double>(inner.count));
  }
  return budget;
}

// A shared tier (one instance over per-SM tiers: L2) can also keep full-K panels resident while
// successive waves sweep the region below them.
bool holds_panels(const MemoryTier& inner, const Roofs& roofs) {
  return inner.count == 1 && std::any_of(roofs.memory.begin(), roofs.memory.end(),
                                         [](const MemoryTier& tier) { return tier.count > 1; });
}

// The tiling model's view of an op, taken once for every tier: a GEMM or an FMHA (or neither).
struct TiledShape {
  std::optional<GemmShape> gemm;
  std::optional<FlashShape> flash;
};

TiledShape tiled_shape(const Op& op) {
  TiledShape shape;
  if (op.kind == OpKind::matmul) {
    shape.gemm = gemm_shape(op);
  } else if (op.kind == OpKind::attention) {
    shape.flash = flash_shape(op);
  }
  return shape;
}

// The traffic a tier serves when `inner` holds the tile: the user's tile for matmuls where one is
// fixed for `inner`, else the best that fits; nullopt for ops the tiling model does not cover.
std::optional<TiledTraffic> tiled_traffic(const Op& op, const TiledShape& tiled,
                                          const MemoryTier& inner, const Roofs& roofs,
                                          const TileChoices& tiles, TileCache* cache) {
  const TileBudget budget = tile_budget(inner, roofs);
  if (tiled.flash) {
    return best_flash_tile(*tiled.flash, budget, cache);
  }
  if (!tiled.gemm) {
    return std::nullopt;
  }
  const GemmShape& shape = *tiled.gemm;
  const Tile* fixed = tiles.find(inner.name);
  std::optional<TiledTraffic> traffic =
      fixed != nullptr ? gemm_traffic(shape, *fixed) : best_gemm_tile(shape, budget, cache);
  if (fixed != nullptr && !budget.fits(*traffic)) {
    throw InputError(fmt::format(
        "{}: tile {} (bm×bn×bk) for {} needs {} of X and W slices (double-buffered) and {} of "
        "fp32 accumulators for {}, but one {} holds {}{}; pick a smaller bm, bn or bk",
        tiles.origin, to_string(*fixed), inner.name,
        format_capacity((traffic->footprint - traffic->accumulators).si()),
        format_capacity(traffic->accumulators.si()), op.qualified_name(), inner.name,
        format_capacity(inner.capacity.si()),
        budget.accumulator_capacity
            ? fmt::format(" and its accumulators' {} holds {}", inner.accumulator_tier,
                          format_capacity(budget.accumulator_capacity->si()))
            : std::string(" (accumulators included)")));
  }
  if (fixed == nullptr && holds_panels(inner, roofs)) {
    const auto panels = best_panel_tile(shape, inner.capacity, cache);
    if (panels && (!traffic || panels->bytes < traffic->bytes)) {
      traffic = panels;
    }
  }
  if (traffic) {
    traffic->bytes += untiled_inputs(op, 2);
  }
  return traffic;
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
           fmt::format(" = Q+O {} + K/V {} × {:.4g} re-reads{}",
                       format_quantity(shape.query_output_bytes.si(), Dimension::bytes),
                       format_quantity(shape.key_value_bytes.si(), Dimension::bytes),
                       (tier.bytes - shape.query_output_bytes).si() / shape.key_value_bytes.si(),
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

std::vector<TierCost> tier_costs(const Op& op, const Roofs& roofs, const TileChoices& tiles,
                                 TileCache* cache) {
  const Bytes ideal = op_bytes(op);
  const bool tiled = ideal.si() > 0.0;
  const std::size_t tier_count = roofs.memory.size();
  std::vector<TierCost> costs;
  costs.reserve(tier_count);
  for (const MemoryTier& tier : roofs.memory) {
    costs.push_back(TierCost{tier.name, ideal, Seconds(0.0), tier.bandwidth.has_value(),
                             std::nullopt, "", false, false});
  }
  const TiledShape shape = tiled ? tiled_shape(op) : TiledShape{};
  for (std::size_t index = 0; tiled && index + 1 < tier_count; ++index) {
    const MemoryTier& inner = roofs.memory[index + 1];
    if (const auto traffic = tiled_traffic(op, shape, inner, roofs, tiles, cache)) {
      TierCost& cost = costs[index];
      cost.bytes = traffic->bytes;
      cost.tile = traffic->tile;
      cost.tile_tier = inner.name;
      cost.operand_resident = traffic->x_resident || traffic->w_resident;
      cost.panels = traffic->panels;
    }
  }
  for (std::size_t index = 0; index < tier_count; ++index) {
    if (const auto& bandwidth = roofs.memory[index].bandwidth) {
      costs[index].time = costs[index].bytes / *bandwidth;
    }
  }
  return costs;
}

const ComputePath& compute_path_of(const Op& op, const Roofs& roofs) {
  const ComputePath* path = roofs.find_path(op.compute_path);
  if (path == nullptr) {
    throw InputError(fmt::format("{} runs on compute path '{}', which {} does not have (paths: {})",
                                 op.qualified_name(), op.compute_path, roofs.hardware,
                                 roofs.path_names()));
  }
  return *path;
}

OpCost cost_op(const Op& op, const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  const ComputePath* path = &compute_path_of(op, roofs);
  const MemoryTier& memory = roofs.main_memory();
  RSIM_CHECK(memory.bandwidth.has_value(), "main memory without bandwidth passed validation");
  OpCost cost;
  cost.flops = op_flops(op);
  cost.ideal_bytes = op_bytes(op);
  cost.tiers = tier_costs(op, roofs, tiles, cache);
  cost.bytes = cost.tiers.front().bytes;
  cost.t_math = cost.flops / path->peak;
  cost.t_mem = cost.tiers.front().time;
  if (op.kind == OpKind::collective) {
    const auto tiers = roofs.find_networks(op.network);
    RSIM_CHECK(!tiers.empty(), "a plan put a collective on a tier the hardware lacks");
    cost.t_net = collective_cost(op.collective, tiers).time;
  }
  // The slowest tier holds the memory side; every tier's time adds to the no-overlap bound.
  const TierCost* slowest = &cost.tiers.front();
  Seconds t_tiers;
  for (const TierCost& tier : cost.tiers) {
    slowest = tier.time > slowest->time ? &tier : slowest;
    t_tiers += tier.time;
  }
  cost.t_lower = std::max({cost.t_math, slowest->time, cost.t_net});
  cost.t_upper = cost.t_math + t_tiers + cost.t_net;
  cost.intensity = cost.bytes.si() > 0.0 ? intensity(cost.flops, cost.bytes) : 0.0;
  cost.ideal_intensity =
      cost.ideal_bytes.si() > 0.0 ? intensity(cost.flops, cost.ideal_bytes) : 0.0;
  cost.critical_intensity = ridge(path->peak, *memory.bandwidth);
  cost.bound = cost.t_net > std::max(cost.t_math, slowest->time) ? Bound::network
               : cost.t_math > slowest->time                     ? Bound::compute
                                                                 : Bound::memory;
  cost.bound_tier = cost.bound == Bound::memory ? slowest->tier : "";
  return cost;
}

CostTable cost_graph(const OpGraph& graph, const Roofs& roofs, const TileChoices& tiles,
                     TileCache* cache) {
  return cost_graph(graph, graph.topological_order(), roofs, tiles, cache);
}

CostTable cost_graph(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                     const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  CostTable table;
  table.order = order;
  const auto rows = static_cast<Eigen::Index>(table.order.size());
  const auto on_chip_tiers = static_cast<Eigen::Index>(roofs.memory.size()) - 1;
  table.times.resize(rows, CostTable::kFirstOnChipColumn + on_chip_tiers);
  table.counts.resize(rows);
  for (Eigen::Index row = 0; row < rows; ++row) {
    const Op& op = graph.op(table.order[static_cast<std::size_t>(row)]);
    OpCost cost = cost_op(op, roofs, tiles, cache);
    table.times(row, CostTable::kMathColumn) = cost.t_math.si();
    table.times(row, CostTable::kMemoryColumn) = cost.t_mem.si();
    table.times(row, CostTable::kNetworkColumn) = cost.t_net.si();
    for (Eigen::Index tier = 0; tier < on_chip_tiers; ++tier) {
      table.times(row, CostTable::kFirstOnChipColumn + tier) =
          cost.tiers[static_cast<std::size_t>(tier + 1)].time.si();
    }
    table.counts(row) = static_cast<double>(op.count);
    table.costs.push_back(std::move(cost));
  }
  return table;
}

double device_time(const CostTable& table, Eigen::Index row) {
  double longest = std::max(table.times(row, CostTable::kMathColumn),
                            table.times(row, CostTable::kMemoryColumn));
  for (Eigen::Index column = CostTable::kFirstOnChipColumn; column < table.times.cols(); ++column) {
    longest = std::max(longest, table.times(row, column));
  }
  return longest;
}

std::vector<std::string> explain_op(const Op& op, const Roofs& roofs, const TileChoices& tiles) {
  const OpCost cost = cost_op(op, roofs, tiles);
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
    case OpKind::elementwise:
    case OpKind::embedding_gather:
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
    lines.push_back(fmt::format("    = {:.6g} B (ideal: perfect reuse)", cost.ideal_bytes.si()));
  }
  for (const TierCost& tier : cost.tiers) {
    lines.push_back(traffic_line(op, tier));
  }
  lines.push_back(fmt::format("  T_math = {:.6g} FLOP / {} ({}) = {}", cost.flops.si(),
                              format_quantity(path.peak.si(), Dimension::flop_rate), path.name,
                              format_quantity(cost.t_math.si(), Dimension::seconds)));
  for (std::size_t index = 0; index < cost.tiers.size(); ++index) {
    const TierCost& tier = cost.tiers[index];
    const MemoryTier& memory_tier = roofs.memory[index];
    if (memory_tier.bandwidth) {
      lines.push_back(
          fmt::format("  T_{:<5} = {:.6g} B / {} = {}", tier.tier, tier.bytes.si(),
                      format_quantity(memory_tier.bandwidth->si(), Dimension::byte_rate),
                      format_quantity(tier.time.si(), Dimension::seconds)));
    }
  }
  lines.push_back(fmt::format(
      "  intensity = {:.4g} FLOP/B ({}, tiled; ideal {:.4g}) vs ridge {:.4g} FLOP/B → {}-bound{}",
      cost.intensity, memory.name, cost.ideal_intensity, cost.critical_intensity,
      to_string(cost.bound), cost.bound_tier.empty() ? "" : " (" + cost.bound_tier + ")"));
  lines.push_back(fmt::format("  lower = max = {}, upper = sum = {} (per instance)",
                              format_quantity(cost.t_lower.si(), Dimension::seconds),
                              format_quantity(cost.t_upper.si(), Dimension::seconds)));
  return lines;
}

}  // namespace rsim
