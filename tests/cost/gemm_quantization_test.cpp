// SPDX-License-Identifier: MIT
// Wave and tile quantization of a GEMM over the SMs (sim/cost/gemm_quantization.hpp), with the
// H100 preset's tiles (128×256, 256×128, 128×128), wgmma's 64 × 8 and split_k_min 1024 on 132
// SMs. Every figure by hand: q = useful / (waves · 132 · m · n · ⌈K/s⌉).
#include "sim/cost/gemm_quantization.hpp"

#include "run_fixture.hpp"
#include "sim/cost/expected.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/graph/transformer.hpp"
#include "sim/spec/hardware.hpp"

#include <catch2/catch.hpp>

namespace {

rsim::GemmShape gemm_of(std::int64_t m, std::int64_t n, std::int64_t k, double batch = 1.0) {
  rsim::GemmShape shape;
  shape.batch = batch;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  return shape;
}

}  // namespace

TEST_CASE("GEMM quantization of the H100 preset, by hand", "[expected][gemm]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm").gemm_quantization;
  REQUIRE(h100.units == 132);
  // 4096³: 128×256 tiles, 32·16 = 512 tiles in ⌈512/132⌉ = 4 waves: 512 / 528.
  CHECK(rsim::gemm_quantization(gemm_of(4096, 4096, 4096), h100) == Approx(512.0 / 528.0));
  // 1024³: 128×128, 8·8 = 64 tiles in one wave (split-K would leave K/2 = 512 < 1024): 64/132.
  CHECK(rsim::gemm_quantization(gemm_of(1024, 1024, 1024), h100) == Approx(64.0 / 132.0));
  // 256³: two 128×128 tiles each way, 4 tiles: 4/132.
  CHECK(rsim::gemm_quantization(gemm_of(256, 256, 256), h100) == Approx(4.0 / 132.0));
  // M = 64, N = 7168, K = 16384: 128×128 shrinks to 64×128: 56 tiles, split 2 ways (112 ≤ 132,
  // K/2 = 8192): 64·7168·16384 / (132 · 64·128 · 8192) = 0.4242.
  CHECK(rsim::gemm_quantization(gemm_of(64, 7168, 16384), h100) ==
        Approx(64.0 * 7168.0 * 16384.0 / (132.0 * 64.0 * 128.0 * 8192.0)));
  // A decode row (M = 1) runs a 64-row tile, not 128: 4096 / 128 = 32 tiles of 64×128, split 4
  // ways (128 ≤ 132, K/4 = 1024): 4096·4096 / (132 · 64·128 · 1024) = 0.01515.
  CHECK(rsim::gemm_quantization(gemm_of(1, 4096, 4096), h100) ==
        Approx(4096.0 * 4096.0 / (132.0 * 64.0 * 128.0 * 1024.0)));
  // An empty GEMM, and hardware without tiles: 1.
  CHECK(rsim::gemm_quantization(gemm_of(0, 4096, 4096), h100) == 1.0);
  CHECK(rsim::gemm_quantization(gemm_of(1, 1, 1), rsim::GemmQuantization{}) == 1.0);
}

TEST_CASE("GEMM quantization steps at multiples of the SM count", "[expected][gemm]") {
  // One tile shape (128×128, no split-K) on 132 SMs: M = 128, N = 128·t gives t tiles.
  rsim::GemmQuantization one_tile;
  one_tile.tiles = {{128, 128}};
  one_tile.mma = {64, 8};
  one_tile.units = 132;
  const auto q = [&](std::int64_t tiles) {
    return rsim::gemm_quantization(gemm_of(128, 128 * tiles, 4096), one_tile);
  };
  CHECK(q(132) == Approx(1.0));            // one full wave
  CHECK(q(133) == Approx(133.0 / 264.0));  // a second wave of one tile
  CHECK(q(264) == Approx(1.0));            // two full waves
  CHECK(q(265) == Approx(265.0 / 396.0));  // a third
  // A GEMM batch multiplies the tiles: 2 × 66 tiles fill one wave.
  CHECK(rsim::gemm_quantization(gemm_of(128, 128 * 66, 4096, 2.0), one_tile) == Approx(1.0));
  // Tile quantization: N = 129 pads to two tiles of 128 (129 / 256 of the pair), in one wave of
  // 2 tiles: q = 128·129 / (132 · 128·128).
  CHECK(rsim::gemm_quantization(gemm_of(128, 129, 4096), one_tile) ==
        Approx(128.0 * 129.0 / (132.0 * 128.0 * 128.0)));
}

TEST_CASE("the expected time of a matmul divides T_math by the quantization", "[expected][gemm]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  // 1024³ bf16 (OpenXLA sm_90 table: 9.088 µs measured): T_math = 2·1024³ / 989.4e12 = 2.170 µs,
  // at 0.80 × 64/132 of the peak 5.596 µs, + 4.2 µs launch = 9.796 µs (9.8 of 9.09 µs).
  auto op = rsim::make_matmul(
      {1024, 1024, 1024, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16", false});
  const rsim::OpCost cost = rsim::cost_op(op, h100);
  const double t_math = 2.0 * 1024.0 * 1024.0 * 1024.0 / 989.4e12;
  CHECK(rsim::expected_device_time(op, cost, h100) ==
        Approx(t_math / (0.80 * 64.0 / 132.0) + 4.2e-6));
}
