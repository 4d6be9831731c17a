// SPDX-License-Identifier: MIT
#include "sim/cost/tiling.hpp"

#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/tile_candidates.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace rsim {

using tile_candidates::flash_bytes;
using tile_candidates::gemm_bytes;
using tile_candidates::kSliceDepths;

namespace {

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
  const std::array<const Tensor*, 3> tensors{matmul.inputs.data(), &matmul.inputs[1],
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

FlashLayout flash_layout(const Op& attention) {
  RSIM_CHECK(attention.kind == OpKind::attention && attention.inputs.size() >= 3,
             "flash_shape of an op that is not a fused attention");
  FlashLayout layout;
  const std::vector<Axis>& key_axes = attention.inputs[1].axes;
  for (std::size_t axis = 0; axis < key_axes.size(); ++axis) {
    if (key_axes[axis].name == "kv_heads") {
      layout.kv_heads_axis = static_cast<int>(axis);
      break;
    }
  }
  // K and V (and their caches) are re-read per query tile; an input laid out like Q (the
  // backward's O and dO) is read once per query tile like Q itself. Counting O and dO as K/V
  // re-reads made the backward's bytes grow with the query heads per KV head (issue 21, #2).
  const auto same_axes = [](const Tensor& a, const Tensor& b) {
    return std::equal(a.axes.begin(), a.axes.end(), b.axes.begin(), b.axes.end(),
                      [](const Axis& x, const Axis& y) { return x.name == y.name; });
  };
  for (const Tensor& input : attention.inputs) {
    layout.query_like.push_back(same_axes(input, attention.inputs[0]));
  }
  return layout;
}

FlashShape flash_shape(const Op& attention, const FlashLayout& layout) {
  RSIM_CHECK(attention.kind == OpKind::attention && attention.inputs.size() >= 3 &&
                 layout.query_like.size() == attention.inputs.size(),
             "flash_shape of an op that is not a fused attention, or with another's layout");
  const AttentionShape& attn = attention.attention;
  const std::int64_t kv_heads =
      layout.kv_heads_axis < 0
          ? attn.heads
          : attention.inputs[1].axes[static_cast<std::size_t>(layout.kv_heads_axis)].size;
  FlashShape shape;
  shape.instances = static_cast<double>(attn.batch * kv_heads);
  shape.group = std::max<std::int64_t>(1, attn.heads / std::max<std::int64_t>(1, kv_heads));
  shape.query_tokens = attn.query_tokens;
  shape.cached_tokens = attn.cached_tokens;
  shape.head_dim = attn.head_dim;
  shape.causal = attn.mask == AttentionMask::causal;
  shape.window = shape.causal ? attn.window : 0;
  shape.query_output_bytes = attention.inputs[0].bytes();
  for (const Tensor& output : attention.outputs) {
    shape.query_output_bytes += output.bytes();
  }
  for (std::size_t index = 1; index < attention.inputs.size(); ++index) {
    (layout.query_like[index] ? shape.query_output_bytes : shape.key_value_bytes) +=
        attention.inputs[index].bytes();
  }
  shape.q_element_bytes = bytes_per_element(attention.inputs[0].dtype);
  shape.kv_element_bytes = bytes_per_element(attention.inputs.back().dtype);
  return shape;
}

FlashShape flash_shape(const Op& attention) {
  return flash_shape(attention, flash_layout(attention));
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

// Every row below keeps, for its bm, only the largest bn that fits within a family of candidates
// whose footprint grows with bn while their traffic does not: the same argmin as trying every
// (bm, bn) pair. Proof: docs/design/tiling.md#one-bn-per-row-edge

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
      extent > 1 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(extent - 1))) : 0;
  const int edges = powers + (include_extent ? 1 : 0);
  const auto edge_at = [&](int index) {
    return index < powers ? std::int64_t{1} << index : extent;
  };
  int guess = 0;
  if (include_extent && limit >= static_cast<double>(extent)) {
    guess = edges - 1;
  } else if (limit >= 1.0) {
    guess = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(std::min(limit, 1e18)))) - 1;
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

namespace tile_candidates {

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
             static_cast<double>(streamed.depths[static_cast<std::size_t>(depth_guess) + 1]) <=
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

TileRow flash_row(const FlashShape& shape, const TileBudget& budget, std::int64_t bm) {
  const std::int64_t kv_tokens = shape.kv_tokens();
  const auto traffic_of = [&](std::int64_t bn) {
    return flash_traffic(shape, {bm, bn, shape.head_dim});
  };
  TileRow row;
  if (const auto widest =
          largest_fitting_edge(kv_tokens, false, flash_bn_limit(shape, budget, bm),
                               [&](std::int64_t bn) { return budget.fits(traffic_of(bn)); })) {
    row.add(traffic_of(*widest));
  }
  if (const TiledTraffic resident = traffic_of(kv_tokens); budget.fits(resident)) {
    row.add(resident);
  }
  return row;
}

}  // namespace tile_candidates

void TileRow::add(const TiledTraffic& candidate) {
  candidates[static_cast<std::size_t>(count++)] = candidate;
}

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

}  // namespace rsim
