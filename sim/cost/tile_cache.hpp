// SPDX-License-Identifier: MIT
#pragma once

// The tile searches' memo (TileCache): per key, the candidate rows, the certified winner and the
// fronts past the rows. The searches that use it: tile_search.hpp.

#include "sim/cost/tiling.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace rsim {

/// Memo of the searches' candidate rows. For a row edge bm below M they depend on N, K, the
/// element widths and the budget only, not on M or the batch: a sweep over the batch (M) or a
/// search over plans finds them once per weight shape, then ranks ~log₂ M candidates per
/// search. Results are the same with or without it. Not thread-safe: one per thread.
class TileCache {
 public:
  TileCache() = default;
  /// Not copyable: the copy's recent-key slots would point into this cache's rows.
  TileCache(const TileCache&) = delete;
  TileCache& operator=(const TileCache&) = delete;
  ~TileCache() = default;
  using Key = std::array<double, 11>;
  /// The rows of one search, for bm = 1, 2, 4, … in order, computed as far as a search needed.
  struct Rows {
    std::vector<TileRow> rows;
    /// The last row has no candidate: neither has any larger bm below M (footprints grow with bm).
    bool ended = false;
    /// Whether one tile wins every search this key settles (a GEMM's past the rows where the
    /// tile's bm divides M: see best_gemm_tile; every flash search of the key), found once.
    enum class Settled : std::uint8_t { untried, certified, certified_if_exact, refused };
    Settled settled = Settled::untried;
    TiledTraffic winner{};  ///< when certified: its bytes are the search's to fill in
    /// A GEMM key past its rows: the candidates no other one beats at every M there (fewer or
    /// as many reads of X and of W, and first on ties). A search past the rows the winner does
    /// not answer ranks these only, in the order of `front_slopes`.
    std::vector<TiledTraffic> front;
    /// Per candidate of `front`, ascending: bytes per M·batch it reads at least (X's and the
    /// output's, and a streamed W's at M/bm reads), which prunes the ranking.
    std::vector<double> front_slopes;
    /// Before the rows end (a tile of row edge M fits): the front of rows 0 … front_below_last,
    /// the rows below M of the last search, ordered by its slopes, which searches at every M
    /// with the same rows below it rank (then the row at M itself).
    std::vector<TiledTraffic> front_below;
    std::vector<double> front_below_slopes;
    int front_below_last = -1;
  };
  Rows* rows(const Key& key);
  /// Searches answered by their key's settled winner with no ranking (best_gemm_tile,
  /// best_panel_tile, settled_tile_bytes, settled_panel_bytes, flash searches): how much a search
  /// at size after size reuses.
  [[nodiscard]] std::int64_t settled_searches() const { return settled_searches_; }
  void count_settled_search() { ++settled_searches_; }

 private:
  std::int64_t settled_searches_ = 0;
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  std::unordered_map<Key, Rows, KeyHash> rows_;
  /// A direct-mapped front of rows_ (a miss falls through to it): a sweep looks up the same few
  /// dozen keys at every point, and a slot compare is cheaper than the map's lookup.
  struct Recent {
    Key key{};
    Rows* rows = nullptr;
  };
  std::array<Recent, 1024> recent_{};
};

}  // namespace rsim
