// SPDX-License-Identifier: MIT
#include "sim/cost/tile_search.hpp"

#include "sim/cost/tile_candidates.hpp"
#include "sim/cost/tile_ranking.hpp"
#include "sim/cost/tile_settling.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

namespace rsim {

using tile_candidates::flash_bytes;
using tile_candidates::flash_rereads;
using tile_candidates::flash_row;
using tile_candidates::gemm_bytes;
using tile_candidates::gemm_row;
using tile_candidates::kSliceDepths;
using tile_candidates::panel_footprint;
using tile_candidates::panel_row;
using tile_ranking::best_bytes;
using tile_ranking::found;
using tile_ranking::keep_better;
using tile_ranking::kExactBytes;
using tile_ranking::kMargin;
using tile_ranking::LeastBytes;
using tile_ranking::loses_tie;
using tile_ranking::rank_row;
using tile_settling::order_front;
using tile_settling::past_rows_front;
using tile_settling::settle;
using tile_settling::settle_gemm;
using tile_settling::Standing;

namespace {

// Whether `divisor` divides `multiple`: a mask for the power-of-two tile edges most searches try.
bool divides(std::int64_t divisor, std::int64_t multiple) {
  const auto bits = static_cast<std::uint64_t>(divisor);
  return (bits & (bits - 1)) == 0 ? (static_cast<std::uint64_t>(multiple) & (bits - 1)) == 0
                                  : multiple % divisor == 0;
}

// Walks the row edges 1, 2, 4, … below M, then M (straight to M once a row has no candidate:
// every footprint grows with bm until bm = M, where an operand may become resident), ranking
// every candidate by its bytes. `row_at(bm)` gives a row's candidates, `bytes_of` their bytes.
template <typename RowAt, typename BytesOf>
std::optional<TiledTraffic> search_rows(std::int64_t m, const RowAt& row_at,
                                        const BytesOf& bytes_of) {
  std::optional<TiledTraffic> best;
  TileRow computed;  // where row_at puts a row it does not take from a cache
  for (std::int64_t bm = 1;;) {
    const TileRow& row = row_at(bm, computed);
    rank_row(row, bytes_of, best);
    if (bm == m) {
      break;
    }
    bm = row.count > 0 ? std::min(bm * 2, m) : m;
  }
  return best;
}

// Appends the cache's next row (bm = 2^size), computed by `compute`.
template <typename Compute>
void append_row(TileCache::Rows& cached, const Compute& compute) {
  const int index = static_cast<int>(cached.rows.size());
  TileRow row = compute(std::int64_t{1} << index);
  cached.ended = row.count == 0;
  cached.rows.push_back(row);
}

// A row from the cache when bm < M (it does not depend on M there), else computed into
// `computed`. The reference is good until the next call.
template <typename Compute>
const TileRow& cached_row(TileCache::Rows* cached, std::int64_t m, std::int64_t bm,
                          const Compute& compute, TileRow& computed) {
  if (cached == nullptr || bm >= m) {
    computed = compute(bm);
    return computed;
  }
  const auto index = static_cast<std::size_t>(std::countr_zero(static_cast<std::uint64_t>(bm)));
  while (cached->rows.size() <= index) {
    append_row(*cached, compute);
  }
  return cached->rows[index];
}

// Ranks a front of rows below M in the order of its slopes into `best`: once a candidate's least
// bytes exceed the best by more than their rounding (kMargin), so do every later one's, and they
// read strictly more.
template <typename Best>
void rank_front(const GemmShape& shape, const std::vector<TiledTraffic>& front,
                const std::vector<double>& slopes, Best& best) {
  const double per_slope = shape.batch * static_cast<double>(shape.m);
  for (std::size_t index = 0; index < front.size(); ++index) {
    if (found(best) && per_slope * slopes[index] > best_bytes(best) * kMargin) {
      break;
    }
    keep_better(front[index], gemm_bytes(shape, front[index]), best);
  }
}

// The bytes the key's certified winner reads at `shape` past the rows, where it answers the search
// (its bm divides M, or it holds W; certified only where bytes are exact, they are); nullopt
// where the front must be ranked.
OptionalBytes winner_bytes(const GemmShape& shape, const TileCache::Rows& cached) {
  using Settled = TileCache::Rows::Settled;
  const TiledTraffic& winner = cached.winner;
  // A batch of 0 would scale every candidate's bytes to the same 0 (a tie the key cannot see);
  // the front's ranking holds there too (its order on ties is the rows').
  if (cached.settled == Settled::refused || shape.batch <= 0.0 ||
      !(winner.w_resident || divides(winner.tile.bm, shape.m))) {
    return std::nullopt;
  }
  const Bytes bytes = gemm_bytes(shape, winner);
  if (cached.settled == Settled::certified || bytes.si() < kExactBytes) {
    return bytes;
  }
  return std::nullopt;
}

// The key's winner with `bytes` as a search's answer: the tile, or its bytes alone.
template <typename Best>
Best winner_answer(const TiledTraffic& winner, Bytes bytes) {
  if constexpr (std::is_same_v<Best, LeastBytes>) {
    return LeastBytes{bytes.si()};
  } else {
    TiledTraffic answer = winner;
    answer.bytes = bytes;
    return answer;
  }
}

// The search at `shape` past its key's settled rows: the certified winner where its bm divides M
// (and, certified only where bytes are exact, its bytes are), else the best of the front.
template <typename Best>
Best past_rows_search(const GemmShape& shape, const TileCache::Rows& cached, TileCache& cache) {
  if (const auto bytes = winner_bytes(shape, cached)) {
    cache.count_settled_search();
    return winner_answer<Best>(cached.winner, *bytes);
  }
  Best best{};
  rank_front(shape, cached.front, cached.front_slopes, best);
  return best;
}

// No tile of row edge M reads fewer bytes than this, by gemm_bytes' own arithmetic (W read once,
// X once if it can stay resident, else as often as the widest accumulators allow).
// Proof: docs/design/tiling.md#the-row-at-m
double least_at_row_edge_m(const GemmShape& shape, const TileBudget& budget) {
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  const double capacity = budget.capacity.si() * kMargin;
  const double accumulator_room =
      budget.accumulator_capacity ? budget.accumulator_capacity->si() * kMargin : capacity;
  const double widest = std::floor(accumulator_room / (m * shape.accumulator_bytes));
  const bool x_resident = m * k * shape.x_element_bytes <= capacity;
  const double x_reads = x_resident ? 1.0 : std::ceil(n / std::max(widest, 1.0));
  const double w_reads = 1.0;
  return shape.batch * (shape.x_element_bytes * m * k * x_reads +
                        shape.w_element_bytes * k * n * w_reads + shape.out_element_bytes * m * n);
}

// What a search knows of its row at bm = M before looking at it: that no tile there fits, or a
// floor of the bytes any does read (0: none known).
struct RowAtM {
  bool nothing_fits = false;
  double least_bytes = 0.0;
};

// The GEMM search over cached rows, pruned without changing its argmin: past the rows, the key's
// certified winner or its front; before, the front of the rows below M, then the row at M unless
// `at_m` rules it out. Proof: docs/design/tiling.md#the-cached-gemm-search
// `cached` is the cache's rows of `key`; `settled` (if any) is left holding them, and the least M
// found past them.
template <typename Best, typename RowAt>
Best search_cached_gemm(const GemmShape& shape, TileCache& cache, TileCache::Rows& cached,
                        const TileCache::Key& key, const RowAtM& at_m, SettledGemm* settled,
                        const RowAt& row_at) {
  using Settled = TileCache::Rows::Settled;
  if (settled != nullptr && (settled->rows != &cached || settled->cache != &cache)) {
    *settled = {&cache, &cached, key, SettledGemm::kNotPast};
  }
  const bool nothing_fits_at_m = at_m.nothing_fits;
  // Row edges below M: 2^0 … 2^top, as far as the first row without candidates.
  const int top =
      shape.m > 1 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(shape.m - 1))) - 1
                  : -1;
  while (!cached.ended && static_cast<int>(cached.rows.size()) <= top) {
    append_row(cached, row_at);
  }
  const int last = std::min(top, static_cast<int>(cached.rows.size()) - (cached.ended ? 2 : 1));
  // Past the rows: every row below M is cached and none of row edge M fits. (Not settled at a
  // batch of 0, which ties every candidate at 0 bytes: such a search ranks the rows' front.)
  if (nothing_fits_at_m && cached.ended && last >= 0 && shape.batch > 0.0 &&
      last + 2 == static_cast<int>(cached.rows.size())) {
    if (cached.settled == Settled::untried) {
      settle_gemm(shape, cached, last);
    }
    if (settled != nullptr) {
      settled->from_m = std::min(settled->from_m, shape.m);
    }
    return past_rows_search<Best>(shape, cached, cache);
  }
  Best best{};
  const auto bytes_of = [&](const TiledTraffic& candidate) { return gemm_bytes(shape, candidate); };
  // The row at M last, and only where a tile there may read no more than the best below M:
  // least_at_m bounds its bytes from below by gemm_bytes' own arithmetic, so a row it skips
  // reads strictly more (and loses ties too). The order does not change the argmin.
  const auto rank_row_at_m = [&] {
    if (!nothing_fits_at_m && !(found(best) && at_m.least_bytes > best_bytes(best))) {
      rank_row(row_at(shape.m), bytes_of, best);
    }
    return best;
  };
  if (last < 0) {
    return rank_row_at_m();
  }
  // The rows below M by their front, found once per last row (their candidates have bm < M: X is
  // never resident, as past the rows). Proof: docs/design/tiling.md#the-front
  if (cached.front_below_last != last) {
    cached.front_below = past_rows_front(shape, cached.rows, static_cast<std::size_t>(last) + 1);
    order_front(shape, cached.front_below, cached.front_below_slopes);
    cached.front_below_last = last;
  }
  rank_front(shape, cached.front_below, cached.front_below_slopes, best);
  return rank_row_at_m();
}

// A GEMM search (tiles or panels: `schedule` 0 or 1) over rows from `row_at`, memoized in
// `cache` (if any) under the weight shape, the element widths and the capacities.
// The output's width is in the key although the rows do not depend on it: with it the key fixes
// the candidates' bytes relative to one another past the rows (its certified winner).
template <typename RowAt>
std::optional<TiledTraffic> search_gemm(const GemmShape& shape, double schedule, Bytes capacity,
                                        double accumulator_capacity, const RowAtM& at_m,
                                        TileCache* cache, SettledGemm* settled,
                                        const RowAt& row_at) {
  if (cache != nullptr) {
    const TileCache::Key key{schedule,
                             static_cast<double>(shape.n),
                             static_cast<double>(shape.k),
                             shape.x_element_bytes,
                             shape.w_element_bytes,
                             shape.accumulator_bytes,
                             capacity.si(),
                             accumulator_capacity,
                             shape.out_element_bytes,
                             0.0};
    return search_cached_gemm<std::optional<TiledTraffic>>(shape, *cache, *cache->rows(key), key,
                                                           at_m, settled, row_at);
  }
  return search_rows(
      shape.m,
      [&](std::int64_t bm, TileRow& computed) -> const TileRow& {
        computed = row_at(bm);
        return computed;
      },
      [&](const TiledTraffic& traffic) { return gemm_bytes(shape, traffic); });
}

// Whether `settled` holds the rows of the key `shape` sets (search_gemm's slots: N, K, the
// widths), in `cache`.
bool holds_rows_of(const SettledGemm& settled, const GemmShape& shape, const TileCache& cache) {
  const TileCache::Key& key = settled.key;
  return settled.rows != nullptr && settled.cache == &cache &&
         key[1] == static_cast<double>(shape.n) && key[2] == static_cast<double>(shape.k) &&
         key[3] == shape.x_element_bytes && key[4] == shape.w_element_bytes &&
         key[5] == shape.accumulator_bytes && key[8] == shape.out_element_bytes;
}

// Whether it holds them past the rows at an M no larger than this one.
bool holds_search_of(const SettledGemm& settled, const GemmShape& shape, const TileCache& cache) {
  return shape.m >= settled.from_m && holds_rows_of(settled, shape, cache);
}

// Whether `settled` holds a search of this schedule and these capacities (the rest of its key
// holds_search_of checks).
bool holds_schedule(const SettledGemm* settled, double schedule, double capacity,
                    double accumulator_capacity) {
  return settled != nullptr && settled->key[0] == schedule && settled->key[6] == capacity &&
         settled->key[7] == accumulator_capacity;
}

double accumulator_capacity_of(const TileBudget& budget) {
  return budget.accumulator_capacity ? budget.accumulator_capacity->si() : -1.0;
}

}  // namespace

std::optional<TiledTraffic> settled_search(const SettledGemm& settled, const GemmShape& shape,
                                           TileCache& cache) {
  if (!holds_search_of(settled, shape, cache)) {
    return std::nullopt;
  }
  return past_rows_search<std::optional<TiledTraffic>>(shape, *settled.rows, cache);
}

namespace {

// The kept search's answer (settled_search) where it is of this schedule and these capacities:
// a search settled at an M no larger answers as the cache's winner or front would, this M being
// past the rows too.
std::optional<TiledTraffic> kept_answer(const SettledGemm* settled, const GemmShape& shape,
                                        double schedule, double capacity,
                                        double accumulator_capacity, TileCache* cache) {
  if (cache == nullptr || !holds_schedule(settled, schedule, capacity, accumulator_capacity)) {
    return std::nullopt;
  }
  return settled_search(*settled, shape, *cache);
}

// A tile search's row at bm = M: none fits where even its least X and accumulators exceed a
// capacity by kMargin; else least_at_row_edge_m bounds its bytes.
// Proof: docs/design/tiling.md#the-row-at-m
RowAtM tile_row_at_m(const GemmShape& shape, const TileBudget& budget) {
  const auto m = static_cast<double>(shape.m);
  const auto k = static_cast<double>(shape.k);
  const double least_x =
      m * shape.x_element_bytes *
      (shape.k > kSliceDepths[0] ? std::min(2.0 * static_cast<double>(kSliceDepths[0]), k) : k);
  const double least_accumulators = m * shape.accumulator_bytes;
  const double capacity = budget.capacity.si() * kMargin;
  const bool nothing_fits =
      budget.accumulator_capacity
          ? least_x > capacity || least_accumulators > budget.accumulator_capacity->si() * kMargin
          : least_x + least_accumulators > capacity;
  return {nothing_fits, nothing_fits ? 0.0 : least_at_row_edge_m(shape, budget)};
}

// A panel search's row at bm = M: a panel of row edge M holds all of X's M × K (panel_row's own
// footprint at bn = 0, which only grows with bn).
RowAtM panel_row_at_m(const GemmShape& shape, Bytes capacity) {
  return {panel_footprint(shape, shape.m, 0).si() > capacity.si(), 0.0};
}

}  // namespace

std::optional<TiledTraffic> best_gemm_tile(const GemmShape& shape, const TileBudget& budget,
                                           TileCache* cache, SettledGemm* settled) {
  const double accumulator_capacity = accumulator_capacity_of(budget);
  if (auto kept =
          kept_answer(settled, shape, 0.0, budget.capacity.si(), accumulator_capacity, cache)) {
    return kept;
  }
  return search_gemm(shape, 0.0, budget.capacity, accumulator_capacity,
                     tile_row_at_m(shape, budget), cache, settled,
                     [&](std::int64_t bm) { return gemm_row(shape, budget, bm); });
}

std::optional<TiledTraffic> best_panel_tile(const GemmShape& shape, Bytes capacity,
                                            TileCache* cache, SettledGemm* settled) {
  if (auto kept = kept_answer(settled, shape, 1.0, capacity.si(), -1.0, cache)) {
    return kept;
  }
  return search_gemm(shape, 1.0, capacity, -1.0, panel_row_at_m(shape, capacity), cache, settled,
                     [&](std::int64_t bm) { return panel_row(shape, capacity, bm); });
}

namespace {

// The bytes alone of the search `settled` holds the rows of (settled_tile_bytes): past them, the
// winner's or the front's; before, the cached search over them. `row_at_m()` and `row_at(bm)`
// are the schedule's.
template <typename AtM, typename RowAt>
OptionalBytes kept_bytes(SettledGemm& settled, const GemmShape& shape, TileCache& cache,
                         const AtM& row_at_m, const RowAt& row_at) {
  if (!holds_rows_of(settled, shape, cache)) {
    return std::nullopt;
  }
  const LeastBytes least =
      shape.m >= settled.from_m
          ? past_rows_search<LeastBytes>(shape, *settled.rows, cache)
          : search_cached_gemm<LeastBytes>(shape, cache, *settled.rows, settled.key, row_at_m(),
                                           &settled, row_at);
  return found(least) ? OptionalBytes(Bytes(least.bytes)) : std::nullopt;
}

}  // namespace

OptionalBytes settled_tile_bytes(SettledGemm& settled, const GemmShape& shape,
                                 const TileBudget& budget, TileCache& cache) {
  if (!holds_schedule(&settled, 0.0, budget.capacity.si(), accumulator_capacity_of(budget))) {
    return std::nullopt;
  }
  return kept_bytes(
      settled, shape, cache, [&] { return tile_row_at_m(shape, budget); },
      [&](std::int64_t bm) { return gemm_row(shape, budget, bm); });
}

OptionalBytes settled_panel_bytes(SettledGemm& settled, const GemmShape& shape, Bytes capacity,
                                  TileCache& cache) {
  if (!holds_schedule(&settled, 1.0, capacity.si(), -1.0)) {
    return std::nullopt;
  }
  return kept_bytes(
      settled, shape, cache, [&] { return panel_row_at_m(shape, capacity); },
      [&](std::int64_t bm) { return panel_row(shape, capacity, bm); });
}

std::optional<TiledTraffic> best_flash_tile(const FlashShape& shape, const TileBudget& budget,
                                            TileCache* cache, KeptFlashRows* kept) {
  const auto row_at = [&](std::int64_t bm) { return flash_row(shape, budget, bm); };
  // The key: what the rows depend on, and the ratio of Q+O to K/V bytes, which fixes the
  // candidates' bytes relative to one another (without either, no instances: the search ranks).
  // Proof: docs/design/tiling.md#flash-searches
  using Settled = TileCache::Rows::Settled;
  const bool settles = shape.key_value_bytes.si() > 0.0 && shape.query_output_bytes.si() > 0.0;
  const double q_o_per_k_v =
      settles ? shape.query_output_bytes.si() / shape.key_value_bytes.si() : 0.0;
  TileCache::Rows* rows = nullptr;
  if (cache != nullptr) {
    const TileCache::Key key{shape.causal ? 3.0 : 2.0,
                             static_cast<double>(shape.query_tokens),
                             static_cast<double>(shape.cached_tokens),
                             static_cast<double>(shape.head_dim),
                             static_cast<double>(shape.group),
                             q_o_per_k_v,
                             shape.q_element_bytes,
                             shape.kv_element_bytes,
                             budget.capacity.si(),
                             budget.accumulator_capacity ? budget.accumulator_capacity->si() : -1.0,
                             static_cast<double>(shape.window)};
    if (kept != nullptr && kept->cache == cache && kept->key == key) {
      rows = kept->rows;
    } else {
      rows = cache->rows(key);
      if (kept != nullptr) {
        *kept = {cache, rows, key};
      }
    }
  }
  const auto bytes_of = [&](const TiledTraffic& traffic) { return flash_bytes(shape, traffic); };
  if (settles && rows != nullptr && rows->settled == Settled::certified) {
    cache->count_settled_search();
    TiledTraffic winner = rows->winner;
    winner.bytes = bytes_of(winner);
    return winner;
  }
  auto best = search_rows(
      shape.query_tokens,
      [&](std::int64_t bm, TileRow& computed) -> const TileRow& {
        return cached_row(rows, shape.query_tokens, bm, row_at, computed);
      },
      bytes_of);
  // Every candidate the search walked loses to its winner at every size of the key if it re-reads
  // K/V as often, or more often and loses ties, or reads more than kMargin over. Proof:
  // docs/design/tiling.md#flash-searches
  if (settles && rows != nullptr && best && rows->settled == Settled::untried) {
    const TiledTraffic& winner = *best;
    const double rereads = flash_rereads(shape, winner);
    rows->winner = winner;
    rows->settled = settle(rows->rows, rows->rows.size(), row_at(shape.query_tokens),
                           [&](const TiledTraffic& candidate) {
                             const double candidate_rereads = flash_rereads(shape, candidate);
                             const bool loses =
                                 candidate_rereads == rereads ||
                                 bytes_of(candidate).si() > winner.bytes.si() * kMargin ||
                                 (candidate_rereads > rereads && loses_tie(candidate, winner));
                             return loses ? Standing::loses : Standing::unknown;
                           });
  }
  return best;
}

}  // namespace rsim
