// SPDX-License-Identifier: MIT
#include "sim/cost/gemm_quantization.hpp"

#include <algorithm>
#include <cmath>

namespace rsim {

GemmFill gemm_fill(const GemmShape& shape, const GemmQuantization& quantization) {
  const double useful = shape.batch * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                        static_cast<double>(shape.k);
  GemmFill best;
  if (quantization.tiles.empty() || !(useful > 0.0)) {
    return best;
  }
  best.useful = 0.0;
  const auto units = static_cast<double>(quantization.units);
  const auto k = static_cast<double>(shape.k);
  // A side of a tile larger than its matmul's shrinks to the matmul's, rounded up to the MMA
  // instruction's (a small-M kernel: M = 1 runs 64-row wgmma tiles on Hopper, not 128).
  const auto side = [](std::int64_t tile, std::int64_t size, std::int64_t instruction) {
    const std::int64_t rounded = (size + instruction - 1) / instruction * instruction;
    return std::min(tile, std::max(rounded, instruction));
  };
  for (const GemmTile& full : quantization.tiles) {
    const GemmTile tile{side(full.m, shape.m, quantization.mma.m),
                        side(full.n, shape.n, quantization.mma.n)};
    const double tiles = shape.batch *
                         std::ceil(static_cast<double>(shape.m) / static_cast<double>(tile.m)) *
                         std::ceil(static_cast<double>(shape.n) / static_cast<double>(tile.n));
    double split = 1.0;
    // Split-K only fills units one wave would leave idle, and only while each slice of K stays
    // long enough to amortize the partial sums' reduction.
    while (quantization.split_k_min > 0 && tiles * split * 2.0 <= units &&
           k / (split * 2.0) >= static_cast<double>(quantization.split_k_min)) {
      split *= 2.0;
    }
    const double waves = std::ceil(tiles * split / units);
    const double issued = waves * units * static_cast<double>(tile.m) *
                          static_cast<double>(tile.n) * std::ceil(k / split);
    const double share = std::min(useful / issued, 1.0);
    if (share > best.useful) {
      best = {share, tile, tiles, split, waves};
    }
  }
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
