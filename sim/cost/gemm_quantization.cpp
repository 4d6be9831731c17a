// SPDX-License-Identifier: MIT
#include "sim/cost/gemm_quantization.hpp"

#include "sim/cost/tile_candidates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace rsim {

GemmFill gemm_fill(const GemmShape& shape, const GemmQuantization& quantization) {
  const double useful = shape.batch * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                        static_cast<double>(shape.k);
  GemmFill best;
  if (quantization.tiles.empty() || !(useful > 0.0)) {
    return best;
  }
  const auto units = static_cast<double>(quantization.units);
  const auto k = static_cast<double>(shape.k);
  // A side of a tile larger than its matmul's shrinks to the matmul's, rounded up to the MMA
  // instruction's (a small-M kernel: M = 1 runs 64-row wgmma tiles on Hopper, not 128): the
  // rounding is the tile's own, so once per call.
  const auto rounded = [](std::int64_t size, std::int64_t instruction) {
    // A power-of-two instruction side (every MMA's) rounds by a mask, without a division.
    const auto side = static_cast<std::uint64_t>(instruction);
    const std::int64_t up =
        instruction > 0 && (side & (side - 1)) == 0
            ? static_cast<std::int64_t>((static_cast<std::uint64_t>(size) + side - 1) & ~(side - 1))
            : (size + instruction - 1) / instruction * instruction;
    return std::max(up, instruction);
  };
  const std::int64_t m_rounded = rounded(shape.m, quantization.mma.m);
  const std::int64_t n_rounded = rounded(shape.n, quantization.mma.n);
  // Every tile does the same useful work: the best issues the least (the first of equals, as a
  // strictly greater share would pick), and one division gives its share. Split-K slices are
  // powers of 2, so K / s and ⌈K / s⌉ by multiplication are exact.
  double least_issued = 0.0;
  for (const GemmTile& full : quantization.tiles) {
    const GemmTile tile{std::min(full.m, m_rounded), std::min(full.n, n_rounded)};
    const double tiles = shape.batch * tile_candidates::ceil_div(shape.m, tile.m) *
                         tile_candidates::ceil_div(shape.n, tile.n);
    double split = 1.0;
    double inverse_split = 1.0;  // 1 / split, exact
    // Split-K only fills units one wave would leave idle, and only while each slice of K stays
    // long enough to amortize the partial sums' reduction.
    while (quantization.split_k_min > 0 && tiles * split * 2.0 <= units &&
           k * (0.5 * inverse_split) >= static_cast<double>(quantization.split_k_min)) {
      split *= 2.0;
      inverse_split *= 0.5;
    }
    const double waves = std::ceil(tiles * split / units);
    const double issued = waves * units * static_cast<double>(tile.m) *
                          static_cast<double>(tile.n) * std::ceil(k * inverse_split);
    if (least_issued == 0.0 || issued < least_issued) {
      least_issued = issued;
      best = {0.0, tile, tiles, split, waves};
    }
  }
  best.useful = std::min(useful / least_issued, 1.0);
  return best;
}

double gemm_quantization(const GemmShape& shape, const GemmQuantization& quantization) {
  return gemm_fill(shape, quantization).useful;
}

double op_quantization(const Op& op, const GemmQuantization& quantization) {
  if (op.kind != OpKind::matmul || quantization.tiles.empty()) {
    return 1.0;
  }
  return gemm_quantization(gemm_shape(op), quantization);
}

}  // namespace rsim
