// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/units.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/tile.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
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
  Bytes query_output_bytes;  ///< Q read once and O written once, all instances
  Bytes key_value_bytes;     ///< K and V (cache included) read once, all instances
  double q_element_bytes = 2.0;
  double kv_element_bytes = 2.0;
  [[nodiscard]] std::int64_t kv_tokens() const { return cached_tokens + query_tokens; }
};

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
  using Key = std::array<double, 10>;
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
/// With a cache, a search whose M lies past the rows (no tile of row edge bm = M fits and the
/// rows ended below M) ranks the same candidates at every such M. Where bm divides M a candidate
/// reads bytes ∝ M·batch, elsewhere more (⌈M/bm⌉ > M/bm). The key's winner is certified once:
/// every other candidate reads the same expression and loses the tie-break, or reads > 1e-9 more
/// (a margin no rounding of the few products closes). Then every search past the rows where the
/// winner's bm divides M costs only it: the same result, bit for bit, and a sweep along the
/// batch pays one traffic evaluation per tier. Past the rows where it does not, the search ranks
/// the key's front only (Rows::front): a candidate read at least as often from X and from W as
/// another, which it loses ties to, loses at every M (its bytes round no lower).
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

/// FMHA traffic with a query tile bm and a K/V tile bn: Q and O once; K and V once per query
/// tile (causal: only the keys that tile can see), or once if one head's K and V fit
/// (resident). Footprint: Q tile, double-buffered K and V tiles (or the whole head's), the fp32
/// score tile and the fp32 output accumulator, all for `group` packed query heads.
TiledTraffic flash_traffic(const FlashShape& shape, Tile tile);

std::optional<TiledTraffic> best_flash_tile(const FlashShape& shape, const TileBudget& budget,
                                            TileCache* cache = nullptr);

}  // namespace rsim
