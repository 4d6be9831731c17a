// SPDX-License-Identifier: MIT
#include "sim/analysis/thresholds.hpp"

#include "run_fixture.hpp"

#include <catch2/catch.hpp>

using rsim::CriticalBatch;
using rsim::DType;

namespace {

std::optional<CriticalBatch> critical(const rsim::Roofs& roofs, rsim::MatmulShape shape) {
  return rsim::critical_token_batch(rsim::make_matmul(shape), roofs);
}

}  // namespace

TEST_CASE("critical batch is the exact root, not the B ≈ I approximation", "[thresholds]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  const double ridge = 1.97e14 / 8.2e11;  // 240.24
  // bf16 X[B,D]·W[D,F]: 2BDF = I(2BD + 2DF + 2BF) ⇒ B = I·DF / (DF − I(D + F)).
  // D = F = 8192: 240.24 · 8192 / (8192 − 480.49) = 255.21
  const double d = 8192;
  const auto result = critical(v5e, {1, 8192, 8192, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  REQUIRE(result);
  CHECK(result->kind == CriticalBatch::Kind::at);
  CHECK(result->tokens == Approx(ridge * d * d / (d * d - ridge * 2 * d)));
  CHECK(result->tokens == Approx(255.21).epsilon(1e-4));
  // The same answer whatever B the op was built with (costs are affine in B).
  const auto at_4096 =
      critical(v5e, {4096, 8192, 8192, DType::bf16, DType::bf16, DType::bf16, "bf16"});
  CHECK(at_4096->tokens == Approx(result->tokens));
}

TEST_CASE("a matmul whose intensity cannot reach the ridge never becomes compute-bound",
          "[thresholds]") {
  const auto thor = rsim::test::preset_roofs("thor_t5000");
  // fp8 D = F = 1024: the intensity tends to 2DF / (D + F) = 1024 < ridge 1893.8 as B grows.
  const auto result = critical(thor, {1, 1024, 1024, DType::fp8, DType::fp8, DType::fp8, "fp8"});
  REQUIRE(result);
  CHECK(result->kind == CriticalBatch::Kind::never);
}

TEST_CASE("critical batch is for matmuls only", "[thresholds]") {
  const auto thor = rsim::test::preset_roofs("thor_t5000");
  rsim::Op op;
  op.kind = rsim::OpKind::elementwise;
  op.compute_path = "fp32";
  CHECK_FALSE(rsim::critical_token_batch(op, thor));
}

TEST_CASE("π0.5 prefix gate_up matmul meets the Thor FP8 ridge at 1861 tokens",
          "[thresholds][pi05]") {
  const auto result = rsim::test::run_scenario("pi05_thor");
  bool found = false;
  for (std::size_t row = 0; row < result.table.order.size(); ++row) {
    const rsim::Op& op = result.graph.op(result.table.order[row]);
    if (op.qualified_name() == "prefix/layer/gate_up_proj") {
      found = true;
      // fp8 everywhere, D = 2048, F = 2 · 16384 = 32768, I = 517e12 / 273e9 = 1893.77:
      // B = I·DF / (2DF − I(D + F)) = 1893.77 · 67,108,864 / (134,217,728 − 1893.77 · 34,816)
      //   = 1861.2 tokens — above the 968 the prefix has, so it stays memory-bound.
      const double ridge = 517e12 / 273e9;
      const double d = 2048;
      const double f = 32768;
      REQUIRE(result.critical[row]);
      CHECK(result.critical[row]->tokens == Approx(ridge * d * f / (2 * d * f - ridge * (d + f))));
      CHECK(result.table.costs[row].bound == rsim::Bound::memory);
    }
  }
  CHECK(found);
}
