// SPDX-License-Identifier: MIT
#include "cli_fixture.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

namespace {

using rsim::test::Outcome;
using rsim::test::rsim_cli;

std::string scenario(const std::string& name) {
  return rsim::test::source_path("scenarios/" + name + ".yaml").string();
}

std::string invalid(const std::string& name) {
  return rsim::test::source_path("tests/data/invalid/" + name).string();
}

}  // namespace

TEST_CASE("rsim run scenarios/pi05_thor.yaml end to end", "[cli][pi05]") {
  const auto table = rsim_cli({"run", scenario("pi05_thor")});
  CHECK(table.code == 0);
  CHECK(table.err.empty());
  CHECK_THAT(table.out, Catch::Contains("prefix"));

  const auto json_run = rsim_cli({"run", scenario("pi05_thor"), "--format", "json"});
  REQUIRE(json_run.code == 0);
  const auto json = nlohmann::json::parse(json_run.out);
  for (const char* key : {"flops", "t_math_s", "t_mem_s", "t_lower_s", "t_upper_s"}) {
    CHECK(json["totals"].contains(key));
  }
  CHECK(json["totals"]["t_lower_s"].get<double>() <= json["totals"]["t_upper_s"].get<double>());
  CHECK(json["mode"] == "MAXN");
}

TEST_CASE("the options --mode, --peak and --bandwidth change the roofs", "[cli]") {
  const auto base =
      nlohmann::json::parse(rsim_cli({"run", scenario("pi05_thor"), "--format", "json"}).out);
  const auto slow_dram = nlohmann::json::parse(
      rsim_cli({"run", scenario("pi05_thor"), "--format", "json", "--bandwidth", "dram=136.5 GB/s"})
          .out);
  // Half the bandwidth doubles every T_mem: ΣT_mem(136.5 GB/s) = 2 × ΣT_mem(273 GB/s).
  CHECK(slow_dram["totals"]["t_mem_s"].get<double>() ==
        Approx(2 * base["totals"]["t_mem_s"].get<double>()));
  const auto low_power = nlohmann::json::parse(
      rsim_cli({"run", scenario("pi05_thor"), "--format", "json", "--mode", "120W"}).out);
  // FP8 517 → 455 TFLOP/s: ΣT_math on the fp8 path grows by 517 / 455.
  CHECK(low_power["mode"] == "120W");
  CHECK(low_power["totals"]["t_math_s"].get<double>() >
        base["totals"]["t_math_s"].get<double>() * 1.13);
  const auto matmul =
      nlohmann::json::parse(rsim_cli({"matmul", "--hardware", "h100_sxm", "--b", "1", "--d", "4096",
                                      "--f", "4096", "--peak", "bf16=1e15", "--format", "json"})
                                .out);
  CHECK(matmul["critical_intensity"].get<double>() == Approx(1e15 / 3.35e12));
}

TEST_CASE("rsim roofs prints peaks, bandwidths and ridges", "[cli]") {
  const auto outcome = rsim_cli({"roofs", "thor_t5000", "--mode", "120W"});
  REQUIRE(outcome.code == 0);
  CHECK_THAT(outcome.out, Catch::Contains("455 TFLOP/s"));
  CHECK_THAT(outcome.out, Catch::Contains("1667"));  // 455e12 / 273e9
  const auto csv = rsim_cli({"roofs", "tpu_v5e", "--format", "csv"});
  CHECK(csv.out.rfind(
            "path,unit,peak_flops_per_s,tier,kind,bandwidth_bytes_per_s,ridge_flops_per_byte\n",
            0) == 0);
}

TEST_CASE("the --help option works on every command and exits 0", "[cli]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"run", "--help"}, {"roofs", "--help"}, {"matmul", "--help"}}) {
    const auto outcome = rsim_cli(args);
    CHECK(outcome.code == 0);
    CHECK_THAT(outcome.out, Catch::Contains("Usage"));
  }
}

TEST_CASE("rsim run puts the answer first", "[cli]") {
  // Issue 25: the bound, the expected time, the roof and the memory verdict in the first lines;
  // JSON says its layout's version.
  const auto text = rsim_cli({"run", scenario("pi05_thor")});
  REQUIRE(text.code == 0);
  const auto json =
      nlohmann::json::parse(rsim_cli({"run", scenario("pi05_thor"), "--format", "json"}).out);
  CHECK(json["schema_version"] == 1);
  std::istringstream lines(text.out);
  // The title (wrapped where the scenario's path is long), a blank line, then the headline.
  std::string line;
  while (std::getline(lines, line) && !line.empty()) {
  }
  std::string headline;
  std::getline(lines, headline);
  CHECK_THAT(headline, Catch::StartsWith("  result     ") &&
                           Catch::Contains(" (lower … upper bound), expected ") &&
                           Catch::Contains("; bound by memory (dram); fits ("));
  const auto decode = rsim_cli({"run", scenario("llama3_8b_h100"), "--set",
                                "workload={phase: decode, batch: 8, context: 4096}"});
  CHECK_THAT(decode.out, Catch::Contains(" tokens/s expected\n"));
  // The file's name says H100 and BF16; the title says what the command line changed.
  const auto changed = rsim_cli({"run", scenario("llama3_8b_h100"), "--set", "hardware=h200_sxm",
                                 "--precision", "fp8", "--wide"});
  CHECK_THAT(changed.out, Catch::StartsWith("Llama 3 8B prefill on H100 SXM (BF16) (") &&
                              Catch::Contains("llama3_8b_h100.yaml; changed: hardware=h200_sxm, "
                                              "precision=fp8)\n"));
  const auto whatif =
      rsim_cli({"whatif", scenario("llama3_8b_h100"), "--set", "hardware=h200_sxm", "--wide"});
  // --wide: the title holds the scenario's absolute path, so at 120 columns where it wraps
  // depends on where the checkout lies.
  CHECK_THAT(whatif.out, Catch::Contains("changed: hardware=h200_sxm"));
}

TEST_CASE("the run CSV ends with a row per stage and the total", "[cli]") {
  // Issue 25: the stage and total rows are the sums of the op rows above them.
  const auto outcome = rsim_cli({"run", scenario("pi05_thor"), "--format", "csv"});
  REQUIRE(outcome.code == 0);
  std::istringstream lines(outcome.out);
  std::string line;
  std::getline(lines, line);  // the header: name,stage,block,kind,count,compute_path,flops,...
  const auto field = [](const std::string& row, std::size_t index) {
    std::istringstream cells(row);
    std::string cell;
    for (std::size_t at = 0; at <= index; ++at) {
      std::getline(cells, cell, ',');
    }
    return cell;
  };
  double op_flops = 0.0;
  double stage_flops = 0.0;
  double total_flops = -1.0;
  std::size_t stages = 0;
  while (std::getline(lines, line)) {
    const std::string kind = field(line, 3);
    const double flops = std::stod(field(line, 6));
    if (kind == "stage") {
      stage_flops += flops;
      ++stages;
    } else if (kind == "total") {
      total_flops = flops;
    } else {
      op_flops += flops;
    }
  }
  CHECK(stages == 3);  // vision, prefix, action
  CHECK(total_flops == Approx(op_flops).epsilon(1e-12));
  CHECK(stage_flops == Approx(total_flops).epsilon(1e-12));
}

TEST_CASE("rsim --version prints the project's version", "[cli]") {
  // CMakeLists.txt: project(rsim VERSION 0.1.0).
  const auto outcome = rsim_cli({"--version"});
  CHECK(outcome.code == 0);
  CHECK(outcome.out == "rsim 0.1.0\n");
}

TEST_CASE("bad input exits 2 with a diagnostic and never a crash", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases{
      {{"run", invalid("scenario_unknown_key.yaml")},
       invalid("scenario_unknown_key.yaml") + ":7:1: error: unknown key 'colour'"},
      {{"run", invalid("scenario_precision_missing.yaml")},
       invalid("scenario_precision_missing.yaml") + ":5:56: error: 'precision.compute'"},
      {{"run", invalid("scenario_bad_model.yaml")},
       invalid("model_bad_heads.yaml") + ":7:22: error:"},
      {{"run", "no/such/scenario.yaml"}, "no/such/scenario.yaml: error: cannot open file"},
      {{"run", scenario("pi05_thor"), "--mode", "60W"}, "no mode '60W'"},
      {{"run", scenario("pi05_thor"), "--peak", "fp8=fast"}, "--peak fp8=fast: expected"},
      {{"run", scenario("pi05_thor"), "--peak", "fp64=1e15"}, "no compute path 'fp64'"},
      {{"run", scenario("pi05_thor"), "--bandwidth", "dram=128 GB"}, "--bandwidth dram=128 GB"},
      {{"run", scenario("pi05_thor"), "--set", "workload.batch=0"},
       "--set workload.batch: error: 'workload.batch': expected a whole number ≥ 1"},
      {{"run", scenario("pi05_thor"), "--explain", "no_such_op"}, "--explain no_such_op"},
      // Issue 23 #6: a misspelt top-level key through --set ran the file's value silently.
      {{"run", scenario("pi05_thor"), "--set", "preicsion=fp8"},
       "--set preicsion: error: unknown key 'preicsion' (expected one of: name, hardware"},
      {{"run", scenario("llama3_8b_h100"), "--set", "workload.batch=4000000000000000"},
       "has more than 2^63 elements"},
      {{"roofs", "no_such_chip"}, "no hardware preset or file 'no_such_chip'"},
      // Issue 23 #4: each of these was exit 1 (an internal error, an exception, a runaway).
      {{"run", scenario("llama3_70b_tp8_h100"), "--set", "plan.mesh.model=8 over "},
       "'' names no network tier after 'over' (tiers: nvlink, ib)"},
      {{"run", scenario("llama3_70b_tp8_h100"), "--set", "plan.mesh.model=8 over nvlink+"},
       "'nvlink+' names no network tier after 'over'"},
      {{"collective", "--hardware", "h100_sxm", "--op", "all-gather", "--bytes", "1e6", "--devices",
        "1", "--network", "nvlink", "--axes", "1000000000"},
       "--axes 1000000000: expected 1 to 8"},
      // Issue 23 #1 and #3: a denormal peak put ±inf into the chart's axis (gigabytes, exit 1)
      // and inf / NaN into every time.
      {{"roofs", "h100_sxm", "--peak", "bf16=5e-324", "--plot", "-"},
       "compute path 'bf16' at 4.94066e-324 FLOP/s: expected a finite roof of at least 1 FLOP/s"},
      {{"run", scenario("pi05_thor"), "--bandwidth", "dram=1e-5"},
       "memory tier 'dram' at 1e-05 B/s: expected a finite roof of at least 1 B/s"},
      {{"matmul", "--hardware", "tpu_v5e", "--b", "1", "--d", "8", "--f", "8", "--dtype", "fp8"},
       "compute path 'fp8'"},
      {{"matmul", "--hardware", "tpu_v5e", "--b", "1", "--d", "8", "--f", "8", "--dtype", "fp9"},
       "--dtype fp9: expected one of"},
      {{"matmul", "--hardware", "tpu_v5e", "--b", "0", "--d", "8", "--f", "8"}, "--b"},
      {{"run", scenario("pi05_thor"), "--format", "xml"}, "--format"},
      {{"matmul", "--hardware", "thor_t5000", "--b", "968", "--d", "2048", "--f", "16384",
        "--dtype", "fp8", "--tile", "512,512,128"},
       "--tile: tile 512×512×128 (bm×bn×bk) for smem needs"},
      {{"matmul", "--hardware", "thor_t5000", "--b", "8", "--d", "8", "--f", "8", "--tile",
        "dram=64,64,64"},
       "no on-chip tier 'dram'"},
      {{"matmul", "--hardware", "thor_t5000", "--b", "8", "--d", "8", "--f", "8", "--tile",
        "64,64"},
       "--tile '64,64': expected three positive integers"},
      {{"search", scenario("llama3_70b_tp8_h100"), "--devices", "16", "--rank-by", "fastest"},
       "--rank-by fastest: expected lower, expected or upper"},
      {{"sweep", scenario("llama3_70b_tp8_h100"), "--rank-by", "best"},
       "--rank-by best: expected lower, expected or upper"},
      {{"calibrate", "no/such/measurements.csv"}, "no/such/measurements.csv: error: cannot open"},
      {{"run", scenario("pi05_thor"), "--calibration", "no/such/overlay.yaml"},
       "no/such/overlay.yaml"},
      // Issue 23 #6: a sweep of nothing but invalid points exited 0.
      {{"sweep", scenario("llama3_70b_tp8_h100"), "--over", "precision=bogus,worse"},
       "every one of the 2 points is invalid"},
      // Issue 23 #4: unbounded input (an endless file, an alias bomb) and deep nesting.
      {{"run", "/dev/zero"}, "/dev/zero: error: larger than 16 MiB"},
      {{"run", invalid("billion_laughs.yaml")},
       "more than 1000000 values once aliases are expanded"},
      {{"run", invalid("deep_nesting.yaml")}, "nested more than 64 levels deep"},
      {{"frobnicate"},
       "unknown command 'frobnicate' (commands: run, whatif, compare, sweep, search, threshold, "
       "roofs, matmul, collective, import-hf, validate, calibrate, list, merge)"},
  };
  for (const Case& test : cases) {
    INFO(test.args.front() << " " << (test.args.size() > 1 ? test.args[1] : ""));
    const auto outcome = rsim_cli(test.args);
    CHECK(outcome.code == 2);
    CHECK_THAT(outcome.err, Catch::Contains(test.expected));
  }
}

TEST_CASE("rsim whatif prints every variant beside the baseline", "[cli][whatif]") {
  const auto table = rsim_cli({"whatif", scenario("pi05_thor")});
  REQUIRE(table.code == 0);
  for (const char* name :
       {"baseline", "bf16", "int8_weights", "nvfp4_weights", "nvfp4", "fp8_120W", "prefix/mlp"}) {
    CHECK_THAT(table.out, Catch::Contains(name));
  }
  const auto one = nlohmann::json::parse(
      rsim_cli({"whatif", scenario("pi05_thor"), "--variant", "bf16", "--format", "json"}).out);
  REQUIRE(one["variants"].size() == 2);  // the baseline and the one asked for
  CHECK(one["variants"][1]["variant"] == "bf16");
  const auto csv = rsim_cli({"whatif", scenario("quantization_v5e"), "--format", "csv"});
  CHECK(csv.code == 0);
  CHECK(csv.out.rfind("variant,hardware,mode,plan,devices,batch,policy,", 0) == 0);
}

TEST_CASE("rsim run takes --variant and --precision", "[cli][whatif]") {
  const auto variant = nlohmann::json::parse(
      rsim_cli({"run", scenario("pi05_thor"), "--variant", "nvfp4", "--format", "json"}).out);
  CHECK(variant["variant"] == "nvfp4");
  CHECK(variant["precision"]["compute"] == "fp4");
  const auto preset =
      nlohmann::json::parse(rsim_cli({"run", scenario("llama3_8b_h100"), "--precision",
                                      "int8_weights", "--format", "json"})
                                .out);
  CHECK(preset["precision"]["policy"] == "int8_weights");
  CHECK(preset["precision"]["weights"] == "int8");
  const auto lacking = rsim_cli({"run", scenario("gemma_2b_v5e"), "--precision", "nvfp4"});
  CHECK(lacking.code == 2);
  CHECK_THAT(lacking.err, Catch::Contains("Google TPU v5e has no compute path 'fp4'"));
  const auto unknown = rsim_cli({"whatif", scenario("pi05_thor"), "--variant", "fp2"});
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("no variant 'fp2'"));
}

TEST_CASE("rsim collective and the sharded rsim matmul", "[cli][collectives]") {
  const auto gather = nlohmann::json::parse(
      rsim_cli({"collective", "--hardware", "tpu_v5e", "--op", "all-gather", "--bytes", "33554432",
                "--devices", "4", "--network", "ici", "--format", "json"})
          .out);
  // An axis of 4 has no wraparound on v5e: 3 hops × 8,388,608 B / 4.5e10 = 559.2 µs.
  CHECK(gather["wraparound"] == false);
  CHECK(gather["hops"] == 3);
  CHECK(gather["t_s"].get<double>() == Approx(3 * 8'388'608.0 / 4.5e10));
  CHECK(gather["latency_bound"] == false);
  // A full 16-chip axis wraps around: V / W_bidi = 33,554,432 / 9e10.
  const auto full = nlohmann::json::parse(
      rsim_cli({"collective", "--hardware", "tpu_v5e", "--op", "all-gather", "--bytes", "32 MiB",
                "--devices", "16", "--network", "ici", "--format", "json"})
          .out);
  CHECK(full["wraparound"] == true);
  CHECK(full["t_s"].get<double>() == Approx(33'554'432.0 / 9e10));
  // A hierarchy, as a mesh axis takes it: 16 H100s over nvlink (8 per node, 450 GB/s) then ib
  // (2 nodes; 8 NICs of 400 Gb/s = 400 GB/s per node). T = V · max(7 / (8 · 450e9),
  // 1 / (2 · 400e9)) = 1e9 · 1.944e-12 = 1.944 ms.
  const auto nodes =
      rsim_cli({"collective", "--hardware", "h100_sxm", "--op", "all-gather", "--bytes", "1 GB",
                "--devices", "16", "--network", "nvlink+ib", "--format", "json"});
  REQUIRE(nodes.code == 0);
  CHECK(nlohmann::json::parse(nodes.out)["t_bandwidth_s"].get<double>() ==
        Approx(1e9 * 7.0 / (8.0 * 450e9)));
  const auto unknown = rsim_cli({"collective", "--hardware", "h100_sxm", "--op", "all-gather",
                                 "--bytes", "1 GB", "--devices", "16", "--network", "nvlink+eth"});
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("no network tier 'eth' (tiers: nvlink, ib)"));
  const auto sharded = nlohmann::json::parse(
      rsim_cli({"matmul", "--hardware", "tpu_v5e", "--b", "512", "--d", "8192", "--f", "8192",
                "--devices", "2", "--shard", "d", "--network", "ici", "--format", "json"})
          .out);
  // all-reduce of the bf16 [512, 8192] partial sums over 2 chips: 2BF / 4.5e10
  CHECK(sharded["t_net_s"].get<double>() == Approx(2.0 * 512 * 8192 / 4.5e10));
  CHECK(sharded["collective"]["kind"] == "all-reduce");
  CHECK(sharded["critical_d"].get<double>() == Approx(2 * 1.97e14 / 4.5e10));
}

TEST_CASE("network input errors exit 2", "[cli][collectives]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"collective", "--hardware", "thor_t5000", "--op", "all-gather", "--bytes", "1e6",
        "--devices", "2", "--network", "nvlink"},
       "NVIDIA Jetson AGX Thor T5000 has no network tier 'nvlink' (tiers: none)"},
      {{"collective", "--hardware", "h100_sxm", "--op", "all-gather", "--bytes", "1e6", "--devices",
        "16", "--network", "nvlink"},
       "16 devices exceed the nvlink domain of 8 devices"},
      {{"collective", "--hardware", "h100_sxm", "--op", "broadcast", "--bytes", "1e6", "--devices",
        "8", "--network", "nvlink"},
       "--op broadcast: expected"},
      {{"collective", "--hardware", "tpu_v5e", "--op", "all-gather", "--bytes", "1e6", "--devices",
        "12", "--network", "ici", "--axes", "2"},
       "--devices 12 is not the size of 2 equal axes"},
      {{"matmul", "--hardware", "tpu_v5e", "--b", "8", "--d", "1000", "--f", "8", "--devices", "3",
        "--shard", "d", "--network", "ici"},
       "D = 1000 does not divide over 3 devices"},
      {{"matmul", "--hardware", "tpu_v5e", "--b", "8", "--d", "8", "--f", "8", "--devices", "2",
        "--shard", "d"},
       "--devices > 1 needs --network"},
  };
  for (const auto& [args, expected] : cases) {
    const auto outcome = rsim_cli(args);
    CHECK(outcome.code == 2);
    CHECK_THAT(outcome.err, Catch::Contains(expected));
  }
}

TEST_CASE("rsim compare puts plans side by side", "[cli][plan]") {
  const auto outcome = rsim_cli(
      {"compare", scenario("shard_d_vs_batch"), "--plan", "shard_batch", "--format", "json"});
  REQUIRE(outcome.code == 0);
  const auto json = nlohmann::json::parse(outcome.out);
  REQUIRE(json["variants"].size() == 2);
  CHECK(json["variants"][0]["plan"] == "shard_d");
  CHECK(json["variants"][0]["bound"] == "network");
  // How to Scale Your Model's threshold from the whole graph: every embed-contracting matmul
  // all-reduces partial sums that do not grow with D, so D* = 2 · 1.97e14 / 4.5e10 = 8755.6
  // (roofline chapter, jax-ml.github.io/scaling-book/roofline).
  CHECK(json["variants"][0]["critical_d"].get<double>() == Approx(2 * 1.97e14 / 4.5e10));
  CHECK(json["variants"][1]["critical_d"].is_null());
  CHECK(json["variants"][1]["plan"] == "shard_batch");
  CHECK(json["variants"][1]["t_net_s"].get<double>() == 0.0);
  const auto table = rsim_cli({"compare", scenario("llama3_70b_tp8_h100"), "--plan", "fsdp"});
  CHECK(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("fastest (lower bound) that fits in memory: baseline"));
  const auto bad = rsim_cli({"compare", scenario("pi05_thor"), "--plan", "megatron_tp"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("plan"));
}

TEST_CASE("rsim compare with no --plan sets every preset of the mesh beside the own plan",
          "[cli][plan]") {
  // shard_d_vs_batch: shard_d over mesh {model: 2 over ici}. The one-axis presets that mesh takes:
  // data_parallel (renamed onto 'model': the batch over 2), megatron_tp, sequence_parallel,
  // pipeline (Gemma 2B's 18 layers in two stages of 9) and fsdp; shard_batch shards as
  // data_parallel does (one row), expert_parallel needs experts, the others two or three axes.
  const auto outcome = rsim_cli({"compare", scenario("shard_d_vs_batch"), "--format", "json"});
  REQUIRE(outcome.code == 0);
  const auto json = nlohmann::json::parse(outcome.out);
  std::vector<std::string> plans;
  for (const auto& variant : json["variants"]) {
    plans.push_back(variant["plan"].get<std::string>());
  }
  CHECK(plans == std::vector<std::string>{"shard_d", "data_parallel", "megatron_tp",
                                          "sequence_parallel", "pipeline", "fsdp"});
  // Issue 25: both plans of the file show, each row named by every preset and plan-only variant
  // that makes it; megatron_tp and sequence_parallel cost the same here (seq_len 1: the
  // sequence axis has nothing to split) and are named as a tie.
  CHECK(json["variants"][0]["variant"] == "baseline = plan shard_d");
  CHECK(json["variants"][1]["variant"] == "plan data_parallel = plan shard_batch");
  const auto text = rsim_cli({"compare", scenario("shard_d_vs_batch")});
  CHECK_THAT(text.out, Catch::Contains("tie: plan megatron_tp, plan sequence_parallel"));
  // A scenario on one device has no mesh to try presets on.
  const auto single = rsim_cli({"compare", scenario("llama3_8b_h100")});
  CHECK(single.code == 2);
  CHECK_THAT(single.err, Catch::Contains("leaves no other preset on its mesh to compare"));
}

namespace {

// `rsim threshold ARGS --format json`, which must succeed.
nlohmann::json threshold_json(std::vector<std::string> args) {
  args.insert(args.begin(), "threshold");
  args.emplace_back("--format");
  args.emplace_back("json");
  const auto outcome = rsim_cli(args);
  REQUIRE(outcome.code == 0);
  return nlohmann::json::parse(outcome.out);
}

}  // namespace

TEST_CASE("rsim threshold stops where the memory runs out and at no traffic", "[cli][thresholds]") {
  // Llama 3 8B decoding after 4096 tokens on one 80 GB H100 (bf16). Weights 2 · 8,030,261,248 =
  // 16,060,522,496 B; KV cache per sequence 32 layers · K,V · 8 heads · 128 · 2 B · 4097 tokens =
  // 536,997,888 B. (80e9 − 16,060,522,496) / 536,997,888 = 119.07: 119 sequences fit with
  // 36.7 MB to spare for the largest op's activations (the LM head's 119 · 128256 · 2 B =
  // 30.5 MB of logits), 120 do not. The matmuls meet the ridge only at 327 (README): memory
  // first.
  const auto decode = "workload={phase: decode, batch: 1, context: 4096}";
  const auto batch = threshold_json({scenario("llama3_8b_h100"), "--set", decode});
  CHECK(batch["value"].is_null());
  CHECK(batch["largest_fitting"] == 119);
  // --param seq_len in a decode step searches the context.
  CHECK(threshold_json({scenario("llama3_8b_h100"), "--set", decode, "--param",
                        "seq_len"})["param"] == "workload.context");
  // One device, no collectives: nothing for T_math to reach on the network roof.
  const auto network = threshold_json({scenario("llama3_8b_h100"), "--roof", "network"});
  CHECK(network["no_traffic"] == true);
  CHECK(network["value"].is_null());
}

TEST_CASE("rsim threshold brackets the cost model and agrees with the closed forms",
          "[cli][thresholds]") {
  // Gemma 2B's MLP group on v5e in bf16: the exact root is 275.2 tokens (whatif_test derives
  // T = 3I·DF / (3DF − I(2D + 3F))), so the smallest whole batch is 276.
  CHECK(threshold_json({scenario("quantization_v5e"), "--scope", "decoder/mlp"})["value"] == 276);
  // Shard over D: the all-reduced partial sums grow with B as fast as the FLOPs, so no batch
  // escapes the network roof (How to Scale Your Model, roofline chapter: it depends on D, not B).
  CHECK(
      threshold_json({scenario("shard_d_vs_batch"), "--roof", "network", "--max", "65536"})["value"]
          .is_null());
  // Shard over batch on 2 chips: the search steps by 2, and each chip needs its own ≈ 275.
  const auto by_batch = threshold_json({scenario("shard_d_vs_batch"), "--plan", "shard_batch"});
  CHECK(by_batch["step"] == 2);
  CHECK(by_batch["value"] == 550);
  // π0.5's prefix MLP in fp8 (1 B everywhere): FLOPs 6TDF, bytes 2TD + 3DF + 3TF, so
  // T = 3I·DF / (6DF − I(2D + 3F)) = 3 · 1893.8 · 2048 · 16384 / (201,326,592 − 1893.8 · 53,248)
  // = 1897 tokens: 2 observations of 968 tokens (1936) are the first past it.
  CHECK(threshold_json({scenario("pi05_thor"), "--scope", "prefix/mlp"})["value"] == 2);
  const auto bad = rsim_cli({"threshold", scenario("pi05_thor"), "--param", "heads"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--param heads: expected batch, seq_len or d_model"));
}

TEST_CASE("a plan that does not fit is reported with its numbers, exit 0", "[cli][memory]") {
  // Llama 3 70B with int8 weights on a v5e 2×2 (TP 4), 32 sequences, 8192 + 512 tokens each:
  // weights (70,553,706,496 − 1,318,912 replicated norm parameters) / 4 + 1,318,912 =
  // 17,639,415,808 B; KV 32 · 8704 tokens · 327,680 B / 4 (2 of 8 KV heads per chip) =
  // 22,817,013,760 B; with the largest op's activations (the LM head: 32 · 8192 · 2 B in, 32 ·
  // 32,064 · 2 B out = 2,576,384 B) 40,459,005,952 B = 40.46 GB against 16 GB.
  const auto text = rsim_cli({"run", scenario("llama3_70b_decode_v5e"), "--variant", "slice_2x2"});
  CHECK(text.code == 0);
  CHECK_THAT(text.out,
             Catch::Contains("DOES NOT FIT: needs 40.46 GB per device, 16 GB available (short by "
                             "24.46 GB)"));
  CHECK_THAT(text.out, Catch::Contains("DOES NOT FIT in memory"));
  const auto json_run = rsim_cli(
      {"run", scenario("llama3_70b_decode_v5e"), "--variant", "slice_2x2", "--format", "json"});
  REQUIRE(json_run.code == 0);
  const auto json = nlohmann::json::parse(json_run.out);
  CHECK(json["fits"] == false);
  CHECK(json["memory"]["fits"] == false);
  CHECK(json["memory"]["total_bytes"].get<double>() == Approx(40'459'005'952.0));
  CHECK(json["memory"]["capacity_bytes"].get<double>() == Approx(16e9));
  CHECK(json["memory"]["free_bytes"].get<double>() == Approx(16e9 - 40'459'005'952.0));
  CHECK(json["memory"]["kv_tokens_per_sequence"] == 8192 + 512);
}

TEST_CASE("rsim run reports a decode request in text and JSON", "[cli][decode]") {
  const auto text = rsim_cli({"run", scenario("llama3_70b_request_h100")});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("Memory per device"));
  CHECK_THAT(text.out, Catch::Contains("fits: "));
  CHECK_THAT(text.out, Catch::Contains("Request: prefill of 4096 prompt tokens"));
  CHECK_THAT(text.out, Catch::Contains("Critical decode batch"));
  const auto json = nlohmann::json::parse(
      rsim_cli({"run", scenario("llama3_70b_request_h100"), "--format", "json"}).out);
  const auto& request = json["decode"]["request"];
  CHECK(request["decode_steps"] == 512);
  CHECK(request["output_tokens_per_sequence"] == 513);
  // total = prefill + Σ steps; per output token = Σ steps / 512; tokens/s = 64 · 513 / total.
  const double total = request["total"]["t_lower_s"].get<double>();
  CHECK(total == Approx(request["prefill"]["t_lower_s"].get<double>() +
                        request["decode"]["t_lower_s"].get<double>()));
  CHECK(request["per_output_token"]["t_lower_s"].get<double>() ==
        Approx(request["decode"]["t_lower_s"].get<double>() / 512.0));
  CHECK(request["tokens_per_s"]["at_lower"].get<double>() == Approx(64.0 * 513 / total));
  CHECK(request["tokens_per_s_per_device"]["at_lower"].get<double>() ==
        Approx(64.0 * 513 / total / 8.0));
  CHECK(json["decode"]["critical_batch"]["group_size"] == 8);
  CHECK(json["fits"] == true);
}

TEST_CASE("whatif compare and search give each plan's TTFT and TPOT and tokens per second",
          "[cli][decode]") {
  // Issue 27: wherever a decode request appears. Each variant's record is the one rsim run
  // prints for that variant (TTFT = the prompt's prefill, TPOT = Σ steps / 512).
  const auto whatif = nlohmann::json::parse(
      rsim_cli({"whatif", scenario("llama3_70b_request_h100"), "--format", "json"}).out);
  REQUIRE(whatif["variants"].size() == 4);
  for (const auto& variant : whatif["variants"]) {
    const std::string name = variant["variant"];
    INFO(name);
    std::vector<std::string> run{"run", scenario("llama3_70b_request_h100"), "--format", "json"};
    if (name != "baseline") {
      run.insert(run.end(), {"--variant", name});
    }
    const auto ran = nlohmann::json::parse(rsim_cli(run).out);
    CHECK(variant["decode"] == ran["decode"]);
    const auto& request = variant["decode"]["request"];
    CHECK(request["per_output_token"]["t_expected_s"].get<double>() ==
          Approx(request["decode"]["t_expected_s"].get<double>() / 512.0));
  }
  const auto compare =
      nlohmann::json::parse(rsim_cli({"compare", scenario("llama3_70b_request_h100"), "--plan",
                                      "megatron_tp", "--format", "json"})
                                .out);
  CHECK(compare["variants"][0]["decode"]["request"]["prefill"].contains("t_lower_s"));
  // The inference search's plans too: megatron_tp over the node is the scenario's own plan.
  const auto search =
      nlohmann::json::parse(rsim_cli({"search", scenario("llama3_70b_request_h100"), "--devices",
                                      "8", "--top", "0", "--format", "json"})
                                .out);
  const auto own = std::find_if(search["ranked"].begin(), search["ranked"].end(), [](auto& plan) {
    return plan["preset"] == "megatron_tp" && plan["devices_per_replica"] == 8;
  });
  REQUIRE(own != search["ranked"].end());
  const auto& baseline = whatif["variants"][0]["decode"]["request"];
  CHECK((*own)["request"]["prefill"] == baseline["prefill"]);
  CHECK((*own)["request"]["per_output_token"] == baseline["per_output_token"]);
  // A prefill has no decode record.
  const auto prefill =
      nlohmann::json::parse(rsim_cli({"whatif", scenario("pi05_thor"), "--format", "json"}).out);
  CHECK_FALSE(prefill["variants"][0].contains("decode"));
}

TEST_CASE("a name that is not UTF-8 still makes valid JSON", "[cli]") {
  // Issue 23 #4: nlohmann's dump threw type_error.316 on the byte 0xFF (exit 1); the byte
  // becomes U+FFFD (EF BF BD).
  const auto outcome =
      rsim_cli({"run", scenario("pi05_thor"), "--set", "name=bad\xff name", "--format", "json"});
  CHECK(outcome.code == 0);
  CHECK_THAT(outcome.out, Catch::Contains("bad\xef\xbf\xbd name"));
}
