// SPDX-License-Identifier: MIT
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/spec/precision.hpp"

#include <catch2/catch.hpp>

using rsim::DType;

namespace {

rsim::Op matmul(std::int64_t batch, std::int64_t contract, std::int64_t out, DType input,
                DType weights, DType output, const std::string& path, bool per_batch = false) {
  return rsim::make_matmul({batch, contract, out, input, weights, output, path, per_batch});
}

rsim::Op attention(rsim::AttentionMask mask, std::int64_t queries, std::int64_t cached) {
  rsim::Op op;
  op.name = "attention";
  op.kind = rsim::OpKind::attention;
  op.compute_path = "bf16";
  op.attention = {mask, 2, queries, cached, 4, 8};
  op.outputs.push_back({"o",
                        {{"batch", 2}, {"seq", queries}, {"heads", 4}, {"head_dim", 8}},
                        DType::bf16,
                        rsim::TensorRole::activation});
  return op;
}

}  // namespace

TEST_CASE("matmul FLOPs and bytes: each operand once, in its own dtype", "[cost]") {
  // bf16 X[256, 4096] · W[4096, 4096]: FLOPs 2·256·4096·4096 = 8,589,934,592;
  // bytes 2·256·4096 + 2·4096·4096 + 2·256·4096 = 37,748,736.
  const auto op = matmul(256, 4096, 4096, DType::bf16, DType::bf16, DType::bf16, "bf16");
  CHECK(rsim::op_flops(op).si() == Approx(8'589'934'592.0));
  CHECK(rsim::op_bytes(op).si() == Approx(37'748'736.0));
  // int8 weights, bf16 activations: 2BD + DF + 2BF = 2,097,152 + 16,777,216 + 2,097,152
  // = 20,971,520
  const auto int8_weights = matmul(256, 4096, 4096, DType::bf16, DType::int8, DType::bf16, "bf16");
  CHECK(rsim::op_bytes(int8_weights).si() == Approx(20'971'520.0));
  // NVFP4 weights count their scales: 4096² · (0.5 + 1/16) = 9,437,184 B plus the bf16
  // activations 4,194,304 B — 12.5 % more weight bytes than bare fp4.
  const auto nvfp4_weights =
      matmul(256, 4096, 4096, DType::bf16, DType::nvfp4, DType::bf16, "bf16");
  CHECK(rsim::op_bytes(nvfp4_weights).si() == Approx(9'437'184.0 + 4'194'304.0));
  // fp4 weights: 0.5 B each → DF/2 = 8,388,608 plus the bf16 activations 4,194,304
  const auto fp4_weights = matmul(256, 4096, 4096, DType::bf16, DType::fp4, DType::bf16, "bf16");
  CHECK(rsim::op_bytes(fp4_weights).si() == Approx(8'388'608.0 + 4'194'304.0));
}

TEST_CASE("op costs: T_math, T_mem, max and sum against the roofs", "[cost]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  const auto op = matmul(256, 4096, 4096, DType::bf16, DType::bf16, DType::bf16, "bf16");
  const auto cost = rsim::cost_op(op, v5e);
  // T_math = 8,589,934,592 / 1.97e14 = 43.60 µs; T_mem = 37,748,736 / 8.2e11 = 46.03 µs
  CHECK(cost.t_math.si() == Approx(8'589'934'592.0 / 1.97e14));
  CHECK(cost.t_mem.si() == Approx(37'748'736.0 / 8.2e11));
  CHECK(cost.t_lower.si() == Approx(37'748'736.0 / 8.2e11));
  // The upper bound adds every tier: VMEM, the innermost tier, serves the ideal bytes to the MXU
  // at 22 × 8.2e11 = 1.804e13 B/s (2.09 µs). HBM's own traffic stays ideal: X (2 MiB), W (32 MiB)
  // and the output (2 MiB) together fit one 128 MiB VMEM tile, so nothing is re-read.
  CHECK(cost.t_upper.si() ==
        Approx(8'589'934'592.0 / 1.97e14 + 37'748'736.0 / 8.2e11 + 37'748'736.0 / 1.804e13));
  CHECK(cost.bytes.si() == Approx(37'748'736.0));
  CHECK(cost.bound == rsim::Bound::memory);
  // intensity = 2BDF / (2BD + 2DF + 2BF) = 256·4096 / (256 + 4096 + 256) = 227.56 < 240.2
  CHECK(cost.intensity == Approx(256.0 * 4096 / 4608));
}

TEST_CASE("attention FLOPs count the visible (query, key) pairs", "[cost]") {
  // 4 · batch 2 · heads 4 · head_dim 8 = 256 FLOPs per pair.
  // Bidirectional, 4 queries × 4 keys = 16 pairs.
  CHECK(rsim::op_flops(attention(rsim::AttentionMask::bidirectional, 4, 0)).si() ==
        Approx(256.0 * 16));
  // Causal, 4 queries: 1 + 2 + 3 + 4 = 10 pairs.
  CHECK(rsim::op_flops(attention(rsim::AttentionMask::causal, 4, 0)).si() == Approx(256.0 * 10));
  // Causal with 3 cached keys: 4 · 3 + 10 = 22 pairs.
  CHECK(rsim::op_flops(attention(rsim::AttentionMask::causal, 4, 3)).si() == Approx(256.0 * 22));
}

TEST_CASE("elementwise ops fused into a matmul move no bytes", "[cost]") {
  rsim::Op op;
  op.kind = rsim::OpKind::elementwise;
  op.flops_per_element = 4.0;
  op.inputs.push_back(
      {"x", {{"seq", 10}, {"embed", 10}}, DType::bf16, rsim::TensorRole::activation});
  op.outputs.push_back(
      {"y", {{"seq", 10}, {"embed", 10}}, DType::bf16, rsim::TensorRole::activation});
  CHECK(rsim::op_bytes(op).si() == Approx(400.0));  // read 100 × 2 B, write 100 × 2 B
  CHECK(rsim::op_flops(op).si() == Approx(400.0));  // 4 FLOPs × 100 elements
  op.fused = true;
  CHECK(rsim::op_bytes(op).si() == 0.0);
  CHECK(rsim::op_flops(op).si() == Approx(400.0));
}

TEST_CASE("an op on a compute path the hardware lacks is an input error", "[cost]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  const auto op = matmul(1, 16, 16, DType::fp8, DType::fp8, DType::fp8, "fp8");
  CHECK_THROWS_AS(rsim::cost_op(op, v5e), rsim::InputError);
  CHECK_THROWS_WITH(rsim::cost_op(op, v5e), Catch::Contains("compute path 'fp8'"));
}

TEST_CASE("bytes and intensity of every precision policy on one matmul", "[cost][precision]") {
  // X[256, 4096] · W[4096, 4096] → [256, 4096]: BD = BF = 1,048,576 and DF = 16,777,216 elements;
  // FLOPs 2 · 256 · 4096² = 8,589,934,592 whatever the policy.
  struct Case {
    std::string policy;
    double bytes;  // s_x·BD + s_w·DF + s_o·BF
  };
  const std::vector<Case> cases{
      {"bf16", 37'748'736.0},          // 2 · (BD + DF + BF)
      {"fp16", 37'748'736.0},          // 2 · (BD + DF + BF)
      {"int8_weights", 20'971'520.0},  // 2BD + DF + 2BF
      {"int8", 18'874'368.0},          // BD + DF + BF
      {"fp8", 18'874'368.0},           // BD + DF + BF
      {"fp4", 10'027'008.0},           // 0.53125 · (BD + DF + BF), MXFP4 scales included
      {"nvfp4", 10'616'832.0},         // 0.5625 · (BD + DF + BF), NVFP4 scales included
      {"int4_weights", 12'845'056.0},  // 2BD + 0.515625 · DF + 2BF
  };
  for (const Case& test : cases) {
    INFO(test.policy);
    const auto precision = *rsim::precision_preset(test.policy);
    const auto op = matmul(256, 4096, 4096, precision.activations, precision.weights,
                           precision.outputs, precision.compute);
    CHECK(rsim::op_bytes(op).si() == Approx(test.bytes));
    CHECK(rsim::op_flops(op).si() / rsim::op_bytes(op).si() ==
          Approx(8'589'934'592.0 / test.bytes));
  }
}
