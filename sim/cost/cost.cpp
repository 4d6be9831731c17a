// SPDX-License-Identifier: MIT
#include "sim/cost/cost.hpp"

#include "sim/base/error.hpp"
#include "sim/cost/collectives.hpp"

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

TiledShape tiled_shape(const Op& op, const OpCostPlan& plan) {
  TiledShape shape;
  if (plan.gemm) {
    shape.gemm = gemm_shape(op, *plan.gemm);
  } else if (op.kind == OpKind::attention) {
    shape.flash = flash_shape(op);
  }
  return shape;
}

// A shared tier's choice between its best tile's bytes and its best panels' (nullptr: none
// fits): the panels where they read fewer bytes, or where no tile fits.
bool panels_win(const Bytes* tile, const Bytes* panels) {
  return panels != nullptr && (tile == nullptr || *panels < *tile);
}

// The traffic a tier serves when `inner` holds the tile: the user's tile for matmuls where one is
// fixed for `inner`, else the best that fits; nullopt for ops the tiling model does not cover.
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

namespace {

// Every tier of `costs` at the ideal bytes, untimed and untiled (its names set once per table: a
// re-costed table, of the same roofs, already names its tiers).
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

// The tier serves `traffic`, the tile `inner` holds.
void set_tier(const TiledTraffic& traffic, const InnerTier& inner, TierCost& cost) {
  cost.bytes = traffic.bytes;
  cost.tile = traffic.tile;
  if (cost.tile_tier.empty()) {  // else it already names this inner tier
    cost.tile_tier = inner.tier->name;
  }
  cost.operand_resident = traffic.x_resident || traffic.w_resident;
  cost.panels = traffic.panels;
}

// The time `tier` takes to serve `bytes` at its bandwidth (zero where it has no figure).
Seconds tier_time(Bytes bytes, const MemoryTier& tier) {
  return tier.bandwidth ? bytes / *tier.bandwidth : Seconds(0.0);
}

// Each tier's time at its bandwidth.
void time_tiers(const Roofs& roofs, std::vector<TierCost>& costs) {
  for (std::size_t index = 0; index < costs.size(); ++index) {
    costs[index].time = tier_time(costs[index].bytes, roofs.memory[index]);
    if (!costs[index].tile) {
      costs[index].tile_tier.clear();
    }
  }
}

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

namespace {

// --- Compiled sizes (CostPlan::compile): op_flops, op_bytes, gemm_shape and tier_costs of a
// matmul or a plain op from pointers to its sizes, with the same arithmetic in the same order.

// Tensor::elements() from the tensor's sizes (its overflow, too: the tensor itself reports it).
std::int64_t elements(const OpSizes& sizes, const OpSizes::Tensor& tensor, const Tensor& named) {
  std::int64_t product = 1;
  for (std::uint32_t index = tensor.first; index < tensor.last; ++index) {
    if (__builtin_mul_overflow(product, *sizes.sizes[index], &product)) {
      return named.elements();  // throws
    }
  }
  return product;
}

// tensor_bytes(): Σ Tensor::bytes() of the tensors from `first` on.
Bytes tensors_bytes(const OpSizes& sizes, const std::vector<OpSizes::Tensor>& tensors,
                    const std::vector<Tensor>& named, std::size_t first = 0) {
  Bytes total;
  for (std::size_t index = first; index < tensors.size(); ++index) {
    const OpSizes::Tensor& tensor = tensors[index];
    total += Bytes(static_cast<double>(elements(sizes, tensor, named[index])) * tensor.width);
  }
  return total;
}

// output_elements().
double output_elements(const OpSizes& sizes, const Op& op) {
  double total = 0.0;
  for (std::size_t index = 0; index < sizes.outputs.size(); ++index) {
    total += static_cast<double>(elements(sizes, sizes.outputs[index], op.outputs[index]));
  }
  return total;
}

// gemm_shape()'s axis_product.
std::int64_t size_product(const std::vector<const std::int64_t*>& factors) {
  std::int64_t product = 1;
  for (const std::int64_t* size : factors) {
    product *= *size;
  }
  return product;
}

// op_flops() of a matmul or a plain op (elementwise, gather, cache write).
Flops compiled_flops(const Op& op, const OpSizes& sizes) {
  if (op.kind == OpKind::matmul) {
    double product = 1.0;
    for (const std::int64_t* size : sizes.einsum) {
      product *= static_cast<double>(*size);
    }
    const double bias_adds = op.inputs.size() > 2 ? output_elements(sizes, op) : 0.0;
    return Flops(2.0 * product + bias_adds);
  }
  return op.kind == OpKind::kv_cache_write
             ? Flops(0.0)
             : Flops(op.flops_per_element * output_elements(sizes, op));
}

// op_bytes() of a matmul or a plain op.
Bytes compiled_ideal_bytes(const Op& op, const OpSizes& sizes) {
  return op.kind == OpKind::elementwise && op.fused
             ? Bytes(0.0)
             : tensors_bytes(sizes, sizes.inputs, op.inputs) +
                   tensors_bytes(sizes, sizes.outputs, op.outputs);
}

// gemm_shape() of a matmul.
GemmShape compiled_gemm_shape(const OpSizes& sizes) {
  GemmShape shape;
  shape.batch = static_cast<double>(size_product(sizes.gemm[0]));
  shape.m = size_product(sizes.gemm[1]);
  shape.n = size_product(sizes.gemm[2]);
  shape.k = size_product(sizes.gemm[3]);
  shape.x_element_bytes = sizes.inputs[0].width;
  shape.w_element_bytes = sizes.inputs[1].width;
  shape.out_element_bytes = sizes.outputs.front().width;
  return shape;
}

// The traffic tier `index` serves a compiled matmul of `shape` (tiled_traffic with the plan's
// settled searches, which answer where they can).
std::optional<TiledTraffic> compiled_traffic(const Op& op, OpCostPlan& plan, const GemmShape& shape,
                                             const std::vector<InnerTier>& inner_tiers,
                                             std::size_t index, const TileChoices& tiles,
                                             TileCache& cache) {
  return tiled_traffic(op, TiledShape{shape, std::nullopt}, inner_tiers[index], tiles, &cache,
                       &plan.settled[2 * index]);
}

// A matmul or a plain op: cost_op's FLOPs, ideal bytes and tiers from the compiled sizes (a
// plain op's every tier serves the ideal bytes: no tile).
void recost_compiled(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                     const Roofs& roofs, const TileChoices& tiles, TileCache& cache, OpCost& cost) {
  const OpSizes& sizes = *plan.sizes;
  cost.flops = compiled_flops(op, sizes);
  cost.ideal_bytes = compiled_ideal_bytes(op, sizes);
  reset_tiers(cost.ideal_bytes, roofs, cost.tiers);
  if (op.kind == OpKind::matmul && cost.ideal_bytes.si() > 0.0) {
    const GemmShape shape = compiled_gemm_shape(sizes);
    for (std::size_t index = 0; index + 1 < cost.tiers.size(); ++index) {
      if (const auto traffic =
              compiled_traffic(op, plan, shape, inner_tiers, index, tiles, cache)) {
        set_tier(*traffic, inner_tiers[index], cost.tiers[index]);
      }
    }
  }
  time_tiers(roofs, cost.tiers);
}

// The bytes tier `index` serves a compiled matmul of `shape` where its kept searches answer
// (settled_tile_bytes, settled_panel_bytes: they hold their keys' rows): compiled_traffic's
// figure, bit for bit (tiled_traffic's choice and its untiled inputs), with no tile copied.
// nullopt where compiled_traffic must search (and keep the searches).
OptionalBytes settled_tier_bytes(const Op& op, OpCostPlan& plan, const GemmShape& shape,
                                 const InnerTier& inner, std::size_t index, TileCache& cache) {
  if (inner.fixed != nullptr) {
    return std::nullopt;
  }
  const auto tile = settled_tile_bytes(plan.settled[2 * index], shape, inner.budget, cache);
  if (!tile) {
    return std::nullopt;
  }
  Bytes bytes = *tile;
  if (inner.panels) {
    const auto panels =
        settled_panel_bytes(plan.settled[2 * index + 1], shape, inner.tier->capacity, cache);
    if (!panels) {
      return std::nullopt;
    }
    if (panels_win(&bytes, panels.operator->())) {
      bytes = *panels;
    }
  }
  const OpSizes& sizes = *plan.sizes;
  return bytes + tensors_bytes(sizes, sizes.inputs, op.inputs, 2);
}

// Ops a compiled plan re-costs from their sizes.
bool compiled_kind(OpKind kind) {
  return kind == OpKind::matmul || kind == OpKind::elementwise ||
         kind == OpKind::embedding_gather || kind == OpKind::kv_cache_write;
}

// Whether the plan of this op was compiled (and a cache keeps its searches).
bool compiled(const OpCostPlan& plan, const TileCache* cache) {
  return plan.sizes.has_value() && cache != nullptr;
}

// An op's figures straight into its table row, by cost_op's arithmetic with no OpCost in between:
// T_math of `flops`, each tier's time at the bytes it serves (the ideal bytes, or, where `tiled`,
// what `inner_bytes(index)` finds for the tile inner tier `index` holds, if any), and T_net.
template <typename InnerBytes>
void write_times(const Op& op, const OpCostPlan& plan, Flops flops, Bytes ideal, bool tiled,
                 const InnerBytes& inner_bytes, Seconds t_net, const Roofs& roofs, CostTable& table,
                 Eigen::Index row) {
  table.times(row, CostTable::kMathColumn) = (flops / plan.path->peak).si();
  table.times(row, CostTable::kNetworkColumn) = t_net.si();
  const std::size_t tiers = roofs.memory.size();
  for (std::size_t index = 0; index < tiers; ++index) {
    Bytes bytes = ideal;
    if (tiled && index + 1 < tiers) {
      if (const OptionalBytes served = inner_bytes(index)) {
        bytes = *served;
      }
    }
    table.times(row, CostTable::tier_column(index)) = tier_time(bytes, roofs.memory[index]).si();
  }
  table.counts(row) = static_cast<double>(op.count);
}

// A compiled op (matmul or plain) from its sizes: recost_compiled's figures, with the tiers'
// kept searches answering by their winners' bytes where they can.
void compiled_times(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                    const Roofs& roofs, const TileChoices& tiles, TileCache& cache,
                    CostTable& table, Eigen::Index row) {
  const OpSizes& sizes = *plan.sizes;
  const Bytes ideal = plan.ideal_bytes ? *plan.ideal_bytes : compiled_ideal_bytes(op, sizes);
  const bool tiled = op.kind == OpKind::matmul && ideal.si() > 0.0;
  const GemmShape shape = tiled ? compiled_gemm_shape(sizes) : GemmShape{};
  const auto inner_bytes = [&](std::size_t index) -> OptionalBytes {
    if (const auto settled =
            settled_tier_bytes(op, plan, shape, inner_tiers[index], index, cache)) {
      return settled;
    }
    if (const auto traffic = compiled_traffic(op, plan, shape, inner_tiers, index, tiles, cache)) {
      return traffic->bytes;
    }
    return std::nullopt;
  };
  write_times(op, plan, compiled_flops(op, sizes), ideal, tiled, inner_bytes, Seconds(0.0), roofs,
              table, row);
}

// A fused attention: cost_op's FLOPs, ideal bytes and FMHA tiles (tiled_traffic's flash search).
void attention_times(const Op& op, const OpCostPlan& plan,
                     const std::vector<InnerTier>& inner_tiers, const Roofs& roofs,
                     TileCache& cache, CostTable& table, Eigen::Index row) {
  const Bytes ideal = plan.ideal_bytes ? *plan.ideal_bytes : op_bytes(op);
  const bool tiled = ideal.si() > 0.0;
  const FlashShape shape = tiled ? flash_shape(op) : FlashShape{};
  const auto inner_bytes = [&](std::size_t index) -> OptionalBytes {
    if (const auto traffic = best_flash_tile(shape, inner_tiers[index].budget, &cache)) {
      return traffic->bytes;
    }
    return std::nullopt;
  };
  write_times(op, plan, Flops(attention_flops(op.attention)), ideal, tiled, inner_bytes,
              Seconds(0.0), roofs, table, row);
}

// A collective: no FLOPs and no memory bytes (its bytes cross the network), its T_net.
void collective_times(const Op& op, const OpCostPlan& plan, const Roofs& roofs, CostTable& table,
                      Eigen::Index row) {
  const auto none = [](std::size_t) { return OptionalBytes(); };
  write_times(op, plan, Flops(0.0), Bytes(0.0), false, none,
              collective_cost(op.collective, plan.networks, false).time, roofs, table, row);
}

void cost_op(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
             const Roofs& roofs, const TileChoices& tiles, TileCache* cache, OpCost& cost) {
  const MemoryTier& memory = roofs.main_memory();
  RSIM_CHECK(memory.bandwidth.has_value(), "main memory without bandwidth passed validation");
  if (compiled(plan, cache)) {
    recost_compiled(op, plan, inner_tiers, roofs, tiles, *cache, cost);
  } else {
    cost.flops = op_flops(op, plan.einsum_axes);
    cost.ideal_bytes = op_bytes(op);
    tier_costs(op, plan, inner_tiers, cost.ideal_bytes, roofs, tiles, cache, cost.tiers);
  }
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
  } else {
    cost.bound_tier.clear();
  }
}

}  // namespace

OpCost cost_op(const Op& op, const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  OpCost cost;
  OpCostPlan plan = plan_op_cost(op, roofs);
  cost_op(op, plan, plan_inner_tiers(roofs, tiles), roofs, tiles, cache, cost);
  return cost;
}

CostPlan plan_costs(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                    const Roofs& roofs, const TileChoices& tiles) {
  CostPlan plan;
  plan.inner_tiers = plan_inner_tiers(roofs, tiles);
  for (const OpGraph::Vertex vertex : order) {
    plan.ops.push_back(plan_op_cost(graph.op(vertex), roofs));
  }
  return plan;
}

void CostPlan::compile(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order) {
  RSIM_CHECK(order.size() == ops.size(), "a cost plan compiled for another graph");
  for (std::size_t row = 0; row < order.size(); ++row) {
    const Op& op = graph.op(order[row]);
    OpCostPlan& plan = ops[row];
    if (!compiled_kind(op.kind)) {
      continue;
    }
    OpSizes sizes;
    const auto add = [&](const Tensor& tensor, std::vector<OpSizes::Tensor>& tensors) {
      const auto first = static_cast<std::uint32_t>(sizes.sizes.size());
      for (const Axis& axis : tensor.axes) {
        sizes.sizes.push_back(&axis.size);
      }
      tensors.push_back(
          {first, static_cast<std::uint32_t>(sizes.sizes.size()), bytes_per_element(tensor.dtype)});
    };
    for (const Tensor& tensor : op.inputs) {
      add(tensor, sizes.inputs);
    }
    for (const Tensor& tensor : op.outputs) {
      add(tensor, sizes.outputs);
    }
    if (plan.gemm) {
      // gemm_shape's tensors, by GemmAxis::tensor.
      const std::array<const Tensor*, 3> tensors{&op.inputs[0], &op.inputs[1], &op.outputs.front()};
      const GemmAxes& axes = *plan.gemm;
      std::size_t kind = 0;
      for (const std::vector<GemmAxis>* of_kind : {&axes.batch, &axes.m, &axes.n, &axes.k}) {
        for (const GemmAxis& axis : *of_kind) {
          sizes.gemm[kind].push_back(&tensors[axis.tensor]->axes[axis.axis].size);
        }
        ++kind;
      }
      for (const GemmAxis& axis : plan.einsum_axes) {
        sizes.einsum.push_back(&op.inputs[axis.tensor].axes[axis.axis].size);
      }
      plan.settled.resize(2 * inner_tiers.size());
    }
    plan.sizes = std::move(sizes);
  }
}

CostTable cost_graph(const OpGraph& graph, const Roofs& roofs, const TileChoices& tiles,
                     TileCache* cache) {
  return cost_graph(graph, graph.topological_order(), roofs, tiles, cache);
}

namespace {

// Row `row` of the table's times and counts from its op's cost.
void fill_row(CostTable& table, Eigen::Index row, const OpCost& cost, const Op& op) {
  table.times(row, CostTable::kMathColumn) = cost.t_math.si();
  table.times(row, CostTable::kMemoryColumn) = cost.t_mem.si();
  table.times(row, CostTable::kNetworkColumn) = cost.t_net.si();
  for (std::size_t tier = 1; tier < cost.tiers.size(); ++tier) {
    table.times(row, CostTable::tier_column(tier)) = cost.tiers[tier].time.si();
  }
  table.counts(row) = static_cast<double>(op.count);
}

}  // namespace

CostTable empty_cost_table(const std::vector<OpGraph::Vertex>& order, const Roofs& roofs) {
  CostTable table;
  table.order = order;
  const auto rows = static_cast<Eigen::Index>(table.order.size());
  const auto on_chip_tiers = static_cast<Eigen::Index>(roofs.memory.size()) - 1;
  table.times = Eigen::ArrayXXd::Zero(rows, CostTable::kFirstOnChipColumn + on_chip_tiers);
  table.counts = Eigen::ArrayXd::Zero(rows);
  for (const MemoryTier& tier : roofs.memory) {
    table.tier_names.push_back(tier.name);
  }
  table.costs.resize(table.order.size());
  return table;
}

CostTable cost_graph(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                     const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  CostTable table = empty_cost_table(order, roofs);
  CostPlan plan = plan_costs(graph, order, roofs, tiles);
  recost_graph(graph, plan, roofs, tiles, cache, table);
  return table;
}

namespace {

// `recost` of each row of `rows` (every row of the table if none), in order.
template <typename Recost>
void for_rows(const CostPlan& plan, const CostTable& table, const std::vector<std::size_t>* rows,
              const Recost& recost) {
  RSIM_CHECK(plan.ops.size() == table.order.size() && table.costs.size() == table.order.size(),
             "re-costing with a table or plan of another graph");
  if (rows == nullptr) {
    for (std::size_t row = 0; row < table.order.size(); ++row) {
      recost(row);
    }
    return;
  }
  for (const std::size_t row : *rows) {
    RSIM_CHECK(row < table.order.size(), "re-costing a row the table does not have");
    recost(row);
  }
}

}  // namespace

void recost_graph(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache* cache, CostTable& table,
                  const std::vector<std::size_t>* rows) {
  for_rows(plan, table, rows, [&](std::size_t row) {
    const Op& op = graph.op(table.order[row]);
    cost_op(op, plan.ops[row], plan.inner_tiers, roofs, tiles, cache, table.costs[row]);
    fill_row(table, static_cast<Eigen::Index>(row), table.costs[row], op);
  });
}

void recost_times(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache& cache, CostTable& table,
                  const std::vector<std::size_t>* rows) {
  for_rows(plan, table, rows, [&](std::size_t row) {
    const Op& op = graph.op(table.order[row]);
    OpCostPlan& op_plan = plan.ops[row];
    const auto index = static_cast<Eigen::Index>(row);
    if (compiled(op_plan, &cache)) {
      compiled_times(op, op_plan, plan.inner_tiers, roofs, tiles, cache, table, index);
      return;
    }
    if (op.kind == OpKind::attention) {
      attention_times(op, op_plan, plan.inner_tiers, roofs, cache, table, index);
      return;
    }
    if (op.kind == OpKind::collective) {
      collective_times(op, op_plan, roofs, table, index);
      return;
    }
    cost_op(op, op_plan, plan.inner_tiers, roofs, tiles, &cache, table.costs[row]);
    fill_row(table, index, table.costs[row], op);
  });
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
