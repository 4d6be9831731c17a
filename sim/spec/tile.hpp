// SPDX-License-Identifier: MIT
#pragma once

#include "sim/spec/hardware.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

/// A tile of an output-stationary loop nest over C[M,N] += X[M,K]·W[K,N] (the scaling book's
/// tiling footnote): an inner tier holds a bm×bk slice of X, a bk×bn slice of W and a bm×bn
/// accumulator. For fused attention bm is the query tile (tokens), bn the key/value tile and bk
/// the head dimension.
struct Tile {
  std::int64_t bm = 0;
  std::int64_t bn = 0;
  std::int64_t bk = 0;
  friend bool operator==(const Tile&, const Tile&) = default;
};

/// "128×256×64".
std::string to_string(const Tile& tile);

/// Parses "128,256,64" (bm,bn,bk; also "128x256x64"). InputError naming `what` otherwise.
Tile parse_tile(std::string_view text, std::string_view what);

/// Tiles the user fixes for matmuls, by the tier whose capacity holds them (scenario `tiles:`,
/// `rsim matmul --tile`); every other tier and op gets the best tile that fits.
struct TileChoices {
  std::vector<std::pair<std::string, Tile>> by_tier;
  std::string origin;  ///< where they were given ("scenario.yaml:12:3"), for errors
  [[nodiscard]] const Tile* find(std::string_view tier) const;
};

/// The tier a kernel's tile lives in (GPU shared memory, TPU VMEM): where a tile given without
/// a tier name goes. Empty if the hardware has neither.
std::string kernel_tile_tier(const std::vector<MemoryTier>& memory);

/// Checks that every tier of `tiles` is an on-chip tier of the hardware (not main memory, which
/// holds no tile). InputError listing the tiers that can hold one otherwise.
void check_tile_tiers(const TileChoices& tiles, const std::vector<MemoryTier>& memory,
                      std::string_view hardware);

}  // namespace rsim
