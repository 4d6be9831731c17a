// SPDX-License-Identifier: MIT
// `rsim validate`: the shipped set of published measurements (validation/cases.yaml) holds every
// lower bound at or below its measurement, and a case whose bound is too high fails the run.
#include "sim/explore/validation.hpp"

#include "cli_fixture.hpp"
#include "sim/report/validation_report.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace {

std::filesystem::path write_cases(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cases.yaml") << text;
  return dir;
}

}  // namespace

TEST_CASE("the shipped validation set: every lower bound at or below its measurement",
          "[validation]") {
  const auto cases = rsim::load_validation_cases(rsim::test::source_path("validation"));
  CHECK(cases.size() >= 30);
  const auto results = rsim::run_validation(cases);
  for (const auto& result : results) {
    INFO(result.item.name << ": " << result.error);
    CHECK(result.error.empty());
    CHECK(result.bound_holds());
    CHECK(result.expected >= result.lower);
  }
  const auto summary = rsim::summarize_validation(results);
  CHECK(summary.passed());
  // Not scored: FlashAttention-2 on Hopper (two published H100 cases, five timed on an H200),
  // TensorRT Edge-LLM 0.4.0's batched NVFP4 and INT4 AWQ prefills and batch-8 NVFP4 decode on
  // Thor, and TensorRT-LLM v0.6.1's Llama 2 70B 2,048 / 2,048 run, 1.85× slower than v0.9.0's.
  CHECK(summary.scored + 11 == summary.cases);
}

TEST_CASE("a case whose lower bound is above its measurement fails validation", "[validation]") {
  // 8192³ bf16 on an H100: T_math = 2·8192³ / 989.4e12 = 1.1113 ms, the lower bound (compute-
  // bound, tiling_test). A measurement of 1 ms is below it: the bound does not hold.
  const auto dir = write_cases("rsim_validation_too_high",
                               "cases:\n"
                               "  - name: too_fast\n"
                               "    category: gemm\n"
                               "    kind: matmul\n"
                               "    hardware: h100_sxm\n"
                               "    matmul: {b: 8192, d: 8192, f: 8192, dtype: bf16}\n"
                               "    measured: 1 ms\n"
                               "    source: test\n"
                               "  - name: slow_enough\n"
                               "    category: gemm\n"
                               "    kind: matmul\n"
                               "    hardware: h100_sxm\n"
                               "    matmul: {b: 8192, d: 8192, f: 8192, dtype: bf16}\n"
                               "    measured: 1.5 ms\n"
                               "    source: test\n");
  const auto results = rsim::run_validation(rsim::load_validation_cases(dir), 1);
  REQUIRE(results.size() == 2);
  CHECK(results[0].lower.si() == Approx(2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12));
  CHECK_FALSE(results[0].bound_holds());
  CHECK(results[1].bound_holds());
  // Expected: T_math / (0.80 · q) + 4.2 µs launch, q = 2048/2112 (2048 tiles of 128×256 in 16
  // waves of 132 SMs): 1.4367 ms; errors |1.4367/1 − 1| = 43.7 % and |1.4367/1.5 − 1| = 4.2 %:
  // one of two within ±15 %, median (43.7 + 4.2)/2 = 23.9 %.
  const auto summary = rsim::summarize_validation(results);
  CHECK(summary.bound_violations == 1);
  CHECK_FALSE(summary.passed());
  CHECK(summary.within == 1);
  const double expected = 1.1113e-3 / (0.8 * 2048.0 / 2112.0) + 4.2e-6;
  CHECK(summary.median_error ==
        Approx((expected / 1e-3 - 1.0 + 1.0 - expected / 1.5e-3) / 2.0).epsilon(1e-3));
  // The command exits 3 and says why.
  const auto outcome = rsim::test::rsim_cli({"validate", dir.string()});
  CHECK(outcome.code == 3);
  CHECK_THAT(outcome.out, Catch::Contains("BOUND ABOVE MEASURED") &&
                              Catch::Contains("the lower bound holds on 1 of them"));
}

TEST_CASE("validation cases: errors name the file and line", "[validation]") {
  const auto missing = write_cases("rsim_validation_bad_quantity",
                                   "cases:\n"
                                   "  - name: x\n"
                                   "    category: decode\n"
                                   "    kind: scenario\n"
                                   "    scenario: s.yaml\n"
                                   "    quantity: tokens\n"
                                   "    measured: 1 ms\n"
                                   "    source: test\n");
  CHECK_THROWS_WITH(rsim::load_validation_cases(missing),
                    Catch::Contains("cases.yaml:6") && Catch::Contains("per_output_token"));
  const auto mixed = write_cases("rsim_validation_mixed",
                                 "cases:\n"
                                 "  - name: x\n"
                                 "    category: gemm\n"
                                 "    kind: matmul\n"
                                 "    hardware: h100_sxm\n"
                                 "    matmul: {b: 1, d: 1, f: 1, dtype: bf16}\n"
                                 "    quantity: step\n"
                                 "    measured: 1 ms\n"
                                 "    source: test\n");
  CHECK_THROWS_WITH(rsim::load_validation_cases(mixed),
                    Catch::Contains("'quantity' is for kind: scenario"));
  const auto outcome = rsim::test::rsim_cli({"validate", "/nonexistent/validation"});
  CHECK(outcome.code == 2);
  CHECK_THAT(outcome.err, Catch::Contains("no such file or folder"));
}

TEST_CASE("the validation summary splits the accuracy figures by category", "[validation]") {
  // Five results with hand-picked times (measured 1 s each): gemm expects 0.9, 1.05 and 1.3 s
  // (errors 10, 5 and 30 %: two within ±15 %, median error 10 %, median exp/meas 1.05); decode
  // 0.8 s and 0.5 s, the second marked off the roofline (one scored: error 20 %, ratio 0.8).
  const auto result = [](const char* category, double expected, const char* off_roofline) {
    rsim::ValidationResult entry;
    entry.item.name = "case";
    entry.item.category = category;
    entry.item.measured = rsim::Seconds(1.0);
    entry.item.off_roofline = off_roofline;
    entry.lower = rsim::Seconds(0.4);
    entry.expected = rsim::Seconds(expected);
    return entry;
  };
  const std::vector<rsim::ValidationResult> results{
      result("gemm", 0.9, ""), result("decode", 0.8, ""), result("gemm", 1.05, ""),
      result("decode", 0.5, "known slow"), result("gemm", 1.3, "")};
  const auto summary = rsim::summarize_validation(results);
  REQUIRE(summary.categories.size() == 2);
  struct Figures {
    const char* category;
    std::size_t cases, scored, within;
    double median_error, median_ratio;
  };
  for (const auto& [category, figures] :
       {std::pair{&summary.categories[0], Figures{"gemm", 3, 3, 2, 0.10, 1.05}},
        std::pair{&summary.categories[1], Figures{"decode", 2, 1, 0, 0.20, 0.80}}}) {
    CAPTURE(figures.category);
    CHECK(category->category == figures.category);
    CHECK(category->cases == figures.cases);
    CHECK(category->scored == figures.scored);
    CHECK(category->within == figures.within);
    CHECK(category->median_error == Approx(figures.median_error));
    CHECK(category->median_ratio == Approx(figures.median_ratio));
  }
  // In all: four scored, errors 10, 20, 5, 30 %: median (10 + 20) / 2 = 15 %.
  CHECK(summary.scored == 4);
  CHECK(summary.within == 2);
  CHECK(summary.median_error == Approx(0.15));
  // The report prints them and the JSON carries them.
  std::ostringstream text;
  rsim::write_validation_text(text, results, summary);
  CHECK_THAT(text.str(), Catch::Contains("By category") && Catch::Contains("2 (66.7 %)"));
  const auto json = rsim::validation_to_json(results, summary);
  CHECK(json["summary"]["categories"][1]["median_expected_over_measured"].get<double>() ==
        Approx(0.80));
}

TEST_CASE("the validation set's A100 80GB has the shipped preset's figures", "[validation]") {
  // validation/scenarios name validation/hardware/a100_sxm_80gb.yaml, a copy of the preset with its
  // own wording of the sources: its roofs and efficiencies must be the preset's, or the cases
  // would check a hardware file no user runs.
  const auto shipped = rsim::load_hardware(rsim::test::source_path("hardware/a100_sxm_80gb.yaml"));
  const auto copy =
      rsim::load_hardware(rsim::test::source_path("validation/hardware/a100_sxm_80gb.yaml"));
  CHECK(copy.name == shipped.name);
  REQUIRE(copy.compute.size() == shipped.compute.size());
  for (std::size_t index = 0; index < shipped.compute.size(); ++index) {
    CAPTURE(shipped.compute[index].name);
    CHECK(copy.compute[index].name == shipped.compute[index].name);
    CHECK(copy.compute[index].peak.si() == shipped.compute[index].peak.si());
    CHECK(copy.compute[index].efficiency == shipped.compute[index].efficiency);
  }
  REQUIRE(copy.memory.size() == shipped.memory.size());
  for (std::size_t index = 0; index < shipped.memory.size(); ++index) {
    CAPTURE(shipped.memory[index].name);
    CHECK(copy.memory[index].name == shipped.memory[index].name);
    CHECK(copy.memory[index].bandwidth.has_value() == shipped.memory[index].bandwidth.has_value());
    if (copy.memory[index].bandwidth && shipped.memory[index].bandwidth) {
      CHECK(copy.memory[index].bandwidth->si() == shipped.memory[index].bandwidth->si());
    }
    CHECK(copy.memory[index].capacity.si() == shipped.memory[index].capacity.si());
    CHECK(copy.memory[index].efficiency == shipped.memory[index].efficiency);
  }
  REQUIRE(copy.network.size() == shipped.network.size());
  for (std::size_t index = 0; index < shipped.network.size(); ++index) {
    CAPTURE(shipped.network[index].name);
    CHECK(copy.network[index].bandwidth.si() == shipped.network[index].bandwidth.si());
    CHECK(copy.network[index].efficiency == shipped.network[index].efficiency);
    CHECK(copy.network[index].call_latency.si() == shipped.network[index].call_latency.si());
    CHECK(copy.network[index].processor_usage == shipped.network[index].processor_usage);
  }
  CHECK(copy.kernel_overhead.si() == shipped.kernel_overhead.si());
  const auto& attention = shipped.attention_efficiency;
  CHECK(copy.attention_efficiency.forward == attention.forward);
  CHECK(copy.attention_efficiency.backward == attention.backward);
  CHECK(copy.attention_efficiency.length_overhead == attention.length_overhead);
  CHECK(copy.attention_efficiency.head_dim_overhead == attention.head_dim_overhead);
  CHECK(copy.attention_efficiency.unfused_memory == attention.unfused_memory);
  CHECK(copy.gemm_quantization.units == shipped.gemm_quantization.units);
  CHECK(copy.gemm_quantization.split_k_min == shipped.gemm_quantization.split_k_min);
  CHECK(copy.gemm_quantization.tiles.size() == shipped.gemm_quantization.tiles.size());
}
