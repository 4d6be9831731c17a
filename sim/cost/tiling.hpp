// SPDX-License-Identifier: MIT
#pragma once

// The on-chip tile model: a matmul's or a fused attention's shape as tiles see it, the bytes a
// tile makes the outer tier serve, its footprint and whether it fits a tier's budget. The search
// for the best tile: tile_search.hpp; the cache it keeps: tile_cache.hpp.

#include "sim/base/units.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/tile.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace rsim {

/// One (batched) matmul as the tiling model sees it: `batch` independent products of an M×K
/// activation X and a K×N operand W (a weight, or K of attention scores) into an M×N output.
struct GemmShape {
  double batch = 1.0;
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  double x_element_bytes = 2.0;
  double w_element_bytes = 2.0;
  double out_element_bytes = 2.0;
  double accumulator_bytes = 4.0;  ///< fp32 / int32 partial sums held on chip
};

/// One axis of a matmul's X (tensor 0: its first input), W (1: its second) or output (2), by
/// position in that tensor's axes.
struct GemmAxis {
  std::uint8_t tensor = 0;
  std::uint8_t axis = 0;
};

/// The classification of a matmul op's axes: M = in X and the output only, N = in W and the
/// output only, K = in X and W only (contracted), batch = in all three. Names follow the op's
/// logical axes, so sharded and batched (per-sequence weights, unfused attention) matmuls work.
/// Found once, it gives the shape of the same op at other sizes without matching names again.
struct GemmAxes {
  std::vector<GemmAxis> batch;  ///< of the output
  std::vector<GemmAxis> m;      ///< of X
  std::vector<GemmAxis> n;      ///< of W
  std::vector<GemmAxis> k;      ///< of X
};
GemmAxes gemm_axes(const Op& matmul);

/// The GEMM of a matmul: the product of each class's axis sizes and the element widths.
GemmShape gemm_shape(const Op& matmul, const GemmAxes& axes);
GemmShape gemm_shape(const Op& matmul);

/// One fused attention (FMHA) as the tiling model sees it: per (sequence, KV head), `group`
/// query heads (GQA packs them into one query tile) attend over `kv_tokens` keys.
struct FlashShape {
  double instances = 1.0;  ///< sequences × KV heads
  std::int64_t group = 1;  ///< query heads per KV head
  std::int64_t query_tokens = 1;
  std::int64_t cached_tokens = 0;
  std::int64_t head_dim = 1;
  bool causal = false;
  std::int64_t window = 0;   ///< causal: keys a query sees at most (AttentionShape::window)
  Bytes query_output_bytes;  ///< Q read once and O written once, all instances
  Bytes key_value_bytes;     ///< K and V (cache included) read once, all instances
  double q_element_bytes = 2.0;
  double kv_element_bytes = 2.0;
  [[nodiscard]] std::int64_t kv_tokens() const { return cached_tokens + query_tokens; }
};

/// Where a fused attention's FlashShape reads its figures: the axis of K that counts the KV
/// heads (-1: none, as many as the query heads), and which inputs are laid out like Q (read once
/// per query tile, as Q is) rather than re-read like K and V. Found by name once per op; a plan
/// re-costing the op at other sizes keeps it (CostPlan::compile).
struct FlashLayout {
  int kv_heads_axis = -1;
  std::vector<bool> query_like;  ///< per input (Q itself first)
};

FlashLayout flash_layout(const Op& attention);
FlashShape flash_shape(const Op& attention, const FlashLayout& layout);
FlashShape flash_shape(const Op& attention);

/// The traffic across one tier boundary with one tile: what the outer tier serves to the inner.
struct TiledTraffic {
  Tile tile;                ///< clamped to the shape
  Bytes bytes;              ///< all instances
  Bytes footprint;          ///< one tile's working set: operand slices + accumulators
  Bytes accumulators;       ///< the part of the footprint that is fp32 accumulators
  bool x_resident = false;  ///< X (attention: K/V) stays in the inner tier: read once
  bool w_resident = false;  ///< W stays in the inner tier: read once
  bool panels = false;      ///< the panel schedule (best_panel_tile)
};

/// Bytes of a matmul with every operand read once and the output written once.
Bytes ideal_traffic(const GemmShape& shape);

/// Traffic with a given tile (scaling book tiling footnote, generalised to dtypes):
///   s_x·M·K·⌈N/bn⌉ + s_w·K·N·⌈M/bm⌉ + s_o·M·N   (per instance, × batch),
/// except that an operand whose whole block stays put (bm ≥ M and bk ≥ K for X; bn ≥ N and bk ≥ K
/// for W) is resident: loaded once. Footprint: double-buffered slices of the streamed operands,
/// a single copy of a resident one, and the bm×bn accumulator.
TiledTraffic gemm_traffic(const GemmShape& shape, Tile tile);

/// What a tile may occupy: the inner tier's capacity, with the accumulators either in it or in
/// a tier of their own (GPU registers or TMEM: `accumulators:` of a memory tier).
struct TileBudget {
  Bytes capacity;
  std::optional<Bytes> accumulator_capacity;  ///< absent: accumulators share `capacity`
  [[nodiscard]] bool fits(const TiledTraffic& traffic) const;
};

/// The candidate tiles a search keeps for one row edge bm, once every (bn, bk) that cannot win
/// is pruned: at most three (streamed, bk = K, W resident), each with its footprint and residency
/// (its bytes are the search's to fill in). None: no tile of that bm fits.
struct TileRow {
  std::array<TiledTraffic, 3> candidates{};
  int count = 0;
  void add(const TiledTraffic& candidate);
};

/// FMHA traffic with a query tile bm and a K/V tile bn: Q and O once; K and V once per query
/// tile (causal: only the keys that tile can see), or once if one head's K and V fit
/// (resident). Footprint: Q tile, double-buffered K and V tiles (or the whole head's), the fp32
/// score tile and the fp32 output accumulator, all for `group` packed query heads.
TiledTraffic flash_traffic(const FlashShape& shape, Tile tile);

}  // namespace rsim
