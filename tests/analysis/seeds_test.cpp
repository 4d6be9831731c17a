// SPDX-License-Identifier: MIT
// The worked figures rsim was first built to reproduce, each derived from its formula: the
// π0.5-on-Thor GEMM example (Thor peaks from the NVIDIA Jetson T5000 module data sheet DS-11945)
// and the roofline chapter of How to Scale Your Model (Austin et al., Google DeepMind 2025,
// jax-ml.github.io/scaling-book/roofline). Where a printed value is a slip, the test says so and
// checks the formula's value.
#include "run_fixture.hpp"
#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"

#include <catch2/catch.hpp>

using rsim::CriticalBatch;
using rsim::DType;

namespace {

rsim::MatmulResult matmul(const std::string& hardware, rsim::MatmulShape shape,
                          const rsim::RoofOverrides& overrides = {}) {
  return rsim::analyze_matmul(shape, rsim::test::preset_roofs(hardware, overrides));
}

const rsim::RoofOverrides kSeedV5eBandwidth{{}, {{"hbm", rsim::BytesPerSecond(8.1e11)}}};

}  // namespace

TEST_CASE("π0.5 on Thor: the GEMM worked example M=968 N=16384 K=2048 in FP8", "[thor]") {
  const auto result =
      matmul("thor_t5000", {968, 2048, 16384, DType::fp8, DType::fp8, DType::fp8, "fp8"});
  // FLOPs = 2MNK = 2 · 968 · 16384 · 2048 = 64,961,380,352 ≈ 6.5e10. The π0.5-on-Thor write-up
  // rsim started from prints 6.5e11: a slip of one power of ten.
  CHECK(result.cost.flops.si() == Approx(64'961'380'352.0));
  // Bytes = (MK + KN + MN) · 1 = 1,982,464 + 33,554,432 + 15,859,712 = 51,396,608 ≈ 5.1e7. The
  // write-up prints 3.6e7 (the MN term looks dropped: 1.98e6 + 3.36e7 = 3.55e7).
  CHECK(result.cost.bytes.si() == Approx(51'396'608.0));
  // AI = 64,961,380,352 / 51,396,608 = 1263.9 FLOP/B, left of the 1893.8 ridge, so the write-up's
  // conclusion (memory-bound at batch 1) holds; its "≈ 18000" follows from the two slips.
  CHECK(result.cost.intensity == Approx(1263.92).epsilon(1e-5));
  CHECK(result.cost.bound == rsim::Bound::memory);
}

TEST_CASE("scaling book: a bf16 dot product has intensity → 0.5", "[scaling_book]") {
  // x·y with N = 1e6: FLOPs 2N; bytes 2N + 2N + 2 (two bf16 vectors in, one scalar out).
  const auto result =
      matmul("tpu_v5e", {1, 1'000'000, 1, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  CHECK(result.cost.intensity == Approx(2e6 / (4e6 + 2)));
  CHECK(result.cost.intensity == Approx(0.5).epsilon(1e-6));
}

TEST_CASE("scaling book: bf16 matmul intensity 2BDF / (2BD + 2DF + 2BF) ≈ B for B ≪ D and F",
          "[scaling_book]") {
  // B = 128, D = F = 16384: BDF / (BD + DF + BF) = 128 · 16384 / (128 + 16384 + 128) = 126.03
  const auto result =
      matmul("tpu_v5e", {128, 16384, 16384, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  CHECK(result.cost.intensity == Approx(128.0 * 16384 / (128 + 16384 + 128)));
  CHECK(result.cost.intensity == Approx(128).epsilon(0.02));
}

TEST_CASE("scaling book: bf16 on v5e is compute-bound past ≈ 240 tokens", "[scaling_book]") {
  // Critical batch B = I·DF / (DF − I(D + F)) with I = 1.97e14 / 8.2e11 = 240.24; for
  // D = F = 2^20, B = 240.24 / (1 − 2 · 240.24 / 2^20) = 240.35 ≈ 240.
  const double ridge = 1.97e14 / 8.2e11;
  const double d = 1 << 20;
  const auto result =
      matmul("tpu_v5e", {1, 1 << 20, 1 << 20, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  REQUIRE(result.critical);
  CHECK(result.critical->tokens == Approx(ridge / (1 - 2 * ridge / d)));
  CHECK(result.critical->tokens == Approx(240).margin(0.5));
  // 512 sequences × 4096 tokens over 128 chips: 2,097,152 / 128 = 16,384 local tokens, far past
  // the critical batch, so a D = F = 8192 matmul at that token batch is compute-bound.
  const auto local = matmul(
      "tpu_v5e", {512 * 4096 / 128, 8192, 8192, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  CHECK(local.cost.bound == rsim::Bound::compute);
}

TEST_CASE("scaling book: int8 weights and activations with ridge 486 and critical batch 243",
          "[scaling_book]") {
  // I_crit = 3.94e14 / 8.1e11 = 486.42 (the book's v5e HBM figure before 2026-05-09; 8.2e11 now).
  // Bytes BD + DF + BF, FLOPs 2BDF ⇒ B = I·DF / (2DF − I(D + F)); D = F = 2^20 gives
  // 486.42 · 2^20 / (2 · 2^20 − 2 · 486.42) = 243.32 ≈ 243 (roofline Q1 then: "B > 243").
  const double ridge = 3.94e14 / 8.1e11;
  const double d = 1 << 20;
  const auto result =
      matmul("tpu_v5e", {1, 1 << 20, 1 << 20, DType::int8, DType::int8, DType::int8, "int8"},
             kSeedV5eBandwidth);
  CHECK(result.cost.critical_intensity == Approx(ridge));
  REQUIRE(result.critical);
  CHECK(result.critical->tokens == Approx(ridge * d * d / (2 * d * d - ridge * 2 * d)));
  CHECK(result.critical->tokens == Approx(243).margin(0.5));
}

TEST_CASE("scaling book: int8 weights with bf16 activations halve the critical batch",
          "[scaling_book]") {
  // Bytes 2BD + DF + 2BF, FLOPs 2BDF on the bf16 path (I = 240.24):
  // B = I·DF / (2DF − 2I(D + F)); D = F = 8192: 240.24 · 8192 / (2 · 8192 − 4 · 240.24) = 127.6.
  const double ridge = 1.97e14 / 8.2e11;
  const double d = 8192;
  const auto result =
      matmul("tpu_v5e", {1, 8192, 8192, DType::bf16, DType::int8, DType::bf16, "bf16"});
  // int8-weight bytes at B = 1: 2·8192 + 8192² + 2·8192 = 67,141,632
  CHECK(result.cost.bytes.si() == Approx(2 * d + d * d + 2 * d));
  REQUIRE(result.critical);
  CHECK(result.critical->tokens == Approx(ridge * d * d / (2 * d * d - 2 * ridge * 2 * d)));
  CHECK(result.critical->tokens == Approx(127.6).epsilon(1e-3));
}

TEST_CASE("scaling book: per-batch weights keep the intensity constant and never compute-bound",
          "[scaling_book]") {
  // int8[B,D] · int8[B,D,F]: bytes BD + BDF + BF, FLOPs 2BDF ⇒ intensity 2DF / (D + DF + F)
  // = 33,554,432 / 16,785,408 = 1.999 for D = F = 4096, whatever B is.
  const double expected = 2.0 * 4096 * 4096 / (4096 + 4096.0 * 4096 + 4096);
  for (std::int64_t batch : {1, 64, 4096}) {
    const auto result =
        matmul("tpu_v5e", {batch, 4096, 4096, DType::int8, DType::int8, DType::int8, "int8", true},
               kSeedV5eBandwidth);
    CHECK(result.cost.intensity == Approx(expected));
    REQUIRE(result.critical);
    CHECK(result.critical->kind == CriticalBatch::Kind::never);
  }
}

TEST_CASE("scaling book: H100 critical batch ≈ 298 with the old 1e15 and 295 with the datasheet",
          "[scaling_book]") {
  const rsim::RoofOverrides seed_peak{{{"bf16", rsim::FlopsPerSecond(1e15)}}, {}};
  const double d = 1 << 20;
  // 1e15 / 3.35e12 = 298.51 (roofline Q5 before 2026-05-09); B = I / (1 − 2I/D) = 298.68 for
  // D = F = 2^20
  const auto seed = matmul(
      "h100_sxm", {1, 1 << 20, 1 << 20, DType::bf16, DType::bf16, DType::bf16, "bf16"}, seed_peak);
  CHECK(seed.cost.critical_intensity == Approx(1e15 / 3.35e12));
  CHECK(seed.critical->tokens == Approx((1e15 / 3.35e12) / (1 - 2 * (1e15 / 3.35e12) / d)));
  // datasheet 989.4e12 / 3.35e12 = 295.34 (scaling book, current: 295)
  const auto sheet =
      matmul("h100_sxm", {1, 1 << 20, 1 << 20, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  CHECK(sheet.critical->tokens == Approx(295.5).margin(0.5));
}
