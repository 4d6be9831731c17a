// SPDX-License-Identifier: MIT
#include "cli_fixture.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using rsim::test::Outcome;
using rsim::test::rsim_cli;

std::string source(const std::string& relative) {
  return rsim::test::source_path(relative).string();
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh directory for a test's output files.
std::filesystem::path scratch(const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("rsim_plot_test_" + name);
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

}  // namespace

TEST_CASE("rsim run --plot and --html write the chart and the report", "[cli][roofline]") {
  const auto dir = scratch("run");
  const auto svg = dir / "pi05.svg";
  const auto html = dir / "pi05.html";
  const Outcome outcome = rsim_cli(
      {"run", source("scenarios/pi05_thor.yaml"), "--plot", svg.string(), "--html", html.string()});
  REQUIRE(outcome.code == 0);
  CHECK(outcome.out.find("Stages") != std::string::npos);  // the report still prints
  CHECK(read(svg).rfind("<svg xmlns=", 0) == 0);
  CHECK(read(html).find("<table id=\"ops-table\"") != std::string::npos);
}

TEST_CASE("the HTML of a decode request shows TTFT and memory as tables", "[cli][html]") {
  // Issue 25: they were only in the collapsed text report. The decode table comes before it,
  // and its cells carry the JSON's figures (the same run).
  const auto dir = scratch("request");
  const auto html_path = dir / "request.html";
  const Outcome outcome = rsim_cli(
      {"run", source("scenarios/llama3_70b_request_h100.yaml"), "--html", html_path.string()});
  REQUIRE(outcome.code == 0);
  const std::string html = read(html_path);
  const auto table = html.find("<table id=\"decode-table\"");
  const auto ttft = html.find("time to first token (prefill of 4096 tokens)");
  REQUIRE(table != std::string::npos);
  CHECK(ttft != std::string::npos);
  CHECK(ttft < html.find("<details>"));
  CHECK(html.find("<table id=\"memory-table\"") < html.find("<details>"));
  const auto json = nlohmann::json::parse(
      rsim_cli({"run", source("scenarios/llama3_70b_request_h100.yaml"), "--format", "json"}).out);
  const double prefill = json["decode"]["request"]["prefill"]["t_lower_s"].get<double>();
  CHECK(html.find(fmt::format("data-v=\"{:.17g}\"", prefill), ttft) != std::string::npos);
}

TEST_CASE("the HTML has every table of the text report outside the collapsed text", "[cli][html]") {
  // Issue 25: training's pass table and MFU, the memory tiers, the tiles and the measured
  // references were only in the collapsed text. The text report's own writers render them as
  // HTML tables and paragraphs before the <details>, with every column (no terminal to fit).
  const auto dir = scratch("tables");
  const auto run_html = dir / "pi05.html";
  REQUIRE(rsim_cli({"run", source("scenarios/pi05_thor.yaml"), "--html", run_html.string()}).code ==
          0);
  const std::string html = read(run_html);
  const auto details = html.find("<details>");
  REQUIRE(details != std::string::npos);
  for (const char* expected : {"<th>smem bytes, time</th>", "<th>tile in smem</th>",
                               "<th>measured</th>", "<b>result</b>", "<th>crit. tokens</th>"}) {
    INFO(expected);
    const auto at = html.find(expected);
    CHECK(at < details);
  }
  CHECK(html.find("hidden to fit") == std::string::npos);
  const auto train_html = dir / "train.html";
  REQUIRE(rsim_cli(
              {"run", source("scenarios/llama3_8b_train_h100.yaml"), "--html", train_html.string()})
              .code == 0);
  const std::string train = read(train_html);
  for (const char* expected : {"Training step by pass", "<th>pass</th>", "MFU"}) {
    INFO(expected);
    CHECK(train.find(expected) < train.find("<details>"));
  }
}

TEST_CASE("plot to stdout (--plot -) draws a text chart instead of the report", "[cli][roofline]") {
  const Outcome run = rsim_cli({"run", source("scenarios/pi05_thor.yaml"), "--plot", "-"});
  REQUIRE(run.code == 0);
  CHECK(run.out.find("fp8 · int8  517 TFLOP/s") != std::string::npos);
  CHECK(run.out.find("Stages") == std::string::npos);
  const Outcome roofs = rsim_cli({"roofs", "thor_t5000", "--compute", "fp8", "--plot", "-"});
  REQUIRE(roofs.code == 0);
  CHECK(roofs.out.find("=====") != std::string::npos);  // the roof in play
  const Outcome matmul = rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "256", "--d", "8192",
                                   "--f", "8192", "--plot", "-"});
  REQUIRE(matmul.code == 0);
  CHECK(matmul.out.find("A matmul") != std::string::npos);
  const Outcome compare = rsim_cli(
      {"compare", source("scenarios/llama3_70b_tp8_h100.yaml"), "--plan", "fsdp", "--plot", "-"});
  REQUIRE(compare.code == 0);
  CHECK(compare.out.find("plan fsdp (fsdp ×8)") != std::string::npos);
  CHECK(compare.out.find("| lower bound") != std::string::npos);
}

TEST_CASE("rsim compare and whatif write bars and an HTML report", "[cli][bars]") {
  const auto dir = scratch("compare");
  const Outcome compare =
      rsim_cli({"compare", source("scenarios/llama3_70b_tp8_h100.yaml"), "--plan", "fsdp", "--plot",
                (dir / "bars.svg").string(), "--html", (dir / "plans.html").string()});
  REQUIRE(compare.code == 0);
  CHECK(read(dir / "bars.svg").find("ΣT_net") != std::string::npos);
  CHECK(read(dir / "plans.html").find("<table id=\"runs-table\"") != std::string::npos);
  const Outcome whatif = rsim_cli(
      {"whatif", source("scenarios/pi05_thor.yaml"), "--html", (dir / "whatif.html").string()});
  REQUIRE(whatif.code == 0);
  CHECK(read(dir / "whatif.html").find("nvfp4") != std::string::npos);
}

TEST_CASE("rsim run --measured adds the kernels to the report and the JSON", "[cli][measured]") {
  const Outcome outcome = rsim_cli({"run", source("scenarios/pi05_thor.yaml"), "--measured",
                                    source("tests/data/ncu/thor_kernels.csv"), "--match",
                                    "gate_up=prefix/layer/gate_up_proj", "--format", "json"});
  REQUIRE(outcome.code == 0);
  const auto json = nlohmann::json::parse(outcome.out);
  REQUIRE(json["measured"].size() == 3);
  // 68.25 MB in 500 µs = 136.5 GB/s, half of Thor's 273 GB/s.
  CHECK(json["measured"][0]["dram_fraction"].get<double>() == Approx(0.5));
  const Outcome roofs =
      rsim_cli({"roofs", "thor_t5000", "--measured", source("tests/data/ncu/thor_kernels.csv")});
  REQUIRE(roofs.code == 0);
  CHECK(roofs.out.find("rmsnorm_kernel<float, 2048>") != std::string::npos);
}

TEST_CASE("plot and measured-kernel input errors exit 2 with a message", "[cli][measured]") {
  const std::string pi05 = source("scenarios/pi05_thor.yaml");
  const Outcome bad_csv =
      rsim_cli({"roofs", "thor_t5000", "--measured", source("tests/data/ncu/bad_unit.csv")});
  CHECK(bad_csv.code == 2);
  CHECK(bad_csv.err.find("bad_unit.csv:5: error: gpu__time_duration.sum: unknown unit") !=
        std::string::npos);
  const Outcome match_alone = rsim_cli({"run", pi05, "--match", "gemm=q_proj"});
  CHECK(match_alone.code == 2);
  CHECK(match_alone.err.find("--match needs --measured") != std::string::npos);
  const Outcome path = rsim_cli({"roofs", "thor_t5000", "--compute", "fp64"});
  CHECK(path.code == 2);
  CHECK(path.err.find("--compute fp64: no such compute path") != std::string::npos);
  const Outcome unwritable = rsim_cli({"run", pi05, "--plot", "/nonexistent-dir/chart.svg"});
  CHECK(unwritable.code == 2);
  CHECK(unwritable.err.find("--plot /nonexistent-dir/chart.svg: cannot write the file") !=
        std::string::npos);
}
