// SPDX-License-Identifier: MIT
#pragma once

// What the tile searches (tile_search.cpp, tile_settling.cpp) take from the tile model
// (tiling.cpp): each row edge's candidate tiles, and the bytes a clamped candidate moves, inline
// for the searches' inner loops. Internal to sim/cost, not part of the cost API.

#include "sim/base/units.hpp"
#include "sim/cost/tiling.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace rsim::tile_candidates {

// K-slice depths a streamed tile may take (tensor-core / MXU friendly); K itself makes the
// slice the whole contraction, which lets an operand stay resident.
inline constexpr std::array<std::int64_t, 5> kSliceDepths{16, 32, 64, 128, 256};

// ⌈numerator / denominator⌉; a shift for the power-of-two tile edges most searches try.
inline double ceil_div(std::int64_t numerator, std::int64_t denominator) {
  const auto divisor = static_cast<std::uint64_t>(denominator);
  const std::int64_t rounded_up = numerator + denominator - 1;
  const bool power_of_two = (divisor & (divisor - 1)) == 0;  // no popcount instruction needed
  return static_cast<double>(power_of_two ? rounded_up >> std::countr_zero(divisor)
                                          : rounded_up / denominator);
}

// The bytes of a clamped tile with its residency (gemm_traffic's formula).
inline Bytes gemm_bytes(const GemmShape& shape, const TiledTraffic& traffic) {
  const Tile& clamped = traffic.tile;
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  // X is re-streamed for every column block, W for every row block, unless resident.
  const double x_reads = traffic.x_resident ? 1.0 : ceil_div(shape.n, clamped.bn);
  const double w_reads = traffic.w_resident ? 1.0 : ceil_div(shape.m, clamped.bm);
  return Bytes(shape.batch *
               (shape.x_element_bytes * m * k * x_reads + shape.w_element_bytes * k * n * w_reads +
                shape.out_element_bytes * m * n));
}

// The panels' footprint (best_panel_tile): s_x·bm·K + s_w·K·bn.
inline Bytes panel_footprint(const GemmShape& shape, std::int64_t bm, std::int64_t bn) {
  return Bytes(static_cast<double>(bm) * static_cast<double>(shape.k) * shape.x_element_bytes +
               static_cast<double>(shape.k) * static_cast<double>(bn) * shape.w_element_bytes);
}

// Keys read over T query tiles of bm under a causal window of W keys after C cached ones: tile
// t's queries see keys from its first query's window start to its last query, min(C + end_t,
// end_t − start_t − 1 + W) of them (start_t = t·bm, end_t = min((t+1)·bm, N_q)). The T − 1 full
// tiles read C + (t+1)·bm while that is below the cap K = W + bm − 1: n₁ = clamp(⌊(K − C) / bm⌋,
// 0, T − 1) of them, the rest K each; the last tile min(C + N_q, N_q − (T−1)·bm − 1 + W).
// Without a window this is the causal formula below.
inline double windowed_keys_read(const FlashShape& shape, std::int64_t bm, double tiles) {
  const auto cached = static_cast<double>(shape.cached_tokens);
  const auto edge = static_cast<double>(bm);
  const double cap = static_cast<double>(shape.window) + edge - 1.0;
  const double below = std::clamp(std::floor((cap - cached) / edge), 0.0, tiles - 1.0);
  const auto queries = static_cast<double>(shape.query_tokens);
  const double last = std::min(
      cached + queries, queries - (tiles - 1.0) * edge - 1.0 + static_cast<double>(shape.window));
  return below * cached + edge * below * (below + 1.0) / 2.0 + (tiles - 1.0 - below) * cap + last;
}

// How many times K and V are read for a clamped tile: once per query tile (flash_traffic's
// formula), or once if resident.
inline double flash_rereads(const FlashShape& shape, const TiledTraffic& traffic) {
  const std::int64_t kv_tokens = shape.kv_tokens();
  const Tile& clamped = traffic.tile;
  const double tiles = ceil_div(shape.query_tokens, clamped.bm);
  // Keys read per query tile t: all of them (bidirectional), or the cache plus this stage's
  // keys up to the tile's last query (causal): Σ_t min((t+1)·bm, N_q) = bm·T(T−1)/2 + N_q.
  double keys_read = tiles * static_cast<double>(kv_tokens);
  if (shape.causal && shape.window > 0) {
    keys_read = windowed_keys_read(shape, clamped.bm, tiles);
  } else if (shape.causal) {
    keys_read = tiles * static_cast<double>(shape.cached_tokens) +
                static_cast<double>(clamped.bm) * tiles * (tiles - 1.0) / 2.0 +
                static_cast<double>(shape.query_tokens);
  }
  return traffic.x_resident ? 1.0 : keys_read / static_cast<double>(kv_tokens);
}

// Q and O once, K and V once per query tile (flash_traffic's formula) for a clamped tile.
inline Bytes flash_bytes(const FlashShape& shape, const TiledTraffic& traffic) {
  return shape.query_output_bytes + shape.key_value_bytes * flash_rereads(shape, traffic);
}

// best_gemm_tile's candidates with row edge bm.
TileRow gemm_row(const GemmShape& shape, const TileBudget& budget, std::int64_t bm);

// best_panel_tile's candidate with row edge bm: the panels' footprint grows with bn and the
// traffic never does (W is resident at bn = N).
TileRow panel_row(const GemmShape& shape, Bytes capacity, std::int64_t bm);

// best_flash_tile's candidates with query tile bm: a K/V tile below the whole head (the same
// re-reads whatever its size, a footprint growing with it: the largest that fits), and the whole
// head's K and V (resident, single-buffered, read once).
TileRow flash_row(const FlashShape& shape, const TileBudget& budget, std::int64_t bm);

}  // namespace rsim::tile_candidates
