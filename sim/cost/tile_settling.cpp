// SPDX-License-Identifier: MIT
#include "sim/cost/tile_settling.hpp"

#include "sim/cost/tile_candidates.hpp"
#include "sim/cost/tile_ranking.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace rsim::tile_settling {

using tile_candidates::ceil_div;
using tile_candidates::gemm_bytes;
using tile_ranking::kExactBytes;
using tile_ranking::kMargin;
using tile_ranking::loses_tie;
using tile_ranking::rank_row;

namespace {

// Bytes per M·batch a candidate past the rows reads at least: gemm_bytes' terms with
// ⌈M/bm⌉ ≥ M/bm, and a resident W's (not ∝ M) left out.
double past_rows_slope(const GemmShape& shape, const TiledTraffic& candidate) {
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  const double w_slope =
      candidate.w_resident ? 0.0
                           : shape.w_element_bytes * k * n / static_cast<double>(candidate.tile.bm);
  return shape.x_element_bytes * k * ceil_div(shape.n, candidate.tile.bn) + w_slope +
         shape.out_element_bytes * n;
}

}  // namespace

std::vector<TiledTraffic> past_rows_front(const GemmShape& shape, const std::vector<TileRow>& rows,
                                          std::size_t row_count) {
  std::vector<TiledTraffic> candidates;
  for (std::size_t index = 0; index < row_count; ++index) {
    const TileRow& row = rows[index];
    candidates.insert(candidates.end(), row.candidates.begin(), row.candidates.begin() + row.count);
  }
  const auto beats = [&](const TiledTraffic& other, const TiledTraffic& candidate) {
    const bool fewer_w =
        other.w_resident || (!candidate.w_resident && other.tile.bm >= candidate.tile.bm);
    return ceil_div(shape.n, other.tile.bn) <= ceil_div(shape.n, candidate.tile.bn) && fewer_w &&
           loses_tie(candidate, other);
  };
  std::vector<TiledTraffic> front;
  for (const TiledTraffic& candidate : candidates) {
    if (std::none_of(candidates.begin(), candidates.end(),
                     [&](const TiledTraffic& other) { return beats(other, candidate); })) {
      front.push_back(candidate);
    }
  }
  return front;
}

void order_front(const GemmShape& shape, std::vector<TiledTraffic>& front,
                 std::vector<double>& slopes) {
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t index = 0; index < front.size(); ++index) {
    order.emplace_back(past_rows_slope(shape, front[index]), index);
  }
  std::sort(order.begin(), order.end());
  std::vector<TiledTraffic> sorted;
  slopes.clear();
  for (const auto& [slope, index] : order) {
    sorted.push_back(front[index]);
    slopes.push_back(slope);
  }
  front = std::move(sorted);
}

void settle_gemm(const GemmShape& shape, TileCache::Rows& cached, int last) {
  GemmShape past = shape;
  past.m = std::int64_t{1} << (last + 1);
  const auto bytes_of = [&](const TiledTraffic& candidate) { return gemm_bytes(past, candidate); };
  std::optional<TiledTraffic> best;
  for (int row_index = 0; row_index <= last; ++row_index) {
    rank_row(cached.rows[static_cast<std::size_t>(row_index)], bytes_of, best);
  }
  if (!best) {
    cached.settled = TileCache::Rows::Settled::refused;
    return;
  }
  const TiledTraffic& winner = *best;
  const double x_reads = ceil_div(shape.n, winner.tile.bn);
  const auto standing = [&](const TiledTraffic& candidate) {
    const double reads = ceil_div(shape.n, candidate.tile.bn);
    const bool same_w = candidate.w_resident == winner.w_resident &&
                        (winner.w_resident || candidate.tile.bm == winner.tile.bm);
    const bool more_w =
        winner.w_resident || (!candidate.w_resident && candidate.tile.bm <= winner.tile.bm);
    const double bytes = bytes_of(candidate).si();
    if ((reads == x_reads && same_w) || bytes > winner.bytes.si() * kMargin ||
        (reads >= x_reads && more_w && loses_tie(candidate, winner))) {
      return Standing::loses;
    }
    // Exact here, the two are a tie or a near-tie in fact (the winner ranked first).
    const bool exact = bytes < kExactBytes && winner.bytes.si() < kExactBytes;
    return exact ? Standing::loses_if_exact : Standing::unknown;
  };
  cached.winner = winner;
  cached.settled = settle(cached.rows, static_cast<std::size_t>(last) + 1, TileRow{}, standing);
  cached.front = past_rows_front(shape, cached.rows, static_cast<std::size_t>(last) + 1);
  order_front(shape, cached.front, cached.front_slopes);
}

}  // namespace rsim::tile_settling
