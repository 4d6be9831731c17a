// SPDX-License-Identifier: MIT
#pragma once

// Parts of costing one op (op_cost.cpp) that the table's fast path (cost_table.cpp) and
// `--explain` (explain.cpp) reuse; internal to sim/cost, not part of the cost API.

#include "sim/base/units.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tile_search.hpp"
#include "sim/cost/tiling.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/tile.hpp"

#include <optional>
#include <vector>

namespace rsim::op_cost_parts {

// Visible (query, key) pairs. Causal: query i of this stage sees the cache and keys 0..i.
double visible_pairs(const AttentionShape& shape);

double attention_flops(const AttentionShape& shape);

double output_elements(const Op& op);

// The tiling model's view of an op, taken once for every tier: a GEMM or an FMHA (or neither).
struct TiledShape {
  std::optional<GemmShape> gemm;
  std::optional<FlashShape> flash;
};

// A shared tier's choice between its best tile's bytes and its best panels' (nullptr: none
// fits): the panels where they read fewer bytes, or where no tile fits.
inline bool panels_win(const Bytes* tile, const Bytes* panels) {
  return panels != nullptr && (tile == nullptr || *panels < *tile);
}

// The traffic a tier serves when `inner` holds the tile: the user's tile for matmuls where one is
// fixed for `inner`, else the best that fits; nullopt for ops the tiling model does not cover.
std::optional<TiledTraffic> tiled_traffic(const Op& op, const TiledShape& tiled,
                                          const InnerTier& inner, const TileChoices& tiles,
                                          TileCache* cache, SettledGemm* settled);

// Every tier of `costs` at the ideal bytes, untimed and untiled (its names set once per table: a
// re-costed table, of the same roofs, already names its tiers).
void reset_tiers(Bytes ideal, const Roofs& roofs, std::vector<TierCost>& costs);

// The tier serves `traffic`, the tile `inner` holds.
void set_tier(const TiledTraffic& traffic, const InnerTier& inner, TierCost& cost);

// The time `tier` takes to serve `bytes` at its bandwidth (zero where it has no figure).
inline Seconds tier_time(Bytes bytes, const MemoryTier& tier) {
  return tier.bandwidth ? bytes / *tier.bandwidth : Seconds(0.0);
}

// Each tier's time at its bandwidth.
void time_tiers(const Roofs& roofs, std::vector<TierCost>& costs);

// The rest of cost_op once `cost` has its FLOPs, ideal bytes and tiers: its main-memory bytes,
// times, intensities and bound against the roofs.
void apply_roofs(const Op& op, const OpCostPlan& plan, const Roofs& roofs, OpCost& cost);

// cost_op with the op's plan and the inner tiers at hand, into `cost` (its tiers reused when it
// already has one entry per tier), the op's FLOPs, bytes and tiers found from its tensors.
void cost_op(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
             const Roofs& roofs, const TileChoices& tiles, TileCache* cache, OpCost& cost);

}  // namespace rsim::op_cost_parts
