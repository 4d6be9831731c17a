// SPDX-License-Identifier: MIT
#include "sim/analysis/measured.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/measured_report.hpp"

#include <catch2/catch.hpp>

#include <sstream>

namespace {

std::string ncu_file(const std::string& name) {
  return rsim::test::source_path("tests/data/ncu/" + name).string();
}

}  // namespace

TEST_CASE("an ncu CSV export in the long layout: one kernel per ID", "[measured]") {
  const auto kernels = rsim::load_ncu_csv(ncu_file("thor_kernels.csv"));
  REQUIRE(kernels.size() == 3);
  // Line 5 is the header (four ==PROF== and program lines before it); each kernel's first row
  // follows its predecessor's eight.
  CHECK(kernels[0].line == 6);
  CHECK(kernels[1].line == 14);
  CHECK(kernels[2].line == 22);
  CHECK(kernels[0].id == "0");
  CHECK(kernels[1].name == "rmsnorm_kernel<float, 2048>");
  // Kernel 0: 60.00 Mbyte read + 8.25 Mbyte written (ncu's prefixes are decimal) in 500 usecond.
  CHECK(kernels[0].dram_bytes.si() == Approx(68.25e6));
  CHECK(kernels[0].duration.si() == Approx(500e-6));
  REQUIRE(kernels[0].sass_flops);
  CHECK(kernels[0].sass_flops->si() == 0.0);  // a tensor-core GEMM: no CUDA-core FLOPs
  // Kernel 1: FLOPs = fadd + fmul + 2 · ffma = 1,000,000 + 968,000 + 2 · 2,016,000 = 6,000,000.
  REQUIRE(kernels[1].sass_flops);
  CHECK(kernels[1].sass_flops->si() == Approx(6e6));
  CHECK(kernels[1].dram_bytes.si() == Approx(4.9e6));
  // Kernel 2: dram__bytes.sum "12,582,912" byte (thousands separators) in "92,160" nsecond.
  CHECK(kernels[2].dram_bytes.si() == Approx(12582912.0));
  CHECK(kernels[2].duration.si() == Approx(92160e-9));
  CHECK(kernels[2].sass_flops->si() == Approx(1048576.0));
}

TEST_CASE("measured kernels on Thor's roofs: % of the DRAM slope and of the roof",
          "[measured][pi05]") {
  const auto run = rsim::test::run_scenario("pi05_thor");
  const std::string file = ncu_file("thor_kernels.csv");
  const auto placed = rsim::place_kernels(rsim::load_ncu_csv(file), run.roofs, &run,
                                          {{"gate_up", "prefix/layer/gate_up_proj"}}, file);
  REQUIRE(placed.size() == 3);
  // The GEMM takes the op's FLOPs per instance: 2 · 968 tokens · 2048 (d_model) · 32768 (gate
  // and up, 2 · 16384) = 129,922,760,704, on the fp8 path.
  const rsim::KernelOnRoofs& gemm = placed[0];
  CHECK(gemm.flops.si() == Approx(129922760704.0));
  CHECK(gemm.flops_source == "op prefix/layer/gate_up_proj");
  CHECK(gemm.compute_path == "fp8");
  // Against data sheet DS-11945's roofs: 68.25 MB / 500 µs = 136.5 GB/s = 50 % of 273 GB/s;
  // 1.2992e11 / 500 µs = 259.8 TFLOP/s = 50.26 % of 517 TFLOP/s (≈ 50 %).
  CHECK(gemm.achieved_bandwidth.si() == Approx(136.5e9));
  CHECK(gemm.dram_fraction == Approx(0.5));
  CHECK(gemm.achieved.si() == Approx(129922760704.0 / 500e-6));
  CHECK(gemm.compute_fraction == Approx(129922760704.0 / 500e-6 / 517e12));
  CHECK(gemm.compute_fraction == Approx(0.5026).margin(1e-4));
  CHECK(gemm.intensity == Approx(129922760704.0 / 68.25e6));  // 1903.6 FLOP/B: at the ridge
  // rmsnorm: 4.9 MB / 20 µs = 245 GB/s = 89.74 % of 273 (≈ 90 %);
  // 6e6 FLOPs / 20 µs = 300 GFLOP/s on the vector path (fp32 CUDA cores, 8.064 TFLOP/s): 3.72 %.
  const rsim::KernelOnRoofs& norm = placed[1];
  CHECK(norm.flops_source == "sass");
  CHECK(norm.compute_path == "fp32");
  CHECK(norm.dram_fraction == Approx(245.0 / 273.0));
  CHECK(norm.compute_fraction == Approx(3e11 / 8.064e12));
  CHECK(norm.intensity == Approx(6e6 / 4.9e6));
  // elementwise add: 12,582,912 B / 92.16 µs = 136.5 GB/s = 50.01 % ("136 GB/s ≈ 50 %");
  // 1,048,576 FLOPs over 12 × 1,048,576 bytes: 1/12 FLOP/B.
  CHECK(placed[2].dram_fraction == Approx(12582912.0 / 92160e-9 / 273e9));
  CHECK(placed[2].intensity == Approx(1.0 / 12.0));

  std::ostringstream text;
  rsim::write_measured_text(text, placed, run.roofs);
  CHECK(text.str().find("50.0 %") != std::string::npos);
  CHECK(text.str().find("89.7 %") != std::string::npos);
  const auto json = rsim::measured_to_json(placed);
  CHECK(json[1]["dram_fraction"].get<double>() == Approx(245.0 / 273.0));
}

TEST_CASE("malformed or partial ncu CSVs name the line and what was expected", "[measured]") {
  const auto fails_with = [](const std::string& name, const std::string& message) {
    const std::string file = ncu_file(name);
    REQUIRE_THROWS_AS(rsim::load_ncu_csv(file), rsim::InputError);
    REQUIRE_THROWS_WITH(rsim::load_ncu_csv(file), Catch::Matchers::StartsWith(file + message));
  };
  fails_with("bad_value.csv",
             ":4: error: gpu__time_duration.sum: \"2O.00\" is not a non-negative number");
  fails_with("bad_unit.csv",
             ":5: error: gpu__time_duration.sum: unknown unit \"cycle\" (expected one of "
             "\"nsecond\", \"usecond\", \"msecond\", \"second\", \"ns\", \"us\", \"ms\", \"s\")");
  fails_with("missing_duration.csv",
             ":2: error: kernel \"rmsnorm_kernel<float, 2048>\" (ID 1): no "
             "gpu__time_duration.sum");
  fails_with("short_row.csv", ":3: error: expected 15 fields like the header, found 14");
  fails_with("raw_page.csv", ":1: error: a header without \"Metric Name\"");
  fails_with("no_header.csv", ":2: error: no ncu CSV header");
  REQUIRE_THROWS_WITH(rsim::load_ncu_csv(ncu_file("absent.csv")),
                      ncu_file("absent.csv") + ": error: cannot open the ncu CSV file");
}

TEST_CASE("kernels without FLOPs and bad --match values are input errors", "[measured]") {
  const auto roofs = rsim::test::preset_roofs("thor_t5000");
  const std::string file = ncu_file("tensor_only.csv");
  REQUIRE_THROWS_WITH(rsim::place_kernels(rsim::load_ncu_csv(file), roofs, nullptr, {}, file),
                      Catch::Matchers::StartsWith(file + ":2: error: kernel \"sm100_xmma_gemm"));
  const auto run = rsim::test::run_scenario("pi05_thor");
  const std::string kernels = ncu_file("thor_kernels.csv");
  const auto loaded = rsim::load_ncu_csv(kernels);
  REQUIRE_THROWS_WITH(
      rsim::place_kernels(loaded, run.roofs, &run, {{"gate", "gate_up_proj"}}, kernels),
      Catch::Matchers::Contains("names several ops"));
  REQUIRE_THROWS_WITH(
      rsim::place_kernels(loaded, run.roofs, &run, {{"zzz", "prefix/layer/q_proj"}}, kernels),
      Catch::Matchers::Contains("no kernel in"));
  // 1e300 B over 1 ps is 1e312 B/s: past a double (a fuzz finding printed inf as null).
  const std::string overflow = ncu_file("rate_overflow.csv");
  REQUIRE_THROWS_WITH(
      rsim::place_kernels(rsim::load_ncu_csv(overflow), roofs, nullptr, {}, overflow),
      Catch::Matchers::StartsWith(overflow + ":2: error: kernel \"rmsnorm") &&
          Catch::Matchers::Contains("not a finite rate"));
  CHECK(rsim::parse_kernel_match("gemm_0=prefix/layer/q_proj").op == "prefix/layer/q_proj");
  REQUIRE_THROWS_AS(rsim::parse_kernel_match("gemm_0"), rsim::InputError);
}

TEST_CASE("ncu units, n/a values and conflicting rows", "[measured]") {
  const std::string header =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
      "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
      "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  const auto row = [](const std::string& metric, const std::string& unit,
                      const std::string& value) {
    return "\"0\",\"1\",\"app\",\"host\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\","
           "\"0\",\"9.0\",\"Command line profiler metrics\",\"" +
           metric + "\",\"" + unit + "\",\"" + value + "\"\n";
  };
  std::istringstream scaled(header + row("dram__bytes_read.sum", "Kbyte", "1.5") +
                            row("dram__bytes_write.sum", "Gbyte", "0.002") +
                            row("gpu__time_duration.sum", "msecond", "0.25") +
                            row("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "inst", "10"));
  const auto kernels = rsim::parse_ncu_csv(scaled, "inline.csv");
  REQUIRE(kernels.size() == 1);
  // 1.5 Kbyte + 0.002 Gbyte = 1,500 + 2,000,000 bytes; 0.25 msecond = 250 µs; 10 DFMA = 20 FLOPs.
  CHECK(kernels[0].dram_bytes.si() == Approx(2001500.0));
  CHECK(kernels[0].duration.si() == Approx(250e-6));
  CHECK(kernels[0].sass_flops->si() == Approx(20.0));
  std::istringstream not_collected(header + row("gpu__time_duration.sum", "nsecond", "n/a"));
  REQUIRE_THROWS_WITH(rsim::parse_ncu_csv(not_collected, "inline.csv"),
                      "inline.csv:2: error: gpu__time_duration.sum was not collected (\"n/a\")");
  std::istringstream conflicting(header + row("gpu__time_duration.sum", "nsecond", "100") +
                                 row("gpu__time_duration.sum", "nsecond", "200"));
  REQUIRE_THROWS_WITH(rsim::parse_ncu_csv(conflicting, "inline.csv"),
                      Catch::Matchers::StartsWith("inline.csv:3: error: gpu__time_duration.sum of "
                                                  "kernel ID 0 differs from line 2"));
}
