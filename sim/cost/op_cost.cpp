// SPDX-License-Identifier: MIT
#include "sim/cost/op_cost.hpp"

#include "sim/base/error.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/op_cost_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace rsim {
namespace op_cost_parts {

double visible_pairs(const AttentionShape& shape) {
  const auto queries = static_cast<double>(shape.query_tokens);
  if (shape.mask == AttentionMask::bidirectional) {
    return queries * static_cast<double>(shape.kv_tokens());
  }
  const auto cached = static_cast<double>(shape.cached_tokens);
  if (shape.window > 0) {
    // Σ_i min(C + i + 1, W) over the queries i: the first n₁ = clamp(W − C, 0, T) see C + i + 1
    // keys, the rest W.
    const auto window = static_cast<double>(shape.window);
    const double growing = std::clamp(window - cached, 0.0, queries);
    return growing * cached + growing * (growing + 1.0) / 2.0 + (queries - growing) * window;
  }
  return queries * cached + queries * (queries + 1.0) / 2.0;
}

// QKᵀ (2·head_dim per pair) and PV (2·value_dim): 4·head_dim when V is as wide as K.
double attention_flops(const AttentionShape& shape) {
  return 2.0 * static_cast<double>(shape.batch) * static_cast<double>(shape.heads) *
         static_cast<double>(shape.head_dim + shape.value_dim()) * visible_pairs(shape) *
         shape.flops_scale;
}

double output_elements(const Op& op) {
  double elements = 0.0;
  for (const Tensor& tensor : op.outputs) {
    elements += static_cast<double>(tensor.elements());
  }
  return elements;
}

}  // namespace op_cost_parts

using op_cost_parts::attention_flops;
using op_cost_parts::output_elements;
using op_cost_parts::reset_tiers;
using op_cost_parts::set_tier;
using op_cost_parts::tiled_traffic;
using op_cost_parts::TiledShape;
using op_cost_parts::time_tiers;

namespace {

// The distinct axes of a matmul's einsum operands, activation and weight (a bias, if any, comes
// third), each at its first appearance.
std::vector<GemmAxis> einsum_axes(const Op& op) {
  std::vector<GemmAxis> distinct;
  for (std::size_t index = 0; index < std::min<std::size_t>(2, op.inputs.size()); ++index) {
    const std::vector<Axis>& axes = op.inputs[index].axes;
    for (std::size_t position = 0; position < axes.size(); ++position) {
      const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const GemmAxis& other) {
        return op.inputs[other.tensor].axes[other.axis].name == axes[position].name;
      });
      if (!seen) {
        distinct.push_back({static_cast<std::uint8_t>(index), static_cast<std::uint8_t>(position)});
      }
    }
  }
  return distinct;
}

double contraction_product(const Op& op, const std::vector<GemmAxis>& distinct) {
  double product = 1.0;
  for (const GemmAxis& axis : distinct) {
    product *= static_cast<double>(op.inputs[axis.tensor].axes[axis.axis].size);
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

// Bytes of the inputs a tile does not cover (a matmul's bias): read once.
Bytes untiled_inputs(const Op& op, std::size_t tiled) {
  Bytes total;
  for (std::size_t index = tiled; index < op.inputs.size(); ++index) {
    total += op.inputs[index].bytes();
  }
  return total;
}

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

TiledShape tiled_shape(const Op& op, const OpCostPlan& plan) {
  TiledShape shape;
  if (plan.gemm) {
    shape.gemm = gemm_shape(op, *plan.gemm);
  } else if (op.kind == OpKind::attention) {
    shape.flash = flash_shape(op);
  }
  return shape;
}

}  // namespace

namespace op_cost_parts {

std::optional<TiledTraffic> tiled_traffic(const Op& op, const TiledShape& tiled,
                                          const InnerTier& inner, const TileChoices& tiles,
                                          TileCache* cache, SettledGemm* settled) {
  const TileBudget& budget = inner.budget;
  if (tiled.flash) {
    return best_flash_tile(*tiled.flash, budget, cache);
  }
  if (!tiled.gemm) {
    return std::nullopt;
  }
  const GemmShape& shape = *tiled.gemm;
  const Tile* fixed = inner.fixed;
  std::optional<TiledTraffic> traffic = fixed != nullptr
                                            ? gemm_traffic(shape, *fixed)
                                            : best_gemm_tile(shape, budget, cache, settled);
  if (fixed != nullptr && !budget.fits(*traffic)) {
    const MemoryTier& tier = *inner.tier;
    throw InputError(fmt::format(
        "{}: tile {} (bm×bn×bk) for {} needs {} of X and W slices (double-buffered) and {} of "
        "fp32 accumulators for {}, but one {} holds {}{}; pick a smaller bm, bn or bk",
        tiles.origin, to_string(*fixed), tier.name,
        format_capacity((traffic->footprint - traffic->accumulators).si()),
        format_capacity(traffic->accumulators.si()), op.qualified_name(), tier.name,
        format_capacity(tier.capacity.si()),
        budget.accumulator_capacity
            ? fmt::format(" and its accumulators' {} holds {}", tier.accumulator_tier,
                          format_capacity(budget.accumulator_capacity->si()))
            : std::string(" (accumulators included)")));
  }
  if (fixed == nullptr && inner.panels) {
    const auto panels = best_panel_tile(shape, inner.tier->capacity, cache,
                                        settled != nullptr ? settled + 1 : nullptr);
    if (panels_win(traffic ? &traffic->bytes : nullptr, panels ? &panels->bytes : nullptr)) {
      traffic = panels;
    }
  }
  if (traffic) {
    traffic->bytes += untiled_inputs(op, 2);
  }
  return traffic;
}

}  // namespace op_cost_parts

std::string bound_label(Bound bound, const std::string& tier) {
  return bound == Bound::compute || tier.empty() ? std::string(to_string(bound))
                                                 : fmt::format("{} ({})", to_string(bound), tier);
}

std::string bound_label(const Op& op, const OpCost& cost) {
  return op.kind == OpKind::elementwise && op.fused ? std::string("fused")
                                                    : bound_label(cost.bound, cost.bound_tier);
}

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

namespace {

Flops op_flops(const Op& op, const std::vector<GemmAxis>& einsum) {
  switch (op.kind) {
    case OpKind::matmul: {
      const double bias_adds = op.inputs.size() > 2 ? output_elements(op) : 0.0;
      return Flops(2.0 * contraction_product(op, einsum) + bias_adds);
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

}  // namespace

Flops op_flops(const Op& op) {
  return op_flops(op, op.kind == OpKind::matmul ? einsum_axes(op) : std::vector<GemmAxis>{});
}

Bytes op_bytes(const Op& op) {
  // A collective's bytes cross the network tier (T_net), not counted against DRAM.
  if ((op.kind == OpKind::elementwise && op.fused) || op.kind == OpKind::collective) {
    return Bytes(0.0);
  }
  return tensor_bytes(op.inputs) + tensor_bytes(op.outputs);
}

namespace op_cost_parts {

void reset_tiers(Bytes ideal, const Roofs& roofs, std::vector<TierCost>& costs) {
  const std::size_t tier_count = roofs.memory.size();
  if (costs.size() != tier_count) {
    costs.assign(tier_count, TierCost{});
    for (std::size_t index = 0; index < tier_count; ++index) {
      costs[index].tier = roofs.memory[index].name;
    }
  }
  for (std::size_t index = 0; index < tier_count; ++index) {
    TierCost& cost = costs[index];
    cost.bytes = ideal;
    cost.time = Seconds(0.0);
    cost.timed = roofs.memory[index].bandwidth.has_value();
    cost.tile.reset();
    cost.operand_resident = false;
    cost.panels = false;
  }
}

void set_tier(const TiledTraffic& traffic, const InnerTier& inner, TierCost& cost) {
  cost.bytes = traffic.bytes;
  cost.tile = traffic.tile;
  if (cost.tile_tier.empty()) {  // else it already names this inner tier
    cost.tile_tier = inner.tier->name;
  }
  cost.operand_resident = traffic.x_resident || traffic.w_resident;
  cost.panels = traffic.panels;
}

void time_tiers(const Roofs& roofs, std::vector<TierCost>& costs) {
  for (std::size_t index = 0; index < costs.size(); ++index) {
    costs[index].time = tier_time(costs[index].bytes, roofs.memory[index]);
    if (!costs[index].tile) {
      costs[index].tile_tier.clear();
    }
  }
}

}  // namespace op_cost_parts

namespace {

// tier_costs into `costs` (reused when it already has one entry per tier).
void tier_costs(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                Bytes ideal, const Roofs& roofs, const TileChoices& tiles, TileCache* cache,
                std::vector<TierCost>& costs) {
  const bool tiled = ideal.si() > 0.0;
  reset_tiers(ideal, roofs, costs);
  const TiledShape shape = tiled ? tiled_shape(op, plan) : TiledShape{};
  for (std::size_t index = 0; tiled && index + 1 < costs.size(); ++index) {
    const InnerTier& inner = inner_tiers[index];
    // The tier's tile and panel searches, once settled (a plan that keeps them).
    SettledGemm* settled = plan.settled.empty() ? nullptr : &plan.settled[2 * index];
    if (const auto traffic = tiled_traffic(op, shape, inner, tiles, cache, settled)) {
      set_tier(*traffic, inner, costs[index]);
    }
  }
  time_tiers(roofs, costs);
}

}  // namespace

std::vector<InnerTier> plan_inner_tiers(const Roofs& roofs, const TileChoices& tiles) {
  std::vector<InnerTier> inner_tiers;
  for (std::size_t index = 1; index < roofs.memory.size(); ++index) {
    const MemoryTier& tier = roofs.memory[index];
    inner_tiers.push_back(
        {&tier, tile_budget(tier, roofs), holds_panels(tier, roofs), tiles.find(tier.name)});
  }
  return inner_tiers;
}

std::vector<TierCost> tier_costs(const Op& op, const Roofs& roofs, const TileChoices& tiles,
                                 TileCache* cache) {
  std::vector<TierCost> costs;
  OpCostPlan plan = plan_op_cost(op, roofs);
  tier_costs(op, plan, plan_inner_tiers(roofs, tiles), op_bytes(op), roofs, tiles, cache, costs);
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

OpCostPlan plan_op_cost(const Op& op, const Roofs& roofs) {
  OpCostPlan plan;
  plan.path = &compute_path_of(op, roofs);
  if (op.kind == OpKind::collective) {
    plan.networks = roofs.find_networks(op.network);
    RSIM_CHECK(!plan.networks.empty(), "a plan put a collective on a tier the hardware lacks");
  }
  if (op.kind == OpKind::matmul) {
    plan.gemm = gemm_axes(op);
    plan.einsum_axes = einsum_axes(op);
  }
  return plan;
}

namespace op_cost_parts {

void apply_roofs(const Op& op, const OpCostPlan& plan, const Roofs& roofs, OpCost& cost) {
  const MemoryTier& memory = roofs.main_memory();
  RSIM_CHECK(memory.bandwidth.has_value(), "main memory without bandwidth passed validation");
  cost.bytes = cost.tiers.front().bytes;
  cost.t_math = cost.flops / plan.path->peak;
  cost.t_mem = cost.tiers.front().time;
  cost.t_net = op.kind == OpKind::collective
                   ? collective_cost(op.collective, plan.networks, false).time
                   : Seconds(0.0);
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
  cost.critical_intensity = ridge(plan.path->peak, *memory.bandwidth);
  cost.bound = cost.t_net > std::max(cost.t_math, slowest->time) ? Bound::network
               : cost.t_math > slowest->time                     ? Bound::compute
                                                                 : Bound::memory;
  if (cost.bound == Bound::memory) {
    cost.bound_tier = slowest->tier;
  } else if (cost.bound == Bound::network) {
    cost.bound_tier = op.network;
  } else {
    cost.bound_tier.clear();
  }
}

void cost_op(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
             const Roofs& roofs, const TileChoices& tiles, TileCache* cache, OpCost& cost) {
  cost.flops = op_flops(op, plan.einsum_axes);
  cost.ideal_bytes = op_bytes(op);
  tier_costs(op, plan, inner_tiers, cost.ideal_bytes, roofs, tiles, cache, cost.tiers);
  apply_roofs(op, plan, roofs, cost);
}

}  // namespace op_cost_parts

OpCost cost_op(const Op& op, const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  OpCost cost;
  OpCostPlan plan = plan_op_cost(op, roofs);
  op_cost_parts::cost_op(op, plan, plan_inner_tiers(roofs, tiles), roofs, tiles, cache, cost);
  return cost;
}

}  // namespace rsim
