// SPDX-License-Identifier: MIT
// The pruned and cached tile searches held to the exhaustive search they replace, tile for tile
// and bit for bit (docs/design/tiling.md).
#include "sim/cost/tile_search.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tiling.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

namespace exhaustive {

// The searches as first written: every (bm, bn) edge pair and every K-slice depth, each costed
// and ranked. The library prunes these loops (largest fitting bn per bm); here they are the
// reference it must equal, tile for tile.
std::vector<std::int64_t> edges(std::int64_t extent) {
  std::vector<std::int64_t> result;
  for (std::int64_t edge = 1; edge < extent; edge *= 2) {
    result.push_back(edge);
  }
  result.push_back(extent);
  return result;
}

bool better(const rsim::TiledTraffic& candidate, const std::optional<rsim::TiledTraffic>& best) {
  const auto key = [](const rsim::TiledTraffic& traffic) {
    return std::make_tuple(traffic.bytes.si(), -traffic.tile.bm * traffic.tile.bn, -traffic.tile.bm,
                           traffic.footprint.si(), -traffic.tile.bk);
  };
  return !best || key(candidate) < key(*best);
}

std::optional<rsim::TiledTraffic> gemm(const rsim::GemmShape& shape,
                                       const rsim::TileBudget& budget) {
  std::vector<std::int64_t> depths;
  for (std::int64_t depth : {16, 32, 64, 128, 256}) {
    if (depth < shape.k) {
      depths.push_back(depth);
    }
  }
  depths.push_back(shape.k);
  std::optional<rsim::TiledTraffic> best;
  for (std::int64_t bm : edges(shape.m)) {
    for (std::int64_t bn : edges(shape.n)) {
      std::optional<rsim::TiledTraffic> streamed;  // the deepest streamed depth that fits
      for (std::int64_t bk : depths) {
        const auto traffic = rsim::gemm_traffic(shape, {bm, bn, bk});
        if (!budget.fits(traffic)) {
          continue;
        }
        if (bk == shape.k) {
          best = better(traffic, best) ? std::optional(traffic) : best;
        } else {
          streamed = traffic;
        }
      }
      if (streamed && better(*streamed, best)) {
        best = streamed;
      }
    }
  }
  return best;
}

std::optional<rsim::TiledTraffic> panels(const rsim::GemmShape& shape, rsim::Bytes capacity) {
  std::optional<rsim::TiledTraffic> best;
  for (std::int64_t bm : edges(shape.m)) {
    for (std::int64_t bn : edges(shape.n)) {
      auto traffic = rsim::gemm_traffic(shape, {bm, bn, shape.k});
      traffic.accumulators = rsim::Bytes(0.0);
      traffic.footprint = rsim::Bytes(
          static_cast<double>(bm) * static_cast<double>(shape.k) * shape.x_element_bytes +
          static_cast<double>(shape.k) * static_cast<double>(bn) * shape.w_element_bytes);
      traffic.panels = true;
      if (traffic.footprint <= capacity && better(traffic, best)) {
        best = traffic;
      }
    }
  }
  return best;
}

std::optional<rsim::TiledTraffic> flash(const rsim::FlashShape& shape,
                                        const rsim::TileBudget& budget) {
  std::optional<rsim::TiledTraffic> best;
  for (std::int64_t bm : edges(shape.query_tokens)) {
    for (std::int64_t bn : edges(shape.kv_tokens())) {
      const auto traffic = rsim::flash_traffic(shape, {bm, bn, shape.head_dim});
      if (budget.fits(traffic) && better(traffic, best)) {
        best = traffic;
      }
    }
  }
  return best;
}

void require_same(const std::optional<rsim::TiledTraffic>& pruned,
                  const std::optional<rsim::TiledTraffic>& reference) {
  REQUIRE(pruned.has_value() == reference.has_value());
  if (pruned) {
    REQUIRE(pruned->tile == reference->tile);
    REQUIRE(pruned->bytes.si() == reference->bytes.si());
    REQUIRE(pruned->footprint.si() == reference->footprint.si());
    REQUIRE(pruned->x_resident == reference->x_resident);
    REQUIRE(pruned->w_resident == reference->w_resident);
  }
}

}  // namespace exhaustive

TEST_CASE("the pruned tile searches pick the exhaustive search's tile", "[tiling]") {
  // Shapes from 1 to ~10⁵ per edge (odd, power-of-two and just-off sizes), every dtype width,
  // capacities from a few KiB (even 1×1 tiles may not fit) to 256 MiB, accumulators shared or
  // in a tier of their own. Deterministic: a fixed seed. The searches run without a cache, and
  // with one shared by every trial, queried again at another M (its rows below M are reused).
  rsim::TileCache cache;
  std::mt19937_64 random(20261129);
  const auto extent = [&] {
    const std::int64_t base = std::int64_t{1} << std::uniform_int_distribution<int>(0, 16)(random);
    return std::max<std::int64_t>(
        1, base + std::uniform_int_distribution<std::int64_t>(-2, 2)(random) *
                      (random() % 3 == 0 ? base / 4 + 1 : 1));
  };
  const std::array element_bytes{0.5, 1.0, 2.0, 4.0};
  const auto dtype = [&] { return element_bytes[random() % element_bytes.size()]; };
  for (int trial = 0; trial < 3000; ++trial) {
    const rsim::GemmShape shape{static_cast<double>(1 + random() % 4),
                                extent(),
                                extent(),
                                extent(),
                                dtype(),
                                dtype(),
                                dtype(),
                                4.0};
    const double capacity = std::ldexp(1.0, std::uniform_int_distribution<int>(8, 28)(random));
    rsim::TileBudget budget{rsim::Bytes(capacity), std::nullopt};
    if (random() % 2 == 0) {
      budget.accumulator_capacity =
          rsim::Bytes(capacity * std::ldexp(1.0, (int)(random() % 5) - 2));
    }
    exhaustive::require_same(rsim::best_gemm_tile(shape, budget), exhaustive::gemm(shape, budget));
    exhaustive::require_same(rsim::best_panel_tile(shape, budget.capacity),
                             exhaustive::panels(shape, budget.capacity));
    rsim::GemmShape other_m = shape;
    other_m.m = extent();
    for (const rsim::GemmShape& cached : {shape, other_m}) {
      exhaustive::require_same(rsim::best_gemm_tile(cached, budget, &cache),
                               exhaustive::gemm(cached, budget));
      exhaustive::require_same(rsim::best_panel_tile(cached, budget.capacity, &cache),
                               exhaustive::panels(cached, budget.capacity));
    }
    rsim::FlashShape flash;
    flash.instances = static_cast<double>(1 + random() % 64);
    flash.group = std::int64_t{1} << (random() % 4);
    flash.query_tokens = extent();
    flash.cached_tokens = random() % 2 == 0 ? 0 : extent();
    flash.head_dim = std::int64_t{32} << (random() % 3);
    flash.causal = random() % 2 == 0;
    flash.q_element_bytes = dtype();
    flash.kv_element_bytes = dtype();
    flash.query_output_bytes =
        rsim::Bytes(2.0 * flash.instances * flash.q_element_bytes *
                    static_cast<double>(flash.query_tokens * flash.head_dim));
    flash.key_value_bytes = rsim::Bytes(2.0 * flash.instances * flash.kv_element_bytes *
                                        static_cast<double>(flash.kv_tokens() * flash.head_dim));
    exhaustive::require_same(rsim::best_flash_tile(flash, budget),
                             exhaustive::flash(flash, budget));
    // The cache's flash rows do not depend on the instances (sequences × KV heads): query again
    // with twice as many, whose bytes double.
    rsim::FlashShape more = flash;
    more.instances *= 2.0;
    more.query_output_bytes = flash.query_output_bytes * 2.0;
    more.key_value_bytes = flash.key_value_bytes * 2.0;
    for (const rsim::FlashShape& cached : {flash, more}) {
      exhaustive::require_same(rsim::best_flash_tile(cached, budget, &cache),
                               exhaustive::flash(cached, budget));
    }
  }
}

// Random GEMM keys whose rows end early: edges up to ~2^14 (powers of two, some just off),
// widths of 0.5 to 4 B (X and W alike half the time, which makes ties), a batch of 1 to 3, and
// budgets of 256 B to 1 MiB with the accumulators shared or in a budget of their own.
struct SmallBudgetKeys {
  std::mt19937_64 random;
  double width() {
    constexpr std::array element_bytes{0.5, 1.0, 2.0, 4.0};
    return element_bytes[random() % element_bytes.size()];
  }
  std::int64_t extent() {
    return std::max<std::int64_t>(
        1, (std::int64_t{1} << std::uniform_int_distribution<int>(0, 14)(random)) +
               (random() % 3 == 0 ? static_cast<std::int64_t>(random() % 100) : 0));
  }
  std::pair<rsim::GemmShape, rsim::TileBudget> next() {
    const double x_width = width();
    rsim::GemmShape shape{
        static_cast<double>(1 + random() % 3), 1,       extent(), extent(), x_width,
        random() % 2 == 0 ? x_width : width(), width(), 4.0};
    const double capacity = std::ldexp(1.0, std::uniform_int_distribution<int>(8, 20)(random));
    rsim::TileBudget budget{rsim::Bytes(capacity), std::nullopt};
    if (random() % 2 == 0) {
      budget.accumulator_capacity = rsim::Bytes(capacity * std::ldexp(1.0, (int)(random() % 3)));
    }
    return {shape, budget};
  }
};

TEST_CASE("a tile search past its rows answers with the key's settled winner, bit for bit",
          "[tiling]") {
  // Past the rows (no tile of row edge M fits, the rows ended below M) a cached search costs only
  // its key's winner where the winner's bm divides M. Each answer must be the exhaustive
  // search's tile, bytes and footprint: at M the winner divides, at M it does not, at M so large
  // the bytes are not exact (past 2^45), over random shapes, widths (equal widths make ties:
  // 256×128 and 128×256 read the same) and budgets small enough for the rows to end.
  rsim::TileCache cache;
  SmallBudgetKeys keys{std::mt19937_64(20261130)};
  const std::array<std::int64_t, 6> past_multiples{
      1, 3, 1000, 4097, std::int64_t{1} << 20, std::int64_t{3} << 26};
  for (int trial = 0; trial < 400; ++trial) {
    auto [shape, budget] = keys.next();
    // M from just past the largest row that can fit (2^20 · 16 B > 2^20 B) upward.
    for (const std::int64_t multiple : past_multiples) {
      shape.m = (std::int64_t{1} << 21) * multiple + (keys.random() % 4 == 0 ? 64 : 0);
      exhaustive::require_same(rsim::best_gemm_tile(shape, budget, &cache),
                               exhaustive::gemm(shape, budget));
      exhaustive::require_same(rsim::best_panel_tile(shape, budget.capacity, &cache),
                               exhaustive::panels(shape, budget.capacity));
    }
  }
  // Most keys settle: 400 trials × 6 sizes × 2 schedules = 4800 searches, the first of each key
  // ranks (and settles) and a quarter of the sizes are off the winner's bm by 64.
  INFO("settled searches: " << cache.settled_searches());
  REQUIRE(cache.settled_searches() > 2000);
}

TEST_CASE("a search kept past its rows answers later ones as the exhaustive search would",
          "[tiling]") {
  // A batch line keeps each tier's search once it is past its rows (SettledGemm) and asks it
  // again at the next batch's M: by the settled winner where its bm divides M, else by ranking
  // the key's front (pruned by slope). Random shapes, widths and budgets as in the test above; M
  // past the rows, growing, on and off the winner's bm; the batch of 0 and 7 too. Each answer
  // must be the exhaustive search's, and so must the bytes alone (settled_tile_bytes,
  // settled_panel_bytes: a batch line's tiers), which the kept search gives at every such M.
  rsim::TileCache cache;
  SmallBudgetKeys keys{std::mt19937_64(20261201)};
  std::mt19937_64& random = keys.random;
  int answered = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto [shape, budget] = keys.next();
    shape.batch = 1.0;
    const double capacity = budget.capacity.si();
    rsim::SettledGemm tiles;
    rsim::SettledGemm panels;
    // Past every row that can fit: at bm = M, X alone takes ≥ M · 0.5 B = 2 × the capacity, and
    // the accumulators 4 B · M = 4 × the largest accumulator budget. Every tile search is past
    // its rows there (they end where no bm fits); a panel search is where a panel of bm = 1 fits.
    // M stays small against the row edges, where ⌈M/bm⌉ − M/bm weighs and the front's order
    // matters.
    const auto first_m = static_cast<std::int64_t>(4.0 * capacity);
    shape.m = first_m;
    const bool fits = rsim::best_gemm_tile(shape, budget, &cache, &tiles).has_value();
    rsim::best_panel_tile(shape, budget.capacity, &cache, &panels);
    if (!fits) {  // not even 1×1×16 fits (a 256 B budget, 4 B widths): no rows to be past
      continue;
    }
    REQUIRE(tiles.rows != nullptr);
    REQUIRE(tiles.from_m == first_m);
    for (int step = 0; step < 12; ++step) {
      shape.m += 1 + static_cast<std::int64_t>(random() % (std::uint64_t{1} << (random() % 14)));
      shape.batch = step == 5 ? 0.0 : step == 6 ? 7.0 : 1.0;
      const auto best = exhaustive::gemm(shape, budget);
      exhaustive::require_same(rsim::settled_search(tiles, shape, cache), best);
      ++answered;
      const auto bytes = rsim::settled_tile_bytes(tiles, shape, budget, cache);
      REQUIRE(bytes.has_value() == best.has_value());
      if (bytes) {
        REQUIRE(bytes->si() == best->bytes.si());
      }
      // A panel search is past its rows where a panel of bm = 1 fits (from_m set).
      if (panels.from_m <= shape.m) {
        const auto best_panels = exhaustive::panels(shape, budget.capacity);
        exhaustive::require_same(rsim::settled_search(panels, shape, cache), best_panels);
        ++answered;
        const auto panel_bytes = rsim::settled_panel_bytes(panels, shape, budget.capacity, cache);
        REQUIRE(panel_bytes.has_value() == best_panels.has_value());
        if (panel_bytes) {
          REQUIRE(panel_bytes->si() == best_panels->bytes.si());
        }
      }
    }
    // Below its M, with another cache or for another N, it does not answer (the caller's search
    // ranks).
    shape.batch = 1.0;
    shape.m = first_m - 1;
    REQUIRE_FALSE(rsim::settled_search(tiles, shape, cache));
    shape.m = first_m;
    rsim::TileCache other;
    REQUIRE_FALSE(rsim::settled_search(tiles, shape, other));
    shape.n += 1;
    REQUIRE_FALSE(rsim::settled_search(tiles, shape, cache));
  }
  // Every tile search, and most panel searches (300 × 12 × 2 = 7200 at most).
  REQUIRE(answered > 300 * 12 * 3 / 2);
}

TEST_CASE("a cached search ranks the row at bm = M only where it may win", "[tiling]") {
  // Before its rows end, a cached search ranks the rows below M, then the row of edge M only
  // where a floor of its bytes (W read once, X once or ⌈N/bn⌉ times with bn as wide as the M × bn
  // accumulators allow) does not exceed the best below M. A batch line asks such searches at M
  // after M (the lm_head's L2 tile: its M is the sequences per replica). Random keys with small
  // budgets; M from 1 upward in small steps while a tile of edge M may fit, so the row at M wins
  // some searches (X or W held whole, few column blocks) and is skipped in others. Each answer
  // must be the exhaustive search's.
  // The kept searches' bytes (settled_tile_bytes, settled_panel_bytes: a batch line's tiers,
  // which hold their key's rows from the first search on) must be the exhaustive search's too.
  rsim::TileCache cache;
  SmallBudgetKeys keys{std::mt19937_64(20261130)};
  std::mt19937_64& random = keys.random;
  int searches = 0;
  int kept_answers = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto [shape, budget] = keys.next();
    rsim::SettledGemm tiles;
    rsim::SettledGemm panels;
    // The largest M whose X slice of one element per row and 1 × M accumulators could fit.
    const auto reach = static_cast<std::int64_t>(budget.capacity.si() / 4.0) + 2;
    for (shape.m = 1; shape.m <= reach;
         shape.m += 1 + static_cast<std::int64_t>(random() % (1 + shape.m / 3))) {
      const auto best = exhaustive::gemm(shape, budget);
      const auto best_panels = exhaustive::panels(shape, budget.capacity);
      if (tiles.rows != nullptr) {
        const auto bytes = rsim::settled_tile_bytes(tiles, shape, budget, cache);
        const auto panel_bytes = rsim::settled_panel_bytes(panels, shape, budget.capacity, cache);
        REQUIRE(bytes.has_value() == best.has_value());
        REQUIRE(panel_bytes.has_value() == best_panels.has_value());
        if (bytes) {
          REQUIRE(bytes->si() == best->bytes.si());
          ++kept_answers;
        }
        if (panel_bytes) {
          REQUIRE(panel_bytes->si() == best_panels->bytes.si());
        }
      }
      exhaustive::require_same(rsim::best_gemm_tile(shape, budget, &cache, &tiles), best);
      exhaustive::require_same(rsim::best_panel_tile(shape, budget.capacity, &cache, &panels),
                               best_panels);
      ++searches;
    }
  }
  REQUIRE(searches > 3000);
  REQUIRE(kept_answers > 2000);
}

TEST_CASE("a tie of tiles settles only where the bytes are exact", "[tiling]") {
  // Llama 3 70B's down_proj with TP 8 on an H100 SM, the tile in its 256 KiB register file
  // (accumulators included) for shared memory's traffic: K = 28672 / 8 = 3584, N = 8192, bf16.
  // Tiles 256×128 and 128×256 (bk 64) fit: X 2·256·64·2 = 64 KiB + W 2·64·128·2 = 32 KiB + fp32
  // accumulators 256·128·4 = 128 KiB = 224 KiB (bk 128: 320 KiB; 256×256: 256 KiB of
  // accumulators alone). 256×128 reads 2·M·K·N/128 + 2·K·N·M/256 = 2·M·K·(64 + 32) bytes,
  // 128×256 2·M·K·(32 + 64): a tie, broken by the larger bm; every other tile reads more (512×64:
  // 2·M·K·(128 + 16)). The tie holds only where every figure is exact (below 2^45 bytes), so
  // there the key's winner answers; beyond, the search ranks again. Either way it is the
  // exhaustive search's tile.
  rsim::TileCache cache;
  const rsim::TileBudget budget{rsim::Bytes(256.0 * 1024), std::nullopt};
  rsim::GemmShape shape{1.0, 1, 8192, 3584, 2.0, 2.0, 2.0, 4.0};
  const auto search = [&](std::int64_t m) {
    shape.m = m;
    const auto best = rsim::best_gemm_tile(shape, budget, &cache);
    exhaustive::require_same(best, exhaustive::gemm(shape, budget));
    return best;
  };
  // 16,384 tokens: 2·16384·3584·96 = 11.3 GB of traffic, exact.
  REQUIRE(search(16384)->tile == rsim::Tile{256, 128, 64});
  REQUIRE(cache.settled_searches() == 1);
  REQUIRE(search(3 * 16384)->tile == rsim::Tile{256, 128, 64});
  REQUIRE(cache.settled_searches() == 2);
  // bm = 256 does not divide 16384 + 128: the search ranks again.
  search(16384 + 128);
  REQUIRE(cache.settled_searches() == 2);
  // 2^40 tokens: 2·2^40·3584·96 ≈ 7.6e17 bytes, past 2^45: ranked again.
  search(std::int64_t{1} << 40);
  REQUIRE(cache.settled_searches() == 2);
}

TEST_CASE("settled tile searches keep to the ranking at the edges a review found", "[tiling]") {
  // The cached search (first) against the uncached one, field by field.
  const auto same_as_uncached = exhaustive::require_same;
  SECTION("a batch of 0 ties every candidate at 0 bytes: it ranks, and settles nothing") {
    // The register-file tile of the tie test above: 256×128×64 wins at batch 1; at batch 0 the
    // tie-break alone decides (1024×32×16 is the largest bm among the largest bm·bn).
    const rsim::TileBudget budget{rsim::Bytes(256.0 * 1024), std::nullopt};
    for (const std::array<double, 2> batches : {std::array{1.0, 0.0}, std::array{0.0, 1.0}}) {
      rsim::TileCache cache;
      for (const double batch : batches) {
        const rsim::GemmShape shape{batch, 16384, 8192, 3584, 2.0, 2.0, 2.0, 4.0};
        same_as_uncached(rsim::best_gemm_tile(shape, budget, &cache),
                         rsim::best_gemm_tile(shape, budget));
      }
    }
  }
  SECTION("a flash search without Q+O or K/V bytes neither settles nor answers from a key") {
    // Both searches would share the ratio 0 (0 / 1e6, and no K/V at all).
    rsim::FlashShape flash;
    flash.query_tokens = 3251;
    flash.cached_tokens = 5046;
    flash.head_dim = 128;
    const rsim::TileBudget budget{rsim::Bytes(32768.0), std::nullopt};
    rsim::TileCache cache;
    for (const std::array<double, 2> bytes : {std::array{0.0, 1e6}, std::array{1e6, 0.0}}) {
      flash.query_output_bytes = rsim::Bytes(bytes[0]);
      flash.key_value_bytes = rsim::Bytes(bytes[1]);
      same_as_uncached(rsim::best_flash_tile(flash, budget, &cache),
                       rsim::best_flash_tile(flash, budget));
    }
  }
  SECTION("the bound on the row at M leaves rounding to the footprints themselves") {
    // Petabyte capacities, where the bound's products and the footprint's round apart.
    rsim::TileCache cache;
    const rsim::GemmShape separate{1.0, 3450702470169061, 3, 1, 0.5625, 0.515625, 0.5625, 4.0};
    const rsim::TileBudget separate_budget{rsim::Bytes(1941020139470096.0),
                                           rsim::Bytes(41408429642028736.0)};
    same_as_uncached(rsim::best_gemm_tile(separate, separate_budget, &cache),
                     rsim::best_gemm_tile(separate, separate_budget));
    const rsim::GemmShape shared{1.0, 15471111434895210, 1, 7, 0.515625, 0.53125, 0.5, 2.0};
    const rsim::TileBudget shared_budget{rsim::Bytes(86783265705115312.0), std::nullopt};
    same_as_uncached(rsim::best_gemm_tile(shared, shared_budget, &cache),
                     rsim::best_gemm_tile(shared, shared_budget));
  }
}
