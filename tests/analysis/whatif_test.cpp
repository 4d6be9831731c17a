// SPDX-License-Identifier: MIT
// Quantization what-ifs: variants through the whole pipeline, and the critical batches they move.
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/json.hpp"

#include <catch2/catch.hpp>

using rsim::CriticalBatch;
using rsim::DType;

namespace {

std::vector<rsim::RunResult> run_all(const std::string& name) {
  std::vector<rsim::RunResult> runs;
  for (auto& scenario :
       rsim::load_scenario_variants(rsim::test::source_path("scenarios/" + name + ".yaml"))) {
    auto roofs = rsim::scenario_roofs(scenario, "");
    runs.push_back(rsim::analyze(std::move(scenario), std::move(roofs)));
  }
  return runs;
}

const rsim::RunResult& variant(const std::vector<rsim::RunResult>& runs, const std::string& name) {
  for (const auto& run : runs) {
    if (run.scenario.variant == name) {
      return run;
    }
  }
  FAIL("no variant " << name);
  return runs.front();
}

std::optional<CriticalBatch> group(const rsim::RunResult& run, const std::string& stage,
                                   const std::string& name) {
  for (const auto& entry : run.group_critical) {
    if (entry.stage == stage && entry.group == name) {
      return entry.critical;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("every variant of every shipped scenario loads and runs", "[whatif]") {
  for (const auto& entry :
       std::filesystem::directory_iterator(rsim::test::source_path("scenarios"))) {
    INFO(entry.path());
    const auto scenarios = rsim::load_scenario_variants(entry.path());
    CHECK(scenarios.size() == scenarios.front().variant_names.size() + 1);
  }
}

TEST_CASE("π0.5 on Thor: bf16 doubles every byte and nvfp4 weights cut the weight bytes",
          "[whatif][pi05]") {
  const auto runs = run_all("pi05_thor");
  const auto& baseline = runs.front();
  const auto& bf16 = variant(runs, "bf16");
  // Every tensor goes from 1 to 2 bytes, so ΣT_mem doubles exactly.
  CHECK(bf16.bounds.total.t_mem.si() == Approx(2 * baseline.bounds.total.t_mem.si()));
  // Weights: 3,353,433,872 parameters × 1 B (fp8) and × 2 B (bf16).
  CHECK(baseline.footprint.weights.si() == Approx(3'353'433'872.0));
  CHECK(bf16.footprint.weights.si() == Approx(2 * 3'353'433'872.0));
  // NVFP4: 0.5 B + one 1-byte scale per 16 values = 0.5625 B per parameter.
  CHECK(variant(runs, "nvfp4_weights").footprint.weights.si() == Approx(0.5625 * 3'353'433'872.0));
  // The prefix KV cache: K and V, 18 layers × 968 tokens × 1 KV head × 256 × 1 B = 8,921,088 B.
  CHECK(baseline.footprint.kv_cache.si() == Approx(8'921'088.0));
  // 120 W keeps the bytes and slows FP8 from 517 to 455 TFLOP/s.
  const auto& low_power = variant(runs, "fp8_120W");
  CHECK(low_power.bounds.total.t_mem.si() == Approx(baseline.bounds.total.t_mem.si()));
  CHECK(low_power.roofs.mode == "120W");
}

TEST_CASE("an int8 KV cache halves the KV bytes", "[whatif]") {
  const auto path = rsim::test::source_path("scenarios/pi05_thor.yaml");
  const auto with_kv = [&](const std::string& kv_dtype) {
    auto scenario = rsim::load_scenario(path, {{{"precision.weights", "bf16"},
                                                {"precision.activations", "bf16"},
                                                {"precision.compute", "bf16"},
                                                {"precision.kv_cache", kv_dtype}},
                                               ""});
    auto roofs = rsim::scenario_roofs(scenario, "");
    return rsim::analyze(std::move(scenario), std::move(roofs));
  };
  // bf16 KV: 2 × 18 × 968 × 256 × 2 B = 17,842,176 B; int8 KV: 8,921,088 B.
  CHECK(with_kv("bf16").footprint.kv_cache.si() == Approx(17'842'176.0));
  CHECK(with_kv("int8").footprint.kv_cache.si() == Approx(8'921'088.0));
}

TEST_CASE(
    "scaling book on Gemma 2B blocks: int8 W+A keeps and int8 weights halve and per-batch never",
    "[whatif][scaling_book]") {
  const auto runs = run_all("quantization_v5e");
  const auto& baseline = runs.front();
  // The MLP group of one block at T tokens (bf16): gate_up X[T,D]·W[D,2F] and down X[T,F]·W[F,D]:
  // FLOPs 6TDF, bytes 2(2TD + 3DF + 3TF) ⇒ T = 3I·DF / (3DF − I(2D + 3F)), with D = 2048,
  // F = 16384, I = 1.97e14 / 8.2e11 = 240.24: 24,183,... / 87,870,776 = 275.2 tokens.
  const double ridge = 1.97e14 / 8.2e11;
  const double d = 2048;
  const double f = 16384;
  const auto bf16_mlp = group(baseline, "decoder", "mlp");
  REQUIRE(bf16_mlp);
  CHECK(bf16_mlp->tokens == Approx(3 * ridge * d * f / (3 * d * f - ridge * (2 * d + 3 * f))));
  // int8 W+A: every byte halves and the peak doubles (3.94e14 = 2 × 1.97e14): the same root.
  CHECK(group(variant(runs, "int8_B256"), "decoder", "mlp")->tokens == Approx(bf16_mlp->tokens));
  // int8 weights, bf16 compute: bytes 2(2TD + 3TF) + 3DF ⇒ T = 3I·DF / (2(3DF − I(2D + 3F))),
  // exactly half: 137.6.
  CHECK(group(variant(runs, "int8_weights_B256"), "decoder", "mlp")->tokens ==
        Approx(bf16_mlp->tokens / 2));
  // Per-batch int8 weights: intensity ≈ 2 whatever B, never compute-bound.
  CHECK(group(variant(runs, "per_batch_int8_B256"), "decoder", "mlp")->kind ==
        CriticalBatch::Kind::never);
  // The critical batch does not depend on the batch the variant runs at.
  CHECK(group(variant(runs, "bf16_B64"), "decoder", "mlp")->tokens == Approx(bf16_mlp->tokens));
  // Below it memory-bound, above it compute-bound.
  CHECK(variant(runs, "bf16_B64").bounds.total.bound == rsim::Bound::memory);
  CHECK(variant(runs, "bf16_B1024").bounds.total.bound == rsim::Bound::compute);
}

TEST_CASE("what-if JSON: every variant with its ratio to the baseline", "[whatif]") {
  const auto runs = run_all("pi05_thor");
  const auto json = rsim::whatif_to_json(runs);
  REQUIRE(json["variants"].size() == runs.size());
  CHECK(json["variants"][0]["variant"] == "baseline");
  CHECK(json["variants"][0]["lower_vs_baseline"].get<double>() == Approx(1.0));
  for (std::size_t index = 0; index < runs.size(); ++index) {
    const auto& entry = json["variants"][index];
    CHECK(entry["lower_vs_baseline"].get<double>() ==
          Approx(runs[index].bounds.total.t_lower.si() / runs[0].bounds.total.t_lower.si()));
    CHECK(!entry["critical_batches"].empty());
  }
}

TEST_CASE("variants are validated: unknown keys and unknown names", "[whatif]") {
  const auto path = rsim::test::source_path("tests/data/invalid/scenario_bad_variant.yaml");
  CHECK_THROWS_WITH(
      rsim::load_scenario(path),
      path.string() +
          ":9:30: error: unknown key 'variants[1].colour' (expected one of: name, "
          "precision, mode, hardware, model, batch, fusion, per_batch_weights, plan, tiles, peaks, "
          "bandwidths, set)");
  const auto pi05 = rsim::test::source_path("scenarios/pi05_thor.yaml");
  CHECK_THROWS_WITH(rsim::load_scenario(pi05, {{}, "fp2"}),
                    Catch::Contains("no variant 'fp2' (variants: bf16, int8_weights"));
}
