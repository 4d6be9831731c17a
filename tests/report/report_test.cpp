// SPDX-License-Identifier: MIT
#include "run_fixture.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/format.hpp"
#include "sim/report/json.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

TEST_CASE("run JSON: totals equal the sum of its ops", "[report]") {
  const auto result = rsim::test::run_scenario("pi05_thor");
  const auto json = rsim::run_to_json(result);
  double flops = 0.0;
  double t_lower = 0.0;
  double t_upper = 0.0;
  double t_mem = 0.0;
  int fused = 0;
  for (const auto& op : json["ops"]) {
    for (const char* key : {"name", "stage", "flops", "bytes", "t_math_s", "t_mem_s", "bound"}) {
      CHECK(op.contains(key));
    }
    flops += op["flops"].get<double>();
    t_lower += op["t_lower_s"].get<double>();
    t_upper += op["t_upper_s"].get<double>();
    t_mem += op["t_mem_s"].get<double>();
    // Issue 25: one instance's figures beside the × count ones; a fused op moves no bytes.
    const double count = op["count"].get<double>();
    CHECK(op["per_instance"]["t_lower_s"].get<double>() * count ==
          Approx(op["t_lower_s"].get<double>()));
    CHECK(op["per_instance"]["flops"].get<double>() * count == Approx(op["flops"].get<double>()));
    if (op["fused"].get<bool>()) {
      CHECK(op["bytes"].get<double>() == 0.0);
      ++fused;
    }
  }
  CHECK(fused > 0);  // pi05_thor fuses activation, residual and rope into its matmuls
  const auto& totals = json["totals"];
  CHECK(totals["flops"].get<double>() == Approx(flops));
  CHECK(totals["t_lower_s"].get<double>() == Approx(t_lower));
  CHECK(totals["t_upper_s"].get<double>() == Approx(t_upper));
  CHECK(totals["t_mem_s"].get<double>() == Approx(t_mem));
  CHECK(json["stages"].size() == 3);
  CHECK(json["stages"][2]["steps"] == 10);
  REQUIRE(json["references"].size() == 1);
  CHECK(json["references"][0]["measured_s"].get<double>() == Approx(0.063));
}

TEST_CASE("run CSV: a header, one row per op, a row per stage and the total", "[report]") {
  const auto result = rsim::test::run_scenario("llama3_8b_h100");
  std::ostringstream out;
  rsim::write_run_csv(out, result);
  std::istringstream lines(out.str());
  std::string header;
  std::getline(lines, header);
  CHECK(header.rfind("name,stage,block,kind,count,compute_path,flops,bytes,", 0) == 0);
  std::size_t rows = 0;
  for (std::string line; std::getline(lines, line);) {
    ++rows;
  }
  // Llama 3 8B is one stage: its row and the total follow the ops.
  CHECK(rows == result.graph.size() + 2);
}

TEST_CASE("run text: stages, totals and the measured reference side by side", "[report]") {
  const auto result = rsim::test::run_scenario("pi05_thor");
  std::ostringstream out;
  rsim::write_run_text(out, result);
  const std::string text = out.str();
  for (const char* expected : {"vision", "prefix", "action", "63 ms", "ridge 1894 FLOP/B",
                               "lower / measured", "expected / measured", "total"}) {
    CHECK_THAT(text, Catch::Contains(expected));
  }
  // The reference row carries the prefix's expected time beside its bounds, as JSON does.
  for (const auto& stage : result.bounds.stages) {
    if (stage.stage == "prefix") {
      CHECK_THAT(text, Catch::Contains(rsim::seconds(stage.totals.t_expected)));
    }
  }
}

TEST_CASE("run text: a training step names its loss's kernels", "[report]") {
  const auto text_of = [](std::vector<std::pair<std::string, std::string>> sets) {
    std::ostringstream out;
    rsim::write_run_text(out, rsim::test::run_scenario("llama3_8b_train_h100", std::move(sets)));
    return out.str();
  };
  CHECK_THAT(text_of({{"fusion.loss", "megatron"}}), Catch::Contains("; loss: megatron"));
  CHECK_THAT(text_of({}), Catch::Contains("; loss: single_pass"));
  // Fused into the LM head it runs no kernels of its own; inference has no loss.
  CHECK_THAT(text_of({{"fusion.into_matmul", "[loss]"}}), !Catch::Contains("; loss:"));
  std::ostringstream inference;
  rsim::write_run_text(inference, rsim::test::run_scenario("llama3_8b_h100"));
  CHECK_THAT(inference.str(), !Catch::Contains("; loss:"));
}

TEST_CASE("text tables align columns by display width", "[report]") {
  rsim::TextTable table({{"name", rsim::TextTable::Align::left}, {"time"}});
  table.add_row({"a", "2 µs"});
  table.add_row({"long name", "63 ms"});
  std::ostringstream out;
  table.print(out);
  // "time" column is 5 wide ("63 ms"); "2 µs" is 4 code points, so one space pads it.
  CHECK(out.str() ==
        "name        time\n"
        "────────────────\n"
        "a           2 µs\n"
        "long name  63 ms\n");
}

TEST_CASE("roofs JSON lists every ridge with SI numbers", "[report]") {
  const auto json = rsim::roofs_to_json(rsim::test::preset_roofs("thor_t5000"));
  CHECK(json["ridges"].size() == 14);  // 7 paths × (dram, smem)
  bool found = false;
  for (const auto& ridge : json["ridges"]) {
    if (ridge["path"] == "fp8" && ridge["tier"] == "dram") {
      found = true;
      CHECK(ridge["ridge_flops_per_byte"].get<double>() == Approx(517e12 / 273e9));
    }
  }
  CHECK(found);
}
