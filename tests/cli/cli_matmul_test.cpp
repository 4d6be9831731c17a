// SPDX-License-Identifier: MIT
// rsim matmul (keys, tiles, the GEMM's tile fill) and rsim run --explain.
#include "cli_fixture.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

namespace {

using rsim::test::Outcome;
using rsim::test::rsim_cli;

std::string shipped_scenario(const std::string& name) {
  return rsim::test::source_path("scenarios/" + name + ".yaml").string();
}

}  // namespace

TEST_CASE("rsim matmul prints the scaling book's keys", "[cli]") {
  const auto outcome =
      rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "512", "--d", "8192", "--f", "8192",
                "--dtype", "bf16", "--weights", "int8", "--format", "json"});
  REQUIRE(outcome.code == 0);
  const auto json = nlohmann::json::parse(outcome.out);
  for (const char* key : {"flops", "bytes", "intensity", "critical_intensity", "t_math_s",
                          "t_comms_s", "t_lower_s", "t_upper_s", "bound", "critical_batch"}) {
    CHECK(json.contains(key));
  }
  // FLOPs 2 · 512 · 8192² = 68,719,476,736; bytes 2·512·8192 + 8192² + 2·512·8192 = 83,886,080
  CHECK(json["flops"].get<double>() == Approx(68'719'476'736.0));
  CHECK(json["bytes"].get<double>() == Approx(83'886'080.0));
  CHECK(json["bound"] == "compute");
  const auto per_batch = nlohmann::json::parse(
      rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "512", "--d", "8192", "--f", "8192",
                "--dtype", "int8", "--per-batch-weights", "--format", "json"})
          .out);
  CHECK(per_batch["critical_batch"].is_null());  // never compute-bound
  // --precision int8_weights is --dtype bf16 --weights int8: the same bytes as above
  const auto policy = nlohmann::json::parse(
      rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "512", "--d", "8192", "--f", "8192",
                "--precision", "int8_weights", "--format", "json"})
          .out);
  CHECK(policy["bytes"].get<double>() == Approx(83'886'080.0));
}

TEST_CASE("rsim matmul --tile --explain: per-tier traffic with the formula", "[cli]") {
  const auto outcome = rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "256", "--d", "4096",
                                 "--f", "4096", "--tile", "32,32,128", "--explain"});
  REQUIRE(outcome.code == 0);
  // X re-read ⌈4096/32⌉ = 128 times, W ⌈256/32⌉ = 8 times, bf16: 2·256·4096·128 +
  // 2·4096·4096·8 + 2·256·4096 = 538,968,064 B ≈ 539 MB served by HBM; intensity
  // 8,589,934,592 / 538,968,064 = 15.94 FLOP/B, below the 240.2 ridge: HBM-bound.
  CHECK_THAT(outcome.out, Catch::Contains("hbm serves"));
  CHECK_THAT(outcome.out, Catch::Contains("539 MB"));
  CHECK_THAT(outcome.out, Catch::Contains("tile 32×32×128 in vmem"));
  CHECK_THAT(outcome.out, Catch::Contains("⌈N/bn⌉=128"));
  CHECK_THAT(outcome.out, Catch::Contains("15.94 FLOP/B"));
  const auto json = nlohmann::json::parse(
      rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "256", "--d", "4096", "--f", "4096",
                "--tile", "vmem=32,32,128", "--format", "json"})
          .out);
  CHECK(json["bytes_by_tier"]["hbm"].get<double>() == Approx(538'968'064.0));
  CHECK(json["tiles"]["vmem"]["bm"].get<int>() == 32);
  CHECK(json["bound_tier"] == "hbm");
}

TEST_CASE("the --explain option prints an op's formulas with the numbers put in", "[cli]") {
  const auto outcome =
      rsim_cli({"run", shipped_scenario("pi05_thor"), "--explain", "prefix/layer/gate_up_proj"});
  REQUIRE(outcome.code == 0);
  // FLOPs 2 · 968 · 2048 · 2 · 16384 = 129,922,760,704
  CHECK_THAT(outcome.out, Catch::Contains("= 129,922,760,704"));
  CHECK_THAT(outcome.out, Catch::Contains("× 18 instances"));
  CHECK_THAT(outcome.out, Catch::Contains("→ bound by memory (dram)"));
  // STAGE/OP names the same op.
  CHECK(rsim_cli({"run", shipped_scenario("pi05_thor"), "--explain", "prefix/gate_up_proj"}).out ==
        outcome.out);
  // The expected time with its fractions: Llama 3 8B's q_proj, M = 4·2048 = 8192, N = K = 4096 on
  // an H100: 64·16 = 1024 tiles of 128×256 in ⌈1024/132⌉ = 8 waves (q = 1024/1056 = 97 %);
  // T_math = 2·8192·4096·4096 / 989.4e12 = 277.8 µs → 277.8 / (0.8 · 0.9697) + 4.2 = 362.3 µs.
  const auto q_proj =
      rsim_cli({"run", shipped_scenario("llama3_8b_h100"), "--explain", "decoder/layer/q_proj"});
  CHECK_THAT(q_proj.out, Catch::Contains("expected = max(T_math / (0.8 × tiles fill 97 %), "
                                         "T_hbm / 0.89") &&
                             Catch::Contains("+ launch 4.2 µs = 362.3 µs"));
}

TEST_CASE("rsim run refuses an ambiguous --explain and suggests a close name", "[cli]") {
  // π0.5 runs gate_up_proj in its prefix and action stages (SigLIP's MLP is not gated): two
  // candidates, exit 2.
  const auto ambiguous =
      rsim_cli({"run", shipped_scenario("pi05_thor"), "--explain", "gate_up_proj"});
  CHECK(ambiguous.code == 2);
  CHECK_THAT(ambiguous.err, Catch::Contains("--explain gate_up_proj: 2 ops match (") &&
                                Catch::Contains("prefix/layer/gate_up_proj") &&
                                Catch::Contains("name one by STAGE/BLOCK/OP"));
  const auto typo =
      rsim_cli({"run", shipped_scenario("pi05_thor"), "--explain", "prefix/layer/q_prj"});
  CHECK(typo.code == 2);
  CHECK_THAT(typo.err, Catch::Contains("did you mean 'prefix/layer/q_proj'?"));
}

TEST_CASE("rsim matmul shows how the GEMM's tiles fill the SMs", "[cli][gemm]") {
  // 1024³ bf16 on an H100: 8·8 = 64 tiles of 128×128 in one wave of 132 SMs, 64/132 = 48.5 %
  // (split-K would leave K/2 = 512 < split_k_min 1024).
  const auto outcome = rsim_cli(
      {"matmul", "--hardware", "h100_sxm", "--b", "1024", "--d", "1024", "--f", "1024", "--wide"});
  REQUIRE(outcome.code == 0);
  CHECK_THAT(outcome.out, Catch::Contains("48.5 %  64 tiles of 128×128 in 1 wave on 132 SMs"));
  const auto json =
      nlohmann::json::parse(rsim_cli({"matmul", "--hardware", "h100_sxm", "--b", "1024", "--d",
                                      "1024", "--f", "1024", "--format", "json"})
                                .out);
  CHECK(json["gemm_quantization"]["useful"].get<double>() == Approx(64.0 / 132.0));
  CHECK(json["gemm_quantization"]["tiles"] == 64.0);
  CHECK(json["gemm_quantization"]["tile_m"] == 128);
  CHECK(json["gemm_quantization"]["waves"] == 1.0);
  // A TPU names no GEMM tiles: no row.
  const auto tpu = rsim_cli(
      {"matmul", "--hardware", "tpu_v5e", "--b", "1024", "--d", "1024", "--f", "1024", "--wide"});
  CHECK_THAT(tpu.out, !Catch::Contains("tiles fill"));
  CHECK(nlohmann::json::parse(rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "1024", "--d",
                                        "1024", "--f", "1024", "--format", "json"})
                                  .out)["gemm_quantization"]
            .is_null());
}
