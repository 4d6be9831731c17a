// SPDX-License-Identifier: MIT
// Issue 23: each finding's reproducer as input, rsim's exact message as the expectation. The
// inputs under tests/fuzz/ are also the fuzz targets' regression corpus (fuzz/CMakeLists.txt).
#include "cli_fixture.hpp"
#include "sim/report/json.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace {

using rsim::test::rsim_cli;

std::string source(const std::string& relative) {
  return rsim::test::source_path(relative).string();
}

struct Case {
  std::vector<std::string> args;
  std::string expected;
};

void check_input_errors(const std::vector<Case>& cases) {
  for (const Case& test : cases) {
    INFO(test.args.front() << " " << (test.args.size() > 1 ? test.args[1] : ""));
    const auto outcome = rsim_cli(test.args);
    CHECK(outcome.code == 2);
    CHECK_THAT(outcome.err, Catch::StartsWith("rsim: "));
    CHECK_THAT(outcome.err, Catch::Contains(test.expected));
  }
}

}  // namespace

TEST_CASE("hardware figures out of range or order are refused with their key", "[hardening]") {
  check_input_errors({
      // #6: smem listed before l2 was costed as if l2 held smem's tiles.
      {{"roofs", source("tests/fuzz/hardware/tiers_out_of_order.yaml")},
       "tiers_out_of_order.yaml:26:9: error: 'memory.l2' after 'smem': list the tiers outermost "
       "first (dram or hbm, l2, smem or vmem, registers)"},
      // #6: a capacity of 1e-5 B fitted no tile.
      {{"roofs", source("tests/fuzz/hardware/capacity_below_a_byte.yaml")},
       "capacity_below_a_byte.yaml:24:20: error: 'memory.l2.capacity': a capacity of 1e-05 B is "
       "less than one byte"},
      // #3: a denormal peak in the file, as --peak gives it.
      {{"roofs", source("tests/fuzz/hardware/denormal_peak.yaml")},
       "compute path 'bf16' at 4.94066e-324 FLOP/s: expected a finite roof of at least 1 FLOP/s"},
  });
}

TEST_CASE("sizes past 2^63 are refused at the key that gives them", "[hardening]") {
  check_input_errors({
      // #2: two mesh axes of 2^32 wrapped the device count to 0 ("inf per device").
      {{"run", source("scenarios/llama3_70b_tp8_h100.yaml"), "--set",
        "plan={mesh: {data: 4294967296 over ib, model: 4294967296 over ib}}"},
       "'plan.mesh': the mesh axes multiply to more than 16777216 devices"},
      // #2: an image of 2^62 × 2^62 patches gave negative bytes and times.
      {{"run", source("scenarios/llama3_8b_h100.yaml"), "--set",
        "model=" + source("tests/fuzz/model/vision_overflow.yaml")},
       "'vision.image_size': image_size / patch_size = 4611686018427387904 patches per side; at "
       "most 4096"},
      // #2: import-hf wrote intermediate_size: 0 (4 × 2^62 wrapped).
      {{"import-hf", source("tests/fuzz/hf_config/mlp_width_overflow.json")},
       "mlp_width_overflow.json:1:24: error: 'n_embd': 4 × hidden_size 4611686018427387904 (the "
       "MLP width of gpt2) overflows 2^63"},
      // #7: found when the graph is costed, now at the scenario's workload: key (line 5, col 11
      // of the shipped file: "workload: {phase: …").
      {{"run", source("scenarios/llama3_8b_h100.yaml"), "--set", "workload.batch=1000000000000"},
       "llama3_8b_h100.yaml:5:11: error: 'workload': tensor gate_up_proj.out [batch=1000000000000, "
       "seq=2048, gate_up=2, mlp=14336] has more than 2^63 elements"},
  });
}

TEST_CASE("inputs that were exit 1 are exit 2 with file and line", "[hardening]") {
  check_input_errors({
      // #4: nlohmann's out_of_range.406, with no file or line.
      {{"import-hf", source("tests/fuzz/hf_config/beyond_double.json")},
       "beyond_double.json:1:67: error: invalid JSON: the number 1e999 is beyond a double's "
       "range"},
      // #4: an internal error ("a stage without inputs") when the graph was built.
      {{"run", source("tests/data/invalid/scenario_composite_text_first.yaml")},
       "composite_text_first.yaml:6:5: error: 'stages[0]': the first stage 'prefix' has no input"},
      // #7: blamed on the scenario's model: key; the composite's component: line holds it.
      {{"run", source("tests/data/invalid/scenario_composite_missing_component.yaml")},
       "composite_missing_component.yaml:6:16: error: 'stages[0].component': no models preset or "
       "file 'gemma_999m'; did you mean 'gemma_300m'?"},
      // #7: found when the graph is sharded, now at the file's plan: key.
      {{"run", source("tests/data/invalid/scenario_plan_not_dividing.yaml")},
       "scenario_plan_not_dividing.yaml:8:7: error: 'plan': plan 'megatron_tp': axis 'heads' of "
       "size 32 (q_proj.weight of decoder/layer/q_proj) does not divide over mesh axis 'model' "
       "(3)"},
      // #1: 1e308 Tbyte printed "inf B/s" and "inf %".
      {{"roofs", "h100_sxm", "--measured", source("tests/fuzz/ncu_csv/bytes_beyond_double.csv")},
       "bytes_beyond_double.csv:6: error: dram__bytes_read.sum: 1e308 Tbyte is beyond a double's "
       "range in SI units"},
  });
}

TEST_CASE("options get rsim's own messages with the candidates", "[hardening]") {
  check_input_errors({
      // #7: CLI11's "Value 0 not in range 0.000000 to 1797693…" without the rsim: prefix.
      {{"search", source("scenarios/llama3_8b_h100.yaml"), "--devices", "0"},
       "rsim: --devices: expected a number > 0, got '0' (see rsim search --help)"},
      // #7: answered with "missing required key 'plan.mesh'".
      {{"run", source("scenarios/llama3_8b_h100.yaml"), "--plan", "bogus"},
       "--plan: no plan preset 'bogus' (presets: single, data_parallel, megatron_tp,"},
      {{"run", source("scenarios/llama3_8b_h100.yaml"), "--plan", "megatron_tpp"},
       "did you mean 'megatron_tp'?"},
      // #6: a tier that does not exist, on an axis of one device, passed silently.
      {{"run", source("scenarios/llama3_70b_tp8_h100.yaml"), "--set",
        "plan.mesh.model=1 over bogus"},
       "NVIDIA H100 SXM5 80GB has no network tier 'bogus' (tiers: nvlink, ib)"},
      // #6: a rule for an axis no tensor has ("head") sharded nothing, silently.
      {{"run", source("scenarios/llama3_70b_tp8_h100.yaml"), "--set",
        "plan={preset: megatron_tp, mesh: {model: 8 over nvlink}, rules: {head: model}}"},
       "'head' is no logical axis (axes: batch, seq, embed, heads, kv_heads, mlp, vocab, "
       "experts, layers)"},
  });
}

TEST_CASE("a sweep's batch axis keeps the training checks of the file", "[hardening]") {
  // #6: the batch line skipped batch % microbatches (llama3_8b_train_h100: 8 microbatches).
  const auto outcome = rsim_cli({"sweep", source("scenarios/llama3_8b_train_h100.yaml"), "--over",
                                 "workload.batch=7", "--format", "csv"});
  CHECK(outcome.code == 2);
  CHECK_THAT(outcome.out,
             Catch::Contains("workload.batch: 7 sequences do not split into 8 equal microbatches"));
}

TEST_CASE("the JSON writer finds every inf and NaN and names its key", "[hardening][json]") {
  nlohmann::ordered_json document{
      {"name", "x"}, {"t_s", 1.0}, {"ops", nlohmann::ordered_json::array()}};
  CHECK_FALSE(rsim::find_non_finite(document));
  document["ops"].push_back({{"t_math_s", 2.0}});
  document["ops"].push_back({{"t_math_s", std::numeric_limits<double>::quiet_NaN()}});
  CHECK(rsim::find_non_finite(document) == "ops[1].t_math_s");
  document["ops"][1]["t_math_s"] = 3.0;
  document["grid"] = {1.0, std::numeric_limits<double>::infinity()};
  CHECK(rsim::find_non_finite(document) == "grid[1]");
}
