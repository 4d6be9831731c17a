// SPDX-License-Identifier: MIT
#pragma once

// Settling a TileCache key: whether one tile (its certified winner) wins every search the key
// settles, and the key's front (the candidates no other one beats at every M past its rows).
// Used by the searches (tile_search.cpp); internal to sim/cost, not part of the cost API.

#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tiling.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rsim::tile_settling {

// How a candidate stands against a key's winner at every size the key settles.
enum class Standing {
  loses,           ///< at every such size
  loses_if_exact,  ///< where every bytes figure is exact (below kExactBytes): a tie or near-tie
  unknown,         ///< the winner cannot be settled
};

// Settles a key: `standing` classifies every candidate of `rows` (the first `row_count`) and of
// `extra` against the search's winner; the worst standing decides.
template <typename StandingOf>
TileCache::Rows::Settled settle(const std::vector<TileRow>& rows, std::size_t row_count,
                                const TileRow& extra, const StandingOf& standing) {
  using Settled = TileCache::Rows::Settled;
  Standing worst = Standing::loses;
  const auto classify = [&](const TileRow& row) {
    for (int index = 0; index < row.count; ++index) {
      worst = std::max(worst, standing(row.candidates[static_cast<std::size_t>(index)]));
    }
  };
  classify(extra);
  for (std::size_t index = 0; index < row_count; ++index) {
    classify(rows[index]);
  }
  switch (worst) {
    case Standing::loses:
      return Settled::certified;
    case Standing::loses_if_exact:
      return Settled::certified_if_exact;
    case Standing::unknown:
      break;
  }
  return Settled::refused;
}

// The candidates of the first `row_count` rows that no other one beats at every M past them: one
// read at least as often from X and from W as another, which it loses ties to, never ranks first.
// Proof: docs/design/tiling.md#the-front
std::vector<TiledTraffic> past_rows_front(const GemmShape& shape, const std::vector<TileRow>& rows,
                                          std::size_t row_count);

// Sorts a front by its slopes into `slopes` (ties: the rows' order, for determinism).
void order_front(const GemmShape& shape, std::vector<TiledTraffic>& front,
                 std::vector<double>& slopes);

// Settles a GEMM key past its rows (they ended with row `last` + 1 empty): its winner, its
// standing (Rows::settled) and its front. Proof: docs/design/tiling.md#the-certified-winner
void settle_gemm(const GemmShape& shape, TileCache::Rows& cached, int last);

}  // namespace rsim::tile_settling
