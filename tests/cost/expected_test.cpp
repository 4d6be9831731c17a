// SPDX-License-Identifier: MIT
// The expected time beside the bounds: the roofs at the fractions real kernels reach, a launch gap
// per kernel, a collective's call latency and its algorithm's steps (hardware/h100_sxm.yaml).
#include "sim/cost/expected.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/graph/transformer.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/hardware.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

namespace {

// One op alone in a graph, costed on `roofs`: its table (row 0).
rsim::CostTable cost_alone(rsim::Op op, const rsim::Roofs& roofs) {
  rsim::OpGraph graph;
  graph.add_op(std::move(op));
  graph.stages = {{"s", 1, 1}};
  return rsim::cost_graph(graph, roofs);
}

rsim::Op all_reduce(double bytes, std::int64_t devices, bool sharp) {
  rsim::Op op;
  op.name = std::string("all_reduce");
  op.stage = std::string("s");
  op.kind = rsim::OpKind::collective;
  op.network = std::string("nvlink");
  op.compute_path = std::string("bf16");
  op.collective.kind = rsim::CollectiveKind::all_reduce;
  op.collective.bytes = rsim::Bytes(bytes);
  op.collective.axes = {devices};
  op.collective.in_network_reduction = sharp;
  return op;
}

// hardware/h100_sxm.yaml with KEY set to VALUE, parsed: the error it gives, or "(no error)".
std::string h100_error_of(const std::string& key, const std::string& value) {
  auto document = rsim::load_config_file(rsim::test::source_path("hardware/h100_sxm.yaml"));
  document.set_path(key, value, {"test", 1, 1});
  try {
    rsim::parse_hardware(document);
  } catch (const rsim::InputError& error) {
    return std::string(error.what());
  }
  return std::string("(no error)");
}

// The decode-shaped bf16 matmul 1×8192 · 8192×8192, its W a weight or (an unfused attention's
// score GEMMs and their gradients) an activation.
rsim::Op gemv_8192(rsim::TensorRole w_role) {
  auto op = rsim::make_matmul(
      {1, 8192, 8192, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16", false});
  op.stage = std::string("s");
  op.inputs[1].role = w_role;
  return op;
}

}  // namespace

TEST_CASE("expected time of a matmul: roofs at their fractions plus a launch", "[expected]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  // 8192³ bf16: T_math = 2·8192³ / 989.4e12 = 1.1113 ms, compute-bound (tiling_test). At 0.80 of
  // the peak (794.5 of 989.4 TFLOP/s, MAMF) with 64·32 = 2048 tiles of 128×256 in ⌈2048/132⌉ = 16
  // waves (q = 2048/2112): 1.4325 ms, + 4.2 µs launch = 1.4367 ms.
  auto op = rsim::make_matmul(
      {8192, 8192, 8192, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16", false});
  op.stage = std::string("s");
  const auto table = cost_alone(op, h100);
  const double t_math = 2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12;
  CHECK(table.expected(0) == Approx(t_math / (0.80 * 2048.0 / 2112.0) + 4.2e-6));
  // A decode-shaped matmul (1×8192·8192×8192) is HBM-bound: bytes 2·(8192 + 8192² + 8192)
  // = 134,250,496 B at 0.89 × 3.35 TB/s = 45.03 µs, + 4.2 µs.
  const auto decode = cost_alone(gemv_8192(rsim::TensorRole::weight), h100);
  CHECK(decode.expected(0) == Approx(134'250'496.0 / (0.89 * 3.35e12) + 4.2e-6));
  CHECK(decode.expected(0) > decode.times.row(0).maxCoeff());
}

TEST_CASE("a GEMM of two activations adds its math and memory time", "[expected]") {
  // The decode-shaped matmul above with an activation for W (an unfused attention's score GEMMs
  // and their gradients): math and memory add. Math: 2·8192² / 989.4e12 = 135.66 ns at 0.80 of
  // the peak and its tile fill: M = 1 runs 64-row tiles, 32 of 64×256 split 4 ways along K
  // (128 ≤ 132 SMs, K/4 = 2048 ≥ 1024): 132 · 64 · 256 · 2048 issued for 8192² useful, 1/66;
  // so 135.66 ns · 66 / 0.80 = 11.19 µs. Memory: 45.03 µs as above. + 4.2 µs.
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  auto gemm = gemv_8192(rsim::TensorRole::activation);
  CHECK(rsim::serial_math_memory(gemm));
  const auto table = cost_alone(gemm, h100);
  const double t_math = 2.0 * 8192.0 * 8192.0 / 989.4e12;
  CHECK(table.expected(0) ==
        Approx(t_math * 66.0 / 0.80 + 134'250'496.0 / (0.89 * 3.35e12) + 4.2e-6));
  // A weight's GEMM overlaps them (the test above).
  gemm.inputs[1].role = rsim::TensorRole::weight;
  CHECK_FALSE(rsim::serial_math_memory(gemm));
}

TEST_CASE("an unfused attention's GEMM streams the main memory at its own fraction", "[expected]") {
  // The activation GEMM above on the A100 80GB, whose preset gives unfused attention's GEMMs
  // 0.575 of the HBM (efficiency.attention.unfused_memory, fitted to FlashAttention-2's PyTorch
  // bars). Math: 2·8192² / 312e12 at 0.83 (bf16) and its tile fill: M = 1 runs 16-row tiles
  // (mma.sync m16n8), 32 of 16×256 split 2 ways along K (64 ≤ 108 SMs, K/2 = 4096 ≥ 1024): 108 ·
  // 16 · 256 · 4096 issued for 8192² useful, 1/27. Memory: 134,250,496 B at 0.575 × 2.039 TB/s
  // = 114.5 µs (a weight's GEMM: at the HBM's 0.84). + the A100's 2.7 µs launch.
  const auto a100 = rsim::test::preset_roofs("a100_sxm_80gb");
  auto gemm = gemv_8192(rsim::TensorRole::activation);
  const double t_math = 2.0 * 8192.0 * 8192.0 / 312e12;
  const double bytes = 134'250'496.0;
  const auto table = cost_alone(gemm, a100);
  CHECK(table.expected(0) == Approx(t_math * 27.0 / 0.83 + bytes / (0.575 * 2.039e12) + 2.7e-6));
  CHECK(rsim::memory_efficiency(gemm, 0, a100) == 0.575);
  // A weight's GEMM, and the H100 (no unfused_memory), keep the tier's own fraction.
  gemm.inputs[1].role = rsim::TensorRole::weight;
  CHECK(rsim::memory_efficiency(gemm, 0, a100) == 0.84);
  gemm.inputs[1].role = rsim::TensorRole::activation;
  CHECK(rsim::memory_efficiency(gemm, 0, rsim::test::preset_roofs("h100_sxm")) == 0.89);
  // analyze()'s per-op expected (device_expected) agrees with the table's.
  CHECK(rsim::expected_device_time(gemm, rsim::cost_op(gemm, a100, {}), a100) ==
        Approx(table.expected(0)).epsilon(1e-12));
}

TEST_CASE("expected time of a collective: α + steps × hop latency + bytes / bus bandwidth",
          "[expected][collectives]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  // A 1 kB ring all-reduce over 8 GPUs: NCCL's base 6.6 µs + 2·(8 − 1) = 14 steps × 0.6 µs =
  // 15.0 µs (NCCL tuning.cc predicts 15.0 µs for ring LL on 8 GPUs); bandwidth 2·7/8·1e3 / (0.82
  // × 450e9) = 4.7 ns.
  const auto small = cost_alone(all_reduce(1e3, 8, false), h100);
  CHECK(small.expected(0) == Approx(6.6e-6 + 14 * 0.6e-6 + 2.0 * 7 / 8 * 1e3 / (0.82 * 450e9)));
  // The lower bound (a tree's 6 steps × 0.6 µs = 3.6 µs) stays below it.
  CHECK(small.times(0, rsim::CostTable::kNetworkColumn) == Approx(3.6e-6));
  // 1 GB with SHARP: V / (0.82 · 450e9) = 2.710 ms + 6.6 µs + 2 steps × 0.6 µs.
  const auto large = cost_alone(all_reduce(1e9, 8, true), h100);
  CHECK(large.expected(0) == Approx(1e9 / (0.82 * 450e9) + 6.6e-6 + 2 * 0.6e-6));
}

TEST_CASE("expected time is never below the lower bound in any shipped scenario", "[expected]") {
  for (const auto& entry :
       std::filesystem::directory_iterator(rsim::test::source_path("scenarios"))) {
    INFO(entry.path());
    const auto run = rsim::test::run_scenario(entry.path().stem().string());
    CHECK(run.bounds.total.t_expected >= run.bounds.total.t_lower);
    for (Eigen::Index row = 0; row < run.table.expected.size(); ++row) {
      CHECK(run.table.expected(row) >= run.table.times.row(row).maxCoeff());
    }
  }
}

TEST_CASE("efficiency figures are checked: fraction, names, source", "[expected][hardware]") {
  CHECK_THAT(h100_error_of("efficiency.compute.bf16.fraction", "1.5"),
             Catch::Contains("a fraction of the roof in (0, 1], got 1.5"));
  CHECK_THAT(h100_error_of("efficiency.memory.hbm.fraction", "0"), Catch::Contains("(0, 1]"));
  CHECK_THAT(h100_error_of("efficiency.compute.fp4.fraction", "0.5"),
             Catch::Contains("the hardware has no compute path 'fp4'"));
  CHECK_THAT(h100_error_of("efficiency.network.ici.fraction", "0.5"),
             Catch::Contains("no network tier 'ici' (it has: nvlink, ib)"));
  CHECK_THAT(h100_error_of("efficiency.kernel_overhead.time", "fast"), Catch::Contains("time"));
  CHECK_THAT(h100_error_of("efficiency.network.nvlink.processor_usage", "1.5"),
             Catch::Contains("a share of the device's compute in [0, 1), got 1.5"));
  CHECK_THAT(h100_error_of("efficiency.attention.unfused_memory.fraction", "1.2"),
             Catch::Contains("a fraction of the roof in (0, 1], got 1.2"));
}

TEST_CASE("fused attention reaches its own fraction of the peak, per pass", "[expected]") {
  // hardware/h100_sxm.yaml: FlashAttention-3 forward 0.639, backward 0.577 of the bf16 peak at
  // unbounded length, and a length overhead of 300 keys; a matmul's bf16 fraction is 0.80. Llama 3
  // 8B training at 4,096 tokens per sequence, causal: a query sees (4096 + 1) / 2 = 2048.5 keys
  // on average, a length share of 2048.5 / (2048.5 + 300) = 0.87226. Each attention pass is
  // compute-bound, so its expected time is T_math / (fraction × 0.87226) + the 4.2 µs launch.
  const auto run = rsim::test::run_scenario("llama3_8b_train_h100");
  int seen = 0;
  for (Eigen::Index row = 0; row < run.table.expected.size(); ++row) {
    const auto& op = run.graph.op(run.table.order[static_cast<std::size_t>(row)]);
    if (op.kind != rsim::OpKind::attention) {
      continue;
    }
    INFO(op.qualified_name());
    const double t_math = run.table.times(row, rsim::CostTable::kMathColumn);
    REQUIRE(t_math == run.table.times.row(row).maxCoeff());
    const double fraction = op.pass == rsim::Pass::backward ? 0.577 : 0.639;
    const double share = 2048.5 / (2048.5 + 300.0);
    CHECK(run.table.expected(row) == Approx(t_math / (fraction * share) + 4.2e-6));
    ++seen;
  }
  CHECK(seen >= 2);  // forward (and its recomputation) and backward
}

TEST_CASE("an attention pass's length share at its edges", "[expected]") {
  // L / (L + 300) with L the keys a query sees on average (hardware/h100_sxm.yaml's 300).
  const rsim::Roofs roofs = rsim::test::preset_roofs("h100_sxm");
  rsim::Op attention;
  attention.kind = rsim::OpKind::attention;
  attention.attention.mask = rsim::AttentionMask::bidirectional;
  attention.attention.query_tokens = 16384;
  // 16,384 keys each: 16384 / 16684 = 0.98202, the share the preset's fractions were divided by.
  CHECK(rsim::attention_length_share(attention, roofs) == Approx(16384.0 / 16684.0));
  // Causal over 512 tokens: (512 + 1) / 2 = 256.5 keys on average: 256.5 / 556.5 = 0.46092.
  attention.attention.mask = rsim::AttentionMask::causal;
  attention.attention.query_tokens = 512;
  CHECK(rsim::attention_length_share(attention, roofs) == Approx(256.5 / 556.5));
  // One decode query over 4,096 cached tokens sees 4,097 keys: 4097 / 4397 = 0.93177.
  attention.attention.query_tokens = 1;
  attention.attention.cached_tokens = 4096;
  CHECK(rsim::attention_length_share(attention, roofs) == Approx(4097.0 / 4397.0));
  // No overhead on the hardware, or not an attention op: 1.
  rsim::Roofs none = roofs;
  none.attention_efficiency.length_overhead = 0.0;
  CHECK(rsim::attention_length_share(attention, none) == 1.0);
  rsim::Op matmul;
  matmul.kind = rsim::OpKind::matmul;
  CHECK(rsim::attention_length_share(matmul, roofs) == 1.0);
  // A bad figure is a clear error naming the key.
  CHECK_THAT(h100_error_of("efficiency.attention.length_overhead.tokens", "-5"),
             Catch::Contains("tokens: the keys' worth of a query tile's fixed work"));
}

TEST_CASE("an attention pass's head-dim share at its edges", "[expected]") {
  // [d / (d + 51.2)] / [128 / (128 + 51.2)] (hardware/h100_sxm.yaml's 51.2, from FlashAttention-3's
  // 648 and 756 TFLOP/s at head dims 128 and 256): 1 at the fractions' own head dim 128.
  const rsim::Roofs roofs = rsim::test::preset_roofs("h100_sxm");
  rsim::Op attention;
  attention.kind = rsim::OpKind::attention;
  attention.attention.head_dim = 128;
  CHECK(rsim::attention_head_dim_share(attention, roofs) == Approx(1.0));
  // d = 256: (256 / 307.2) / (128 / 179.2) = 0.83333 / 0.71429 = 1.16667 = 756 / 648.
  attention.attention.head_dim = 256;
  CHECK(rsim::attention_head_dim_share(attention, roofs) == Approx(756.0 / 648.0).epsilon(1e-4));
  // d = 64: (64 / 115.2) / (128 / 179.2) = 0.55556 / 0.71429 = 0.77778.
  attention.attention.head_dim = 64;
  CHECK(rsim::attention_head_dim_share(attention, roofs) == Approx(0.77778).epsilon(1e-4));
  // Both shares multiply: 16,384 bidirectional keys at d = 64: 0.98202 × 0.77778.
  attention.attention.mask = rsim::AttentionMask::bidirectional;
  attention.attention.query_tokens = 16384;
  CHECK(rsim::op_shape_share(attention, roofs) ==
        Approx(16384.0 / 16684.0 * 0.77778).epsilon(1e-4));
  // No overhead on the hardware (the A100 preset), or not an attention op: 1.
  rsim::Roofs none = roofs;
  none.attention_efficiency.head_dim_overhead = 0.0;
  CHECK(rsim::attention_head_dim_share(attention, none) == 1.0);
  rsim::Op matmul;
  matmul.kind = rsim::OpKind::matmul;
  matmul.attention.head_dim = 64;
  CHECK(rsim::attention_head_dim_share(matmul, roofs) == 1.0);
  // The A100 (FlashAttention-2's bars: 260 tokens, 19 dims): d = 64 at 512 bidirectional keys,
  // (64 / 83) / (128 / 147) × 512 / 772 = 0.88554 × 0.66321 = 0.58730.
  const rsim::Roofs a100 = rsim::test::preset_roofs("a100_sxm_80gb");
  attention.attention.query_tokens = 512;
  CHECK(rsim::op_shape_share(attention, a100) ==
        Approx((64.0 / 83.0) / (128.0 / 147.0) * 512.0 / 772.0));
  CHECK_THAT(h100_error_of("efficiency.attention.head_dim_overhead.dims", "-1"),
             Catch::Contains("dims: the head dimensions' worth of each score's work"));
}

TEST_CASE("FP8 matmuls with BF16 attention: each op on its own path", "[expected][precision]") {
  // Llama 3 8B training on H100s, precision fp8 against {policy: fp8, attention: bf16}: the
  // same ops, each attention pass's T_math at the bf16 peak instead of the fp8 one (× 1978.9 /
  // 989.4 = 2.0001, hardware/h100_sxm.yaml), every matmul's unchanged.
  const auto fp8 = rsim::test::run_scenario("llama3_8b_train_h100", {{"precision", "fp8"}});
  const auto te = rsim::test::run_scenario("llama3_8b_train_h100",
                                           {{"precision", "{policy: fp8, attention: bf16}"}});
  REQUIRE(fp8.table.order.size() == te.table.order.size());
  int attention = 0;
  int matmuls = 0;
  for (Eigen::Index row = 0; row < te.table.expected.size(); ++row) {
    const auto& op = te.graph.op(te.table.order[static_cast<std::size_t>(row)]);
    const double before = fp8.table.times(row, rsim::CostTable::kMathColumn);
    const double after = te.table.times(row, rsim::CostTable::kMathColumn);
    INFO(op.qualified_name());
    if (op.kind == rsim::OpKind::attention) {
      CHECK(op.compute_path == "bf16");
      CHECK(after == Approx(before * 1978.9 / 989.4));
      ++attention;
    } else if (op.kind == rsim::OpKind::matmul) {
      CHECK(op.compute_path == "fp8");
      CHECK(after == Approx(before));
      ++matmuls;
    }
  }
  CHECK(attention >= 2);
  CHECK(matmuls >= 7);
}

TEST_CASE("attention efficiency figures are checked", "[expected][hardware]") {
  CHECK_THAT(h100_error_of("efficiency.attention.forward.fraction", "1.2"),
             Catch::Contains("a fraction of the roof in (0, 1], got 1.2"));
  CHECK_THAT(h100_error_of("efficiency.attention.sideways", "{fraction: 0.5, source: x}"),
             Catch::Contains("sideways"));
}

TEST_CASE("GEMM tile figures are checked", "[expected][gemm][hardware]") {
  CHECK_THAT(h100_error_of("efficiency.gemm.tiles", "[[100, 256]]"),
             Catch::Contains("every tile is a multiple of the MMA instruction [64, 8]"));
  CHECK_THAT(h100_error_of("efficiency.gemm.tiles", "[]"), Catch::Contains("a list of [M, N]"));
  CHECK_THAT(h100_error_of("efficiency.gemm.tiles", "[[128]]"), Catch::Contains("[M, N]"));
  CHECK_THAT(h100_error_of("efficiency.gemm.split_k_min", "0.5"),
             Catch::Contains("split_k_min: a whole number from 1"));
  CHECK_THAT(h100_error_of("efficiency.gemm.units", "-3"), Catch::Contains("units"));
  CHECK(h100_error_of("efficiency.gemm.units", "114") == "(no error)");
}

TEST_CASE("an LM head kept in 16 bits reads 16-bit weights on its own path",
          "[expected][precision]") {
  // Llama 3 8B prefill on H100 under fp8 against {policy: fp8, lm_head: bf16}: the head's
  // weight is 4096 × 128,256 = 525.3M values, 1 B each in fp8 and 2 B in bf16 (+525.3 MB), and
  // its T_math is at the bf16 peak instead of the fp8 one (× 1978.9 / 989.4); every other op is
  // unchanged.
  const auto fp8 = rsim::test::run_scenario("llama3_8b_h100", {{"precision", "fp8"}});
  const auto head =
      rsim::test::run_scenario("llama3_8b_h100", {{"precision", "{policy: fp8, lm_head: bf16}"}});
  REQUIRE(fp8.table.order.size() == head.table.order.size());
  int heads = 0;
  for (Eigen::Index row = 0; row < head.table.expected.size(); ++row) {
    const auto& op = head.graph.op(head.table.order[static_cast<std::size_t>(row)]);
    const auto& before_op = fp8.graph.op(fp8.table.order[static_cast<std::size_t>(row)]);
    const double before = fp8.table.times(row, rsim::CostTable::kMathColumn);
    const double after = head.table.times(row, rsim::CostTable::kMathColumn);
    INFO(op.qualified_name());
    if (op.name == "lm_head") {
      CHECK(op.compute_path == "bf16");
      CHECK(after == Approx(before * 1978.9 / 989.4));
      CHECK(op.inputs[1].bytes().si() - before_op.inputs[1].bytes().si() ==
            Approx(4096.0 * 128256.0));
      ++heads;
    } else {
      CHECK(after == Approx(before));
    }
  }
  CHECK(heads == 1);
}
