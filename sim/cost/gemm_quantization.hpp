// SPDX-License-Identifier: MIT
#pragma once
// What share of the compute units a matmul's tiles keep busy: wave and tile quantization, for the
// expected time (never the bounds). Derivation: docs/design/expected.md, "GEMM quantization".

#include "sim/cost/tiling.hpp"
#include "sim/graph/op.hpp"
#include "sim/spec/hardware.hpp"

namespace rsim {

/// How a GEMM library runs a matmul: the tile it picks and what share of its work is useful.
struct GemmFill {
  double useful = 1.0;  ///< q ∈ (0, 1]
  GemmTile tile;        ///< the best tile (after shrinking to the matmul); 0×0 without tiles
  double tiles = 0.0;   ///< batch · ⌈M/m⌉ · ⌈N/n⌉
  double split = 1.0;   ///< K slices (split-K)
  double waves = 0.0;
};

/// gemm_quantization's figure with the tile, tile count, split and waves that give it.
GemmFill gemm_fill(const GemmShape& shape, const GemmQuantization& quantization);

/// The useful share of the tile work a GEMM library issues for `shape`, at the best of its tiles
/// (each side no larger than the matmul's, rounded up to the MMA instruction's):
///   tiles   = batch · ⌈M/m⌉ · ⌈N/n⌉, split s ways along K (s = 2^j while tiles · 2s ≤ units
///             and K/2s ≥ split_k_min) when one wave would leave units idle;
///   waves   = ⌈tiles · s / units⌉;
///   useful  = batch · M · N · K / (waves · units · m · n · ⌈K/s⌉)  ∈ (0, 1].
/// 1 where the hardware names no tiles or the GEMM is empty.
double gemm_quantization(const GemmShape& shape, const GemmQuantization& quantization);

/// The same for a matmul op (1 for any other op).
double op_quantization(const Op& op, const GemmQuantization& quantization);

}  // namespace rsim
