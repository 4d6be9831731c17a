// SPDX-License-Identifier: MIT
#include "sim/tiling.hpp"

#include "sim/dtype.hpp"
#include "sim/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

namespace rsim {
namespace {

// K-slice depths a streamed tile may take (tensor-core / MXU friendly); K itself makes the
// slice the whole contraction, which lets an operand stay resident.
constexpr std::array<std::int64_t, 5> kSliceDepths{16, 32, 64, 128, 256};

double ceil_div(std::int64_t numerator, std::int64_t denominator) {
  return static_cast<double>((numerator + denominator - 1) / denominator);
}

// Powers of two below `extent`, then `extent` itself: every distinct clamped tile edge that a
// power-of-two tiling (or a whole-dimension tile) can have.
std::vector<std::int64_t> edge_candidates(std::int64_t extent) {
  std::vector<std::int64_t> edges;
  for (std::int64_t edge = 1; edge < extent; edge *= 2) {
    edges.push_back(edge);
  }
  edges.push_back(extent);
  return edges;
}

std::int64_t axis_product(const Tensor& tensor, const std::vector<const Tensor*>& present,
                          const std::vector<const Tensor*>& absent) {
  std::int64_t product = 1;
  for (const Axis& axis : tensor.axes) {
    const bool in_all = std::all_of(present.begin(), present.end(), [&](const Tensor* other) {
      return other->has_axis(axis.name);
    });
    const bool in_none = std::none_of(absent.begin(), absent.end(), [&](const Tensor* other) {
      return other->has_axis(axis.name);
    });
    if (in_all && in_none) {
      product *= axis.size;
    }
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
bool better(const TiledTraffic& candidate, const std::optional<TiledTraffic>& best) {
  if (!best) {
    return true;
  }
  const auto key = [](const TiledTraffic& traffic) {
    return std::make_tuple(traffic.bytes.si(), -traffic.tile.bm * traffic.tile.bn, -traffic.tile.bm,
                           traffic.footprint.si(), -traffic.tile.bk);
  };
  return key(candidate) < key(*best);
}

}  // namespace

GemmShape gemm_shape(const Op& matmul) {
  RSIM_CHECK(matmul.kind == OpKind::matmul && matmul.inputs.size() >= 2 && !matmul.outputs.empty(),
             "gemm_shape of an op that is not a matmul");
  const Tensor& x = matmul.inputs[0];
  const Tensor& w = matmul.inputs[1];
  const Tensor& out = matmul.outputs.front();
  GemmShape shape;
  shape.batch = static_cast<double>(axis_product(out, {&x, &w}, {}));
  shape.m = axis_product(x, {&out}, {&w});
  shape.n = axis_product(w, {&out}, {&x});
  shape.k = axis_product(x, {&w}, {&out});
  shape.x_element_bytes = bytes_per_element(x.dtype);
  shape.w_element_bytes = bytes_per_element(w.dtype);
  shape.out_element_bytes = bytes_per_element(out.dtype);
  return shape;
}

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

TiledTraffic gemm_traffic(const GemmShape& shape, Tile tile) {
  TiledTraffic traffic;
  traffic.tile = {std::min(tile.bm, shape.m), std::min(tile.bn, shape.n),
                  std::min(tile.bk, shape.k)};
  const Tile& clamped = traffic.tile;
  traffic.x_resident = clamped.bm == shape.m && clamped.bk == shape.k;
  traffic.w_resident = clamped.bn == shape.n && clamped.bk == shape.k;
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  // X is re-streamed for every column block, W for every row block, unless resident.
  const double x_reads = traffic.x_resident ? 1.0 : ceil_div(shape.n, clamped.bn);
  const double w_reads = traffic.w_resident ? 1.0 : ceil_div(shape.m, clamped.bm);
  traffic.bytes = Bytes(shape.batch * (shape.x_element_bytes * m * k * x_reads +
                                       shape.w_element_bytes * k * n * w_reads +
                                       shape.out_element_bytes * m * n));
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

bool TileBudget::fits(const TiledTraffic& traffic) const {
  if (!accumulator_capacity) {
    return traffic.footprint <= capacity;
  }
  return traffic.footprint - traffic.accumulators <= capacity &&
         traffic.accumulators <= *accumulator_capacity;
}

std::optional<TiledTraffic> best_gemm_tile(const GemmShape& shape, const TileBudget& budget) {
  std::vector<std::int64_t> depths;
  for (std::int64_t depth : kSliceDepths) {
    if (depth < shape.k) {
      depths.push_back(depth);
    }
  }
  depths.push_back(shape.k);
  std::optional<TiledTraffic> best;
  for (std::int64_t bm : edge_candidates(shape.m)) {
    for (std::int64_t bn : edge_candidates(shape.n)) {
      // Traffic depends on bk only through residency (bk = K); among streamed depths the
      // deepest that fits is kept (fewer pipeline steps, same bytes).
      std::optional<TiledTraffic> streamed;
      for (std::int64_t bk : depths) {
        const TiledTraffic traffic = gemm_traffic(shape, {bm, bn, bk});
        if (!budget.fits(traffic)) {
          continue;  // a resident K-deep slice is single-buffered: it may fit where 256 did not
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

std::optional<TiledTraffic> best_panel_tile(const GemmShape& shape, Bytes capacity) {
  std::optional<TiledTraffic> best;
  for (std::int64_t bm : edge_candidates(shape.m)) {
    for (std::int64_t bn : edge_candidates(shape.n)) {
      TiledTraffic traffic = gemm_traffic(shape, {bm, bn, shape.k});
      traffic.accumulators = Bytes(0.0);
      traffic.footprint =
          Bytes(static_cast<double>(bm) * static_cast<double>(shape.k) * shape.x_element_bytes +
                static_cast<double>(shape.k) * static_cast<double>(bn) * shape.w_element_bytes);
      traffic.panels = true;
      if (traffic.footprint <= capacity && better(traffic, best)) {
        best = traffic;
      }
    }
  }
  return best;
}

TiledTraffic flash_traffic(const FlashShape& shape, Tile tile) {
  TiledTraffic traffic;
  const std::int64_t kv_tokens = shape.kv_tokens();
  traffic.tile = {std::min(tile.bm, shape.query_tokens), std::min(tile.bn, kv_tokens),
                  shape.head_dim};
  const Tile& clamped = traffic.tile;
  traffic.x_resident = clamped.bn == kv_tokens;
  const double tiles = ceil_div(shape.query_tokens, clamped.bm);
  // Keys read per query tile t: all of them (bidirectional), or the cache plus this stage's
  // keys up to the tile's last query (causal): Σ_t min((t+1)·bm, N_q) = bm·T(T−1)/2 + N_q.
  double keys_read = tiles * static_cast<double>(kv_tokens);
  if (shape.causal) {
    keys_read = tiles * static_cast<double>(shape.cached_tokens) +
                static_cast<double>(clamped.bm) * tiles * (tiles - 1.0) / 2.0 +
                static_cast<double>(shape.query_tokens);
  }
  const double rereads = traffic.x_resident ? 1.0 : keys_read / static_cast<double>(kv_tokens);
  traffic.bytes = shape.query_output_bytes + shape.key_value_bytes * rereads;
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

std::optional<TiledTraffic> best_flash_tile(const FlashShape& shape, const TileBudget& budget) {
  std::optional<TiledTraffic> best;
  for (std::int64_t bm : edge_candidates(shape.query_tokens)) {
    for (std::int64_t bn : edge_candidates(shape.kv_tokens())) {
      const TiledTraffic traffic = flash_traffic(shape, {bm, bn, shape.head_dim});
      if (budget.fits(traffic) && better(traffic, best)) {
        best = traffic;
      }
    }
  }
  return best;
}

}  // namespace rsim
