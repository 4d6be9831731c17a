// SPDX-License-Identifier: MIT
#pragma once

// The best tile that fits a tier (GEMM tiles, L2 panels, FMHA tiles), searched over the tile
// model's candidate rows (tiling.hpp), with or without a TileCache, and the searches a caller
// keeps (SettledGemm) to answer the same search at other sizes.

#include "sim/base/units.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tiling.hpp"

#include <cstdint>
#include <limits>
#include <optional>

namespace rsim {

/// A GEMM search the cache answered (see best_gemm_tile), kept by the caller to answer the same
/// search (the same key: N, K, element widths, budget, schedule) at another M or batch with no
/// lookup: a batch line's tiers, point after point. It holds the key's rows, and the least M
/// the search was found past them at: past the rows at one M is past them at every larger M
/// (the rows are final, and no tile of row edge M fits a larger M either). It points into the
/// cache that answered, and is good while that lives.
struct SettledGemm {
  static constexpr std::int64_t kNotPast = std::numeric_limits<std::int64_t>::max();
  const TileCache* cache = nullptr;  ///< the cache it points into (it answers only with it)
  TileCache::Rows* rows = nullptr;   ///< the key's (none: it holds no search)
  TileCache::Key key{};              ///< the search's key
  std::int64_t from_m = kNotPast;    ///< the least M found past the rows (kNotPast: none yet)
};

/// The search `settled` holds, answering one at `shape` past the rows: the same search but for M
/// and the batch (the caller keeps one per op and tier, whose budget is fixed): best_gemm_tile's
/// (or best_panel_tile's) result there, bit for bit. nullopt where it holds none, M is below
/// from_m, N, K or a width differ, `cache` is not the one it came from, or the search found no
/// tile.
std::optional<TiledTraffic> settled_search(const SettledGemm& settled, const GemmShape& shape,
                                           TileCache& cache);

/// The bytes of best_gemm_tile(shape, budget, &cache, &settled) where `settled` holds the rows of
/// this search's key (any M): the same search over them, keeping only the least bytes (bytes
/// rank first, so they are the best tile's, bit for bit) with no lookup and no tile copied.
/// nullopt where it holds another key (best_gemm_tile then searches, and keeps this one) or the
/// search finds no tile.
OptionalBytes settled_tile_bytes(SettledGemm& settled, const GemmShape& shape,
                                 const TileBudget& budget, TileCache& cache);
/// The same for best_panel_tile(shape, capacity, &cache, &settled).
OptionalBytes settled_panel_bytes(SettledGemm& settled, const GemmShape& shape, Bytes capacity,
                                  TileCache& cache);

/// The tile of least traffic whose footprint fits `capacity` (ties: the larger bm·bn, then the
/// larger bm, then the smaller footprint — deterministic). Candidates per dimension: powers of two
/// below it and the dimension itself. nullopt when not even a 1×1×1 tile fits.
///
/// With a cache, a search past the rows (no tile of row edge M fits) costs only the key's winner,
/// certified once, where its bm divides M, and else ranks the key's front only: bit for bit.
/// Proof: docs/design/tiling.md#past-the-rows-the-certified-winner-and-the-front
///
/// `settled` (optional, with a cache): a search it holds answers this one where it can (the same
/// key and M past the rows: the result the cache would give, bit for bit); otherwise it is left
/// holding this search's key and rows, and the least M found past them.
std::optional<TiledTraffic> best_gemm_tile(const GemmShape& shape, const TileBudget& budget,
                                           TileCache* cache = nullptr,
                                           SettledGemm* settled = nullptr);

/// The other schedule of a shared tier (L2): it keeps a bm×K panel of X and a K×bn panel of W
/// (footprint s_x·bm·K + s_w·K·bn, no accumulators: the SMs hold those) while successive waves
/// compute the bm×bn region; traffic as gemm_traffic with bk = K.
std::optional<TiledTraffic> best_panel_tile(const GemmShape& shape, Bytes capacity,
                                            TileCache* cache = nullptr,
                                            SettledGemm* settled = nullptr);

/// The rows of a flash search's key last looked up (best_flash_tile): a caller that searches the
/// same op and tier at size after size keeps one, and a search of the same key takes its rows
/// without hashing the key.
struct KeptFlashRows {
  const TileCache* cache = nullptr;
  TileCache::Rows* rows = nullptr;
  TileCache::Key key{};
};

std::optional<TiledTraffic> best_flash_tile(const FlashShape& shape, const TileBudget& budget,
                                            TileCache* cache = nullptr,
                                            KeptFlashRows* kept = nullptr);

}  // namespace rsim
