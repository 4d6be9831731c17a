// SPDX-License-Identifier: MIT
#pragma once

// How the tile searches (tile_search.cpp) and the settling of their keys (tile_settling.cpp)
// rank candidates, and the rounding bounds that make a ranking certain. Internal to sim/cost,
// not part of the cost API.

#include "sim/base/units.hpp"
#include "sim/cost/tiling.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <tuple>

namespace rsim::tile_ranking {

// Ranks candidates: least traffic, then the larger tile (bm·bn, then bm: a kernel takes the
// biggest tile that fits when bytes tie), then the smaller footprint.
inline auto rank_key(const TiledTraffic& traffic, Bytes bytes) {
  return std::make_tuple(bytes.si(), -traffic.tile.bm * traffic.tile.bn, -traffic.tile.bm,
                         traffic.footprint.si(), -traffic.tile.bk);
}

// A search keeps the best candidate so far (std::optional<TiledTraffic>), or only its bytes
// (LeastBytes): bytes rank first, so the least bytes are the best candidate's whatever breaks
// ties between them. LeastBytes is a bare double (+∞: none yet; no finite sizes reach it), which
// a batch line's searches keep in a register.
struct LeastBytes {
  double bytes = std::numeric_limits<double>::infinity();
};

// `candidate` with `bytes` (its own are not read) becomes `best` if it ranks before it.
inline void keep_better(const TiledTraffic& candidate, Bytes bytes,
                        std::optional<TiledTraffic>& best) {
  if (!best || rank_key(candidate, bytes) < rank_key(*best, best->bytes)) {
    best = candidate;
    best->bytes = bytes;
  }
}
inline void keep_better(const TiledTraffic& /*candidate*/, Bytes bytes, LeastBytes& least) {
  least.bytes = std::min(least.bytes, bytes.si());
}

// Whether a search has found a candidate, and its bytes if so.
inline bool found(const std::optional<TiledTraffic>& best) { return best.has_value(); }
inline bool found(LeastBytes least) {
  return least.bytes < std::numeric_limits<double>::infinity();
}
inline double best_bytes(const std::optional<TiledTraffic>& best) { return best->bytes.si(); }
inline double best_bytes(LeastBytes least) { return least.bytes; }

// Every candidate of `row`, with its bytes from `bytes_of`, against `best`.
template <typename Best, typename BytesOf>
void rank_row(const TileRow& row, const BytesOf& bytes_of, Best& best) {
  for (int index = 0; index < row.count; ++index) {
    const TiledTraffic& candidate = row.candidates[static_cast<std::size_t>(index)];
    keep_better(candidate, bytes_of(candidate), best);
  }
}

// `candidate` would lose a tie of bytes with `winner` (the rest of rank_key).
inline bool loses_tie(const TiledTraffic& candidate, const TiledTraffic& winner) {
  return rank_key(winner, Bytes(0.0)) < rank_key(candidate, Bytes(0.0));
}

// A relative margin of bytes no rounding of gemm_bytes' or flash_bytes' few products and sums
// (~1e-15 each) closes.
inline constexpr double kMargin = 1.0 + 1e-9;

// Below this every bytes figure of a tile search is exact: a dyadic width (k/2^j, j ≤ 7, the
// dtypes' bytes per element) times integer sizes, a multiple of 2^-7 under 2^53 · 2^-7, and each
// partial product and sum of gemm_bytes is no larger than its total. Half of that for headroom.
inline constexpr double kExactBytes = 0x1p45;

}  // namespace rsim::tile_ranking
