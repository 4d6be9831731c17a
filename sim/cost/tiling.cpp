// SPDX-License-Identifier: MIT
#include "sim/cost/tiling.hpp"

#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <tuple>

namespace rsim {
namespace {

// K-slice depths a streamed tile may take (tensor-core / MXU friendly); K itself makes the
// slice the whole contraction, which lets an operand stay resident.
constexpr std::array<std::int64_t, 5> kSliceDepths{16, 32, 64, 128, 256};

// Whether `divisor` divides `multiple`: a mask for the power-of-two tile edges most searches try.
bool divides(std::int64_t divisor, std::int64_t multiple) {
  const auto bits = static_cast<std::uint64_t>(divisor);
  return (bits & (bits - 1)) == 0 ? (static_cast<std::uint64_t>(multiple) & (bits - 1)) == 0
                                  : multiple % divisor == 0;
}

// ⌈numerator / denominator⌉; a shift for the power-of-two tile edges most searches try.
double ceil_div(std::int64_t numerator, std::int64_t denominator) {
  const auto divisor = static_cast<std::uint64_t>(denominator);
  const std::int64_t rounded_up = numerator + denominator - 1;
  const bool power_of_two = (divisor & (divisor - 1)) == 0;  // no popcount instruction needed
  return static_cast<double>(power_of_two ? rounded_up >> std::countr_zero(divisor)
                                          : rounded_up / denominator);
}

// The axes of `tensor` (index `code` in GemmAxis) found in every tensor of `present` and in none
// of `absent`.
std::vector<GemmAxis> axes_where(const Tensor& tensor, std::uint8_t code,
                                 std::initializer_list<const Tensor*> present,
                                 std::initializer_list<const Tensor*> absent) {
  std::vector<GemmAxis> found;
  for (std::size_t index = 0; index < tensor.axes.size(); ++index) {
    const std::string& name = tensor.axes[index].name;
    const bool in_all = std::all_of(present.begin(), present.end(),
                                    [&](const Tensor* other) { return other->has_axis(name); });
    const bool in_none = std::none_of(absent.begin(), absent.end(),
                                      [&](const Tensor* other) { return other->has_axis(name); });
    if (in_all && in_none) {
      found.push_back({code, static_cast<std::uint8_t>(index)});
    }
  }
  return found;
}

std::int64_t axis_product(const std::array<const Tensor*, 3>& tensors,
                          const std::vector<GemmAxis>& axes) {
  std::int64_t product = 1;
  for (const GemmAxis& axis : axes) {
    product *= tensors[axis.tensor]->axes[axis.axis].size;
  }
  return product;
}

std::int64_t axis_size(const Tensor& tensor, std::string_view name, std::int64_t otherwise) {
  for (const Axis& axis : tensor.axes) {
    if (axis.name == name) {
      return axis.size;
    }
  }
  return otherwise;
}

// Ranks candidates: least traffic, then the larger tile (bm·bn, then bm: a kernel takes the
// biggest tile that fits when bytes tie), then the smaller footprint.
auto rank_key(const TiledTraffic& traffic, Bytes bytes) {
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
void keep_better(const TiledTraffic& candidate, Bytes bytes, std::optional<TiledTraffic>& best) {
  if (!best || rank_key(candidate, bytes) < rank_key(*best, best->bytes)) {
    best = candidate;
    best->bytes = bytes;
  }
}
void keep_better(const TiledTraffic& /*candidate*/, Bytes bytes, LeastBytes& least) {
  least.bytes = std::min(least.bytes, bytes.si());
}

// Whether a search has found a candidate, and its bytes if so.
bool found(const std::optional<TiledTraffic>& best) { return best.has_value(); }
bool found(LeastBytes least) { return least.bytes < std::numeric_limits<double>::infinity(); }
double best_bytes(const std::optional<TiledTraffic>& best) { return best->bytes.si(); }
double best_bytes(LeastBytes least) { return least.bytes; }

// Every candidate of `row`, with its bytes from `bytes_of`, against `best`.
template <typename Best, typename BytesOf>
void rank_row(const TileRow& row, const BytesOf& bytes_of, Best& best) {
  for (int index = 0; index < row.count; ++index) {
    const TiledTraffic& candidate = row.candidates[static_cast<std::size_t>(index)];
    keep_better(candidate, bytes_of(candidate), best);
  }
}

}  // namespace

GemmAxes gemm_axes(const Op& matmul) {
  RSIM_CHECK(matmul.kind == OpKind::matmul && matmul.inputs.size() >= 2 && !matmul.outputs.empty(),
             "gemm_axes of an op that is not a matmul");
  const Tensor& x = matmul.inputs[0];
  const Tensor& w = matmul.inputs[1];
  const Tensor& out = matmul.outputs.front();
  RSIM_CHECK(std::max({x.axes.size(), w.axes.size(), out.axes.size()}) <= 255,
             "a matmul tensor with more than 255 axes");
  return GemmAxes{axes_where(out, 2, {&x, &w}, {}), axes_where(x, 0, {&out}, {&w}),
                  axes_where(w, 1, {&out}, {&x}), axes_where(x, 0, {&w}, {&out})};
}

GemmShape gemm_shape(const Op& matmul, const GemmAxes& axes) {
  const std::array<const Tensor*, 3> tensors{&matmul.inputs[0], &matmul.inputs[1],
                                             &matmul.outputs.front()};
  GemmShape shape;
  shape.batch = static_cast<double>(axis_product(tensors, axes.batch));
  shape.m = axis_product(tensors, axes.m);
  shape.n = axis_product(tensors, axes.n);
  shape.k = axis_product(tensors, axes.k);
  shape.x_element_bytes = bytes_per_element(tensors[0]->dtype);
  shape.w_element_bytes = bytes_per_element(tensors[1]->dtype);
  shape.out_element_bytes = bytes_per_element(tensors[2]->dtype);
  return shape;
}

GemmShape gemm_shape(const Op& matmul) { return gemm_shape(matmul, gemm_axes(matmul)); }

FlashShape flash_shape(const Op& attention) {
  RSIM_CHECK(attention.kind == OpKind::attention && attention.inputs.size() >= 3,
             "flash_shape of an op that is not a fused attention");
  const AttentionShape& attn = attention.attention;
  const std::int64_t kv_heads = axis_size(attention.inputs[1], "kv_heads", attn.heads);
  FlashShape shape;
  shape.instances = static_cast<double>(attn.batch * kv_heads);
  shape.group = std::max<std::int64_t>(1, attn.heads / std::max<std::int64_t>(1, kv_heads));
  shape.query_tokens = attn.query_tokens;
  shape.cached_tokens = attn.cached_tokens;
  shape.head_dim = attn.head_dim;
  shape.causal = attn.mask == AttentionMask::causal;
  shape.query_output_bytes = attention.inputs[0].bytes();
  for (const Tensor& output : attention.outputs) {
    shape.query_output_bytes += output.bytes();
  }
  for (std::size_t index = 1; index < attention.inputs.size(); ++index) {
    shape.key_value_bytes += attention.inputs[index].bytes();
  }
  shape.q_element_bytes = bytes_per_element(attention.inputs[0].dtype);
  shape.kv_element_bytes = bytes_per_element(attention.inputs.back().dtype);
  return shape;
}

Bytes ideal_traffic(const GemmShape& shape) {
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  return Bytes(shape.batch * (shape.x_element_bytes * m * k + shape.w_element_bytes * k * n +
                              shape.out_element_bytes * m * n));
}

namespace {

// The tile clamped to the shape, its residency and its footprint: what decides whether it fits,
// without the traffic (whose divisions cost more than the rest).
TiledTraffic gemm_tile_footprint(const GemmShape& shape, Tile tile) {
  TiledTraffic traffic;
  traffic.tile = {std::min(tile.bm, shape.m), std::min(tile.bn, shape.n),
                  std::min(tile.bk, shape.k)};
  const Tile& clamped = traffic.tile;
  traffic.x_resident = clamped.bm == shape.m && clamped.bk == shape.k;
  traffic.w_resident = clamped.bn == shape.n && clamped.bk == shape.k;
  const auto bm = static_cast<double>(clamped.bm);
  const auto bn = static_cast<double>(clamped.bn);
  const auto bk = static_cast<double>(clamped.bk);
  const double x_buffers = traffic.x_resident ? 1.0 : 2.0;
  const double w_buffers = traffic.w_resident ? 1.0 : 2.0;
  traffic.accumulators = Bytes(bm * bn * shape.accumulator_bytes);
  traffic.footprint = Bytes(x_buffers * bm * bk * shape.x_element_bytes +
                            w_buffers * bk * bn * shape.w_element_bytes) +
                      traffic.accumulators;
  return traffic;
}

}  // namespace

namespace {

// The bytes of a clamped tile with its residency (gemm_traffic's formula).
Bytes gemm_bytes(const GemmShape& shape, const TiledTraffic& traffic) {
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

}  // namespace

TiledTraffic gemm_traffic(const GemmShape& shape, Tile tile) {
  TiledTraffic traffic = gemm_tile_footprint(shape, tile);
  traffic.bytes = gemm_bytes(shape, traffic);
  return traffic;
}

bool TileBudget::fits(const TiledTraffic& traffic) const {
  if (!accumulator_capacity) {
    return traffic.footprint <= capacity;
  }
  return traffic.footprint - traffic.accumulators <= capacity &&
         traffic.accumulators <= *accumulator_capacity;
}

namespace {

// Every search below walks bm over 1, 2, 4, … below M, then M and, for each bm, keeps only the
// largest bn that fits within a family of candidates whose footprint grows with bn while their
// traffic does not: a larger bn never reads more (⌈N/bn⌉ falls) and wins ties (larger bm·bn). That
// is the same argmin as trying every (bm, bn) pair, in O(log M · log N) cheap checks instead of
// O(log M · log N · depths) traffic evaluations; tests hold it against the exhaustive search.

// The largest index below `count` at which `holds` is true, for a predicate true on a prefix of
// the indices (a footprint growing with the index against a capacity); −1 if none. `guess` is
// where the answer probably is (from the footprint's formula solved for the capacity): two
// checks confirm it, else a binary search in the bracket the checks left. The guess only saves
// checks: the answer is the same for any guess.
template <typename Holds>
int largest_true(int count, int guess, const Holds& holds) {
  int low = -1;      // the last index known to hold
  int high = count;  // the first index known not to
  if (count == 0) {
    return low;
  }
  guess = std::clamp(guess, 0, count - 1);
  if (holds(guess)) {
    low = guess;
    if (guess + 1 < count && !holds(guess + 1)) {
      high = guess + 1;
    }
  } else {
    high = guess;  // the common case of a row past the capacity (guess 0): one check
  }
  while (high - low > 1) {
    const int middle = low + (high - low) / 2;
    (holds(middle) ? low : high) = middle;
  }
  return low;
}

// The largest of 1, 2, 4, … below `extent` (and `extent` itself if `include_extent`) at which
// `fits_at` holds, for a family whose footprint grows with the edge (so the edges that fit are a
// prefix); `limit` estimates the largest edge that fits. nullopt if not even 1 fits.
template <typename FitsAt>
std::optional<std::int64_t> largest_fitting_edge(std::int64_t extent, bool include_extent,
                                                 double limit, const FitsAt& fits_at) {
  const int powers =  // 1, 2, …, 2^(powers−1) are below the extent
      extent > 1 ? std::bit_width(static_cast<std::uint64_t>(extent - 1)) : 0;
  const int edges = powers + (include_extent ? 1 : 0);
  const auto edge_at = [&](int index) {
    return index < powers ? std::int64_t{1} << index : extent;
  };
  int guess = 0;
  if (include_extent && limit >= static_cast<double>(extent)) {
    guess = edges - 1;
  } else if (limit >= 1.0) {
    guess = std::bit_width(static_cast<std::uint64_t>(std::min(limit, 1e18))) - 1;
  }
  const int index = largest_true(edges, guess, [&](int at) { return fits_at(edge_at(at)); });
  return index >= 0 ? std::optional<std::int64_t>(edge_at(index)) : std::nullopt;
}

// What a GEMM tile with edges bm and bk (clamped) leaves for bn: the largest bn whose footprint,
// x_buffers·bm·bk·s_x + w_buffers·bk·bn·s_w + bm·bn·s_acc (gemm_tile_footprint's, affine in bn),
// fits the budget. An estimate for largest_fitting_edge, which checks it.
double bn_limit(const GemmShape& shape, const TileBudget& budget, std::int64_t bm, std::int64_t bk,
                double x_buffers, double w_buffers) {
  const auto rows = static_cast<double>(std::min(bm, shape.m));
  const auto depth = static_cast<double>(std::min(bk, shape.k));
  const double operands_left =
      budget.capacity.si() - x_buffers * rows * depth * shape.x_element_bytes;
  const double w_per_bn = w_buffers * depth * shape.w_element_bytes;
  const double accumulators_per_bn = rows * shape.accumulator_bytes;
  if (!budget.accumulator_capacity) {
    return operands_left / (w_per_bn + accumulators_per_bn);
  }
  return std::min(operands_left / w_per_bn,
                  budget.accumulator_capacity->si() / accumulators_per_bn);
}

// The same for the K-slice depth of a streamed tile (bm, bn), whose footprint is affine in bk.
double bk_limit(const GemmShape& shape, const TileBudget& budget, std::int64_t bm,
                std::int64_t bn) {
  const auto rows = static_cast<double>(std::min(bm, shape.m));
  const auto columns = static_cast<double>(std::min(bn, shape.n));
  const double per_bk = 2.0 * rows * shape.x_element_bytes + 2.0 * columns * shape.w_element_bytes;
  const double accumulators = rows * columns * shape.accumulator_bytes;
  return (budget.capacity.si() - (budget.accumulator_capacity ? 0.0 : accumulators)) / per_bk;
}

// Streamed K-slice depths below K, shallowest first.
struct SliceDepths {
  std::array<std::int64_t, kSliceDepths.size()> depths{};
  std::size_t count = 0;
  explicit SliceDepths(std::int64_t k) {
    for (std::int64_t depth : kSliceDepths) {
      if (depth < k) {
        depths[count++] = depth;
      }
    }
  }
};

// best_gemm_tile's candidates with row edge bm.
TileRow gemm_row(const GemmShape& shape, const TileBudget& budget, std::int64_t bm) {
  const SliceDepths streamed(shape.k);
  const auto fits = [&](std::int64_t bn, std::int64_t bk) {
    return budget.fits(gemm_tile_footprint(shape, {bm, bn, bk}));
  };
  TileRow row;
  // Streamed (bk < K): X and W double-buffered, so the footprint grows with bn at any depth
  // and a bn fits at some depth iff it fits at the shallowest. Of that bn the deepest depth
  // that fits is kept (fewer pipeline steps, same bytes).
  if (streamed.count > 0) {
    const std::int64_t shallowest = streamed.depths[0];
    if (const auto widest =
            largest_fitting_edge(shape.n, true, bn_limit(shape, budget, bm, shallowest, 2.0, 2.0),
                                 [&](std::int64_t bn) { return fits(bn, shallowest); })) {
      // The depths that fit at that bn are a prefix (the footprint grows with bk).
      const double depth_limit = bk_limit(shape, budget, bm, *widest);
      int depth_guess = 0;
      while (depth_guess + 1 < static_cast<int>(streamed.count) &&
             static_cast<double>(streamed.depths[static_cast<std::size_t>(depth_guess + 1)]) <=
                 depth_limit) {
        ++depth_guess;
      }
      const int deepest = largest_true(static_cast<int>(streamed.count), depth_guess, [&](int at) {
        return fits(*widest, streamed.depths[static_cast<std::size_t>(at)]);
      });
      row.add(gemm_tile_footprint(
          shape, {bm, *widest, streamed.depths[static_cast<std::size_t>(deepest)]}));
    }
  }
  // bk = K below bn = N (W streamed; X resident iff bm = M): footprint grows with bn.
  const double x_buffers = bm >= shape.m ? 1.0 : 2.0;
  if (const auto widest =
          largest_fitting_edge(shape.n, false, bn_limit(shape, budget, bm, shape.k, x_buffers, 2.0),
                               [&](std::int64_t bn) { return fits(bn, shape.k); })) {
    row.add(gemm_tile_footprint(shape, {bm, *widest, shape.k}));
  }
  // bk = K, bn = N: W resident and single-buffered, so it may fit where a smaller bn did not.
  if (fits(shape.n, shape.k)) {
    row.add(gemm_tile_footprint(shape, {bm, shape.n, shape.k}));
  }
  return row;
}

Bytes panel_footprint(const GemmShape& shape, std::int64_t bm, std::int64_t bn) {
  return Bytes(static_cast<double>(bm) * static_cast<double>(shape.k) * shape.x_element_bytes +
               static_cast<double>(shape.k) * static_cast<double>(bn) * shape.w_element_bytes);
}

// best_panel_tile's candidate with row edge bm: the panels' footprint grows with bn and the
// traffic never does (W is resident at bn = N).
TileRow panel_row(const GemmShape& shape, Bytes capacity, std::int64_t bm) {
  TileRow row;
  // The panels' footprint s_x·bm·K + s_w·K·bn, solved for bn.
  const double limit = (capacity - panel_footprint(shape, bm, 0)).si() /
                       (static_cast<double>(shape.k) * shape.w_element_bytes);
  if (const auto widest = largest_fitting_edge(shape.n, true, limit, [&](std::int64_t bn) {
        return panel_footprint(shape, bm, bn) <= capacity;
      })) {
    TiledTraffic panels = gemm_tile_footprint(shape, {bm, *widest, shape.k});
    panels.accumulators = Bytes(0.0);
    panels.footprint = panel_footprint(shape, bm, *widest);
    panels.panels = true;
    row.add(panels);
  }
  return row;
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

}  // namespace

void TileRow::add(const TiledTraffic& candidate) {
  candidates[static_cast<std::size_t>(count++)] = candidate;
}

std::size_t TileCache::KeyHash::operator()(const Key& key) const {
  // Every number's bits (they sit high in a double), mixed by multiplication so that they reach
  // the top bits too, which pick the front's slot.
  std::uint64_t mixed = 0;
  for (const double value : key) {
    mixed = (mixed ^ std::bit_cast<std::uint64_t>(value)) * 0x9e3779b97f4a7c15ULL;
  }
  return static_cast<std::size_t>(mixed);
}

TileCache::Rows* TileCache::rows(const Key& key) {
  // The front's slot from every number of the key, each multiplied by its own odd constant
  // (independent products, not one chain) and folded; the top bits pick the slot. A sweep over
  // several plans keeps a few dozen keys live per thread.
  std::uint64_t mixed = 0;
  for (std::size_t index = 0; index < key.size(); ++index) {
    mixed ^= std::bit_cast<std::uint64_t>(key[index]) * (0x9e3779b97f4a7c15ULL + 2 * index);
  }
  Recent& slot = recent_[static_cast<std::size_t>((mixed * 0xc2b2ae3d27d4eb4fULL) >> 54)];
  // Bitwise: a key equal by value but not in bits (±0) only misses the front.
  if (slot.rows == nullptr || std::memcmp(slot.key.data(), key.data(), sizeof(Key)) != 0) {
    slot = {key, &rows_[key]};  // unordered_map's references survive rehashing
  }
  return slot.rows;
}

namespace {

// How a candidate stands against a key's winner at every size the key settles.
enum class Standing {
  loses,           ///< at every such size
  loses_if_exact,  ///< where every bytes figure is exact (below kExactBytes): a tie or near-tie
  unknown,         ///< the winner cannot be settled
};

// Below this every bytes figure of a tile search is exact: a dyadic width (k/2^j, j ≤ 7, the
// dtypes' bytes per element) times integer sizes, a multiple of 2^-7 under 2^53 · 2^-7, and each
// partial product and sum of gemm_bytes is no larger than its total. Half of that for headroom.
constexpr double kExactBytes = 0x1p45;

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

// A relative margin of bytes no rounding of gemm_bytes' or flash_bytes' few products and sums
// (~1e-15 each) closes.
constexpr double kMargin = 1.0 + 1e-9;

// `candidate` would lose a tie of bytes with `winner` (the rest of rank_key).
bool loses_tie(const TiledTraffic& candidate, const TiledTraffic& winner) {
  return rank_key(winner, Bytes(0.0)) < rank_key(candidate, Bytes(0.0));
}

// The candidates of the first `row_count` rows that no other one beats at every M past them.
// There, none holds X (bm < M) and a candidate reads
// batch·(s_x·M·K·⌈N/bn⌉ + s_w·K·N·w_reads + s_o·M·N), w_reads = 1 if W is resident, else ⌈M/bm⌉
// (no more for a larger bm: ⌈⌉ is monotonic). So a candidate reading X at least as often as
// another (⌈N/bn⌉) and W at least as often (the other holds W, or neither does and its bm is
// no larger) reads no fewer bytes at any M, each product and sum rounding monotonically; if it
// also loses ties to it, it never ranks first.
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

// Sorts a front by its slopes into `slopes` (ties: the rows' order, for determinism).
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

// The key's winner past the rows (its rows ended with row `last` + 1 empty), settled. Past the
// rows a candidate reads g = batch·(s_x·M·K·⌈N/bn⌉ + s_w·K·N·M/bm + s_o·M·N) where bm divides M,
// and more (⌈M/bm⌉ > M/bm) where it does not. The winner has the least g (ranked at
// M = 2^(last+1), which every row edge divides). g is ∝ M·batch and the key fixes the rest, so
// where the winner's bm divides M (it then reads exactly its g) every other candidate loses as it
// did here if it reads the same expression (the same tie-break), more than kMargin over it, or
// at least as often from X and from W as the winner and loses ties (bytes round monotonically).
// A tie or near-tie otherwise holds where the figures are exact (the winner's below kExactBytes
// puts the tie's below 2^46).
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
  cached.settled = settle(cached.rows, static_cast<std::size_t>(last + 1), TileRow{}, standing);
  cached.front = past_rows_front(shape, cached.rows, static_cast<std::size_t>(last + 1));
  order_front(shape, cached.front, cached.front_slopes);
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

// No tile of row edge M reads fewer bytes than this (gemm_bytes' arithmetic, so the bound holds
// after rounding too): each reads W once (⌈M/M⌉), and X once if X can stay resident (all M × K
// of it fits), else ⌈N/bn⌉ times, bn being no wider than its M × bn accumulators allow (once,
// where that is N). The capacities are stretched by kMargin for the footprints' rounding.
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

// The GEMM search over cached rows, pruned without changing its argmin (the ranking is a total
// order on distinct tiles, so the order of the walk does not matter either). Past the rows, where
// the key's certified winner's bm divides M (or it holds W), the result is that winner
// (settle_gemm), else the best of the key's front. Before, the front of the rows below M (pruned by
// slope), then the row at M unless `at_m` says no tile of row edge M fits or its floor of that
// row's bytes exceeds the best below M. `cached` is the cache's rows of `key`; `settled` (if
// any) is left holding them, and the least M found past them.
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
  const int top = shape.m > 1 ? std::bit_width(static_cast<std::uint64_t>(shape.m - 1)) - 1 : -1;
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
  // The rows below M by their front, found once per last row: every candidate there has bm < M
  // (rows are only appended below the M that asks for them: X is never resident), so a
  // candidate another reads no more X and W than, and loses ties to, loses at every M, as past
  // the rows.
  if (cached.front_below_last != last) {
    cached.front_below = past_rows_front(shape, cached.rows, static_cast<std::size_t>(last + 1));
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

}  // namespace

namespace {

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

// A tile search's row at bm = M. Every tile of row edge M holds at least M × 2·kSliceDepths[0]
// elements of X (two streamed slices, where K is deeper) or all M × K of it (bk = K, resident),
// and an M × 1 accumulator: past the capacities none fits. The footprints round their own way
// (and `fits` subtracts the accumulators back out), so only a bound past a capacity by kMargin
// counts. Else least_at_row_edge_m bounds its bytes.
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

namespace {

// How many times K and V are read for a clamped tile: once per query tile (flash_traffic's
// formula), or once if resident.
double flash_rereads(const FlashShape& shape, const TiledTraffic& traffic) {
  const std::int64_t kv_tokens = shape.kv_tokens();
  const Tile& clamped = traffic.tile;
  const double tiles = ceil_div(shape.query_tokens, clamped.bm);
  // Keys read per query tile t: all of them (bidirectional), or the cache plus this stage's
  // keys up to the tile's last query (causal): Σ_t min((t+1)·bm, N_q) = bm·T(T−1)/2 + N_q.
  double keys_read = tiles * static_cast<double>(kv_tokens);
  if (shape.causal) {
    keys_read = tiles * static_cast<double>(shape.cached_tokens) +
                static_cast<double>(clamped.bm) * tiles * (tiles - 1.0) / 2.0 +
                static_cast<double>(shape.query_tokens);
  }
  return traffic.x_resident ? 1.0 : keys_read / static_cast<double>(kv_tokens);
}

// Q and O once, K and V once per query tile (flash_traffic's formula) for a clamped tile.
Bytes flash_bytes(const FlashShape& shape, const TiledTraffic& traffic) {
  return shape.query_output_bytes + shape.key_value_bytes * flash_rereads(shape, traffic);
}

}  // namespace

TiledTraffic flash_traffic(const FlashShape& shape, Tile tile) {
  TiledTraffic traffic;
  const std::int64_t kv_tokens = shape.kv_tokens();
  traffic.tile = {std::min(tile.bm, shape.query_tokens), std::min(tile.bn, kv_tokens),
                  shape.head_dim};
  const Tile& clamped = traffic.tile;
  traffic.x_resident = clamped.bn == kv_tokens;
  traffic.bytes = flash_bytes(shape, traffic);
  const auto rows = static_cast<double>(clamped.bm * shape.group);
  const auto bn = static_cast<double>(clamped.bn);
  const auto head_dim = static_cast<double>(shape.head_dim);
  const double kv_buffers = traffic.x_resident ? 1.0 : 2.0;
  constexpr double kFp32 = 4.0;
  traffic.accumulators = Bytes(rows * bn * kFp32 + rows * head_dim * kFp32);
  traffic.footprint = Bytes(rows * head_dim * shape.q_element_bytes +
                            kv_buffers * 2.0 * bn * head_dim * shape.kv_element_bytes) +
                      traffic.accumulators;
  return traffic;
}

namespace {

// The largest K/V tile bn below the whole head whose footprint (flash_traffic's, affine in bn,
// double-buffered K and V) fits the budget with query tile bm: an estimate for
// largest_fitting_edge, which checks it.
double flash_bn_limit(const FlashShape& shape, const TileBudget& budget, std::int64_t bm) {
  constexpr double kFp32 = 4.0;
  const auto rows = static_cast<double>(std::min(bm, shape.query_tokens) * shape.group);
  const auto head_dim = static_cast<double>(shape.head_dim);
  const double query = rows * head_dim * shape.q_element_bytes;
  const double key_value_per_bn = 2.0 * 2.0 * head_dim * shape.kv_element_bytes;
  const double output = rows * head_dim * kFp32;
  const double scores_per_bn = rows * kFp32;
  if (!budget.accumulator_capacity) {
    return (budget.capacity.si() - query - output) / (key_value_per_bn + scores_per_bn);
  }
  return std::min((budget.capacity.si() - query) / key_value_per_bn,
                  (budget.accumulator_capacity->si() - output) / scores_per_bn);
}

}  // namespace

std::optional<TiledTraffic> best_flash_tile(const FlashShape& shape, const TileBudget& budget,
                                            TileCache* cache) {
  const std::int64_t kv_tokens = shape.kv_tokens();
  const auto traffic_of = [&](std::int64_t bm, std::int64_t bn) {
    return flash_traffic(shape, {bm, bn, shape.head_dim});
  };
  const auto fits = [&](std::int64_t bm, std::int64_t bn) {
    return budget.fits(traffic_of(bm, bn));
  };
  // Per query tile bm: a K/V tile below the whole head (the same re-reads whatever its size, a
  // footprint growing with it: the largest that fits), and the whole head's K and V (resident,
  // single-buffered, read once).
  const auto row_at = [&](std::int64_t bm) {
    TileRow row;
    if (const auto widest =
            largest_fitting_edge(kv_tokens, false, flash_bn_limit(shape, budget, bm),
                                 [&](std::int64_t bn) { return fits(bm, bn); })) {
      row.add(traffic_of(bm, *widest));
    }
    if (const TiledTraffic resident = traffic_of(bm, kv_tokens); budget.fits(resident)) {
      row.add(resident);
    }
    return row;
  };
  // The rows depend on the tokens, the head and the budget, not on the sequences × KV heads
  // (which scale the bytes only). With the ratio of Q+O to K/V bytes the key also fixes the
  // candidates' bytes relative to one another: every search of the key has its certified winner.
  // Without Q+O or K/V bytes (no instances) the ratio says nothing: such a search ranks.
  using Settled = TileCache::Rows::Settled;
  const bool settles = shape.key_value_bytes.si() > 0.0 && shape.query_output_bytes.si() > 0.0;
  const double q_o_per_k_v =
      settles ? shape.query_output_bytes.si() / shape.key_value_bytes.si() : 0.0;
  TileCache::Rows* rows =
      cache == nullptr
          ? nullptr
          : cache->rows({shape.causal ? 3.0 : 2.0, static_cast<double>(shape.query_tokens),
                         static_cast<double>(shape.cached_tokens),
                         static_cast<double>(shape.head_dim), static_cast<double>(shape.group),
                         q_o_per_k_v, shape.q_element_bytes, shape.kv_element_bytes,
                         budget.capacity.si(),
                         budget.accumulator_capacity ? budget.accumulator_capacity->si() : -1.0});
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
  // The search walked the cached rows (every bm below the tokens up to the first empty row) and
  // the row of bm = the tokens. Bytes are Q+O + K/V × re-reads, and the re-reads depend on the
  // key's tokens and the tile only: a candidate re-reading as often reads the same bytes, one
  // re-reading more reads at least as many (rounding is monotonic) and loses if it also loses
  // ties, or if it reads more than kMargin over (the key fixes Q+O : K/V).
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
