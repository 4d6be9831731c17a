// SPDX-License-Identifier: MIT
#include "sim/spec/scenario.hpp"

#include "sim/analysis/analysis.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/error.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using rsim::test::source_path;

namespace {

std::string invalid(const std::string& name) {
  return source_path("tests/data/invalid/" + name).string();
}

template <class Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const rsim::InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("every shipped scenario loads", "[scenario]") {
  for (const auto& entry : std::filesystem::directory_iterator(source_path("scenarios"))) {
    INFO(entry.path());
    CHECK_NOTHROW(rsim::load_scenario(entry.path()));
  }
}

TEST_CASE("the π0.5 Thor scenario says what the measured TensorRT engine ran", "[scenario][pi05]") {
  const auto scenario = rsim::load_scenario(source_path("scenarios/pi05_thor.yaml"));
  CHECK(scenario.mode == "MAXN");
  CHECK(scenario.precision.compute == "fp8");
  CHECK(scenario.precision.kv_cache == rsim::DType::fp8);
  CHECK(scenario.fusion.attention_fused());
  REQUIRE(scenario.references.size() == 1);
  CHECK(scenario.references[0].stage == "prefix");
  // trtexec on the whole FP8 engine: ~63 ms (the π0.5-on-Thor write-up rsim started from).
  CHECK(scenario.references[0].time.si() == Approx(0.063));
}

TEST_CASE("defaults: outputs and KV cache take the activation dtype", "[scenario]") {
  const auto scenario = rsim::load_scenario(source_path("scenarios/llama3_8b_h100.yaml"));
  CHECK(scenario.precision.outputs == rsim::DType::bf16);
  CHECK(scenario.precision.kv_cache == rsim::DType::bf16);
  CHECK(scenario.model.stages.front().tokens == 2048);
  CHECK(scenario.model.stages.front().lm_head == rsim::LmHead::last_token);
}

TEST_CASE("command-line --set overrides are validated like the file's own values", "[scenario]") {
  const auto path = source_path("scenarios/llama3_8b_h100.yaml");
  const auto scenario = rsim::load_scenario(path, {{{"workload.batch", "16"}}, ""});
  CHECK(scenario.workload.batch == 16);
  CHECK(error_of([&] {
          rsim::load_scenario(path, {{{"workload.batch", "-1"}}, ""});
        }) ==
        "--set workload.batch: error: 'workload.batch': expected a whole number ≥ 1, got \"-1\"");
  // How attention runs: three engines' kernels, a wrong name lists them.
  CHECK(rsim::load_scenario(path, {{{"fusion.attention", "eager"}}, ""}).fusion.attention ==
        rsim::AttentionKernels::eager);
  CHECK(error_of([&] {
          rsim::load_scenario(path, {{{"fusion.attention", "flash"}}, ""});
        }) ==
        "--set fusion.attention: error: 'fusion.attention': expected one of: fused, "
        "unfused, eager; got \"flash\"");
}

TEST_CASE("each class of bad scenario input is a file:line:col error", "[scenario]") {
  struct Case {
    std::string file;
    std::string expected;  // the whole message, or its start when it names absolute paths
  };
  const std::vector<Case> cases{
      {"scenario_unknown_key.yaml",
       ":7:1: error: unknown key 'colour' (expected one of: name, hardware, calibration, mode, "
       "model, workload, precision, fusion, per_batch_weights, plan, tiles, host_share, "
       "reference, sweep, variants, scheduler, speculative, slo, disaggregated)"},
      {"scenario_precision_missing.yaml",
       ":5:56: error: 'precision.compute': Google TPU v5e has no compute path 'fp8' (it has: bf16, "
       "int8, fp32)"},
      {"scenario_zero_batch.yaml",
       ":4:35: error: 'workload.batch': expected a whole number ≥ 1, got \"0\""},
      {"scenario_wrong_type.yaml",
       ":4:35: error: 'workload.batch': expected a whole number ≥ 1, got \"many\""},
      {"scenario_missing_hardware.yaml",
       ":2:11: error: 'hardware': no hardware preset or file 'thor_t9000'; did you mean "
       "'thor_t5000'? (presets: a100_sxm_40gb, a100_sxm_80gb, b200, gb200_nvl72, h100_pcie, "
       "h100_sxm, h200_sxm, l4, l40s, mi300x, mi325x, orin_agx_64gb, rtx_4090, thor_t5000, "
       "tpu_v4, tpu_v5e, tpu_v5p, tpu_v6e; looked for"},
      {"scenario_composite_seq_len.yaml",
       ":4:47: error: 'workload.seq_len': 'pi0.5' is a composite model"},
      {"scenario_unknown_mode.yaml",
       ":3:7: error: 'mode': NVIDIA Jetson AGX Thor T5000 has no mode '60W' (modes: MAXN, 120W)"},
      {"scenario_unknown_phase.yaml",
       ":4:19: error: 'workload.phase': expected one of: prefill, decode, train, serve; got "
       "\"finetune\""},
      {"scenario_reference_not_time.yaml",
       ":8:27: error: 'reference[0].time': expected a time like \"63 ms\" or \"2 us\" (positive, "
       "with a unit), got \"63 GB\""},
  };
  for (const Case& test : cases) {
    INFO(test.file);
    const std::string message = error_of([&] { rsim::load_scenario(invalid(test.file)); });
    CHECK(message.rfind(invalid(test.file) + test.expected, 0) == 0);
  }
}

TEST_CASE("errors inside referenced files point into those files", "[scenario]") {
  CHECK(error_of([] { rsim::load_scenario(invalid("scenario_bad_model.yaml")); }) ==
        invalid("model_bad_heads.yaml") +
            ":7:22: error: 'num_key_value_heads': num_attention_heads 8 is not divisible by "
            "num_key_value_heads 3");
  CHECK(error_of([] { rsim::load_scenario(invalid("scenario_bad_hardware.yaml")); }) ==
        invalid("hardware_rate_as_size.yaml") +
            ":9:21: error: 'memory.dram.bandwidth': expected a bandwidth like \"273 GB/s\" or "
            "\"400 Gb/s\" (positive, with a unit), got \"128 GB\"");
}

TEST_CASE("malformed YAML is reported with its position", "[scenario]") {
  const std::string message =
      error_of([] { rsim::load_scenario(invalid("scenario_malformed.yaml")); });
  CHECK(message.rfind(invalid("scenario_malformed.yaml") + ":", 0) == 0);
  CHECK_THAT(message, Catch::Contains("error: end of map flow not found"));
}

TEST_CASE("bad hardware files: negative peaks and missing provenance", "[scenario][hardware]") {
  CHECK(error_of([] { rsim::load_hardware(invalid("hardware_negative_peak.yaml")); }) ==
        invalid("hardware_negative_peak.yaml") +
            ":6:16: error: 'compute.fp32.peak': expected a compute rate like \"517 TFLOP/s\" or "
            "\"394 TOP/s\" (positive, with a unit), got \"-10 TFLOP/s\"");
  // Host memory to offload to is separate from main memory: not on a unified-memory device.
  CHECK(error_of([] { rsim::load_hardware(invalid("hardware_unified_host.yaml")); }) ==
        invalid("hardware_unified_host.yaml") +
            ":9:14: error: 'host_memory': a unified-memory device has no separate host memory to "
            "offload to");
  CHECK(error_of([] { rsim::load_hardware(invalid("hardware_no_provenance.yaml")); }) ==
        invalid("hardware_no_provenance.yaml") +
            ":6:9: error: 'compute.fp32': give exactly one of 'source' (a citation) or 'derived' "
            "(the formula)");
}

TEST_CASE("a single-stage model without a vocabulary is an input error", "[scenario]") {
  // Issue 21 #8: vocab_size 0 on a model run on its own was an internal error (exit 1).
  for (const char* phase : {"prefill", "train"}) {
    INFO(phase);
    const std::string phase_set = std::string("{phase: ") + phase + ", batch: 1, seq_len: 128}";
    const std::string error = error_of([&] {
      rsim::load_scenario(invalid("scenario_no_vocabulary.yaml"), {{{"workload", phase_set}}, ""});
    });
    CHECK_THAT(error, Catch::Contains("model_no_vocabulary.yaml") &&
                          Catch::Contains("vocab_size 0") && Catch::Contains("composite model"));
  }
}

TEST_CASE("a scenario needs only its hardware, model and workload", "[scenario]") {
  // Issue 25: precision, fusion, plan and name have documented defaults (docs/yaml.md).
  const auto path = std::filesystem::temp_directory_path() / "rsim_minimal_scenario.yaml";
  std::ofstream(path) << "hardware: h100_sxm\nmodel: llama3_8b\n"
                         "workload: {phase: decode, batch: 8, context: 4096}\n";
  const auto minimal = rsim::load_scenario(path);
  CHECK(minimal.name == "rsim_minimal_scenario");
  CHECK(minimal.precision.policy == "bf16");
  CHECK(minimal.fusion.attention_fused());
  CHECK(minimal.fusion.into_matmul ==
        std::vector<rsim::ElementwiseKind>{rsim::ElementwiseKind::activation,
                                           rsim::ElementwiseKind::residual,
                                           rsim::ElementwiseKind::rope});
  CHECK(minimal.plan.devices() == 1);
  // The defaults are what scenarios/llama3_8b_h100.yaml writes out (bf16 weights, activations
  // and compute; fused attention; activation, residual and RoPE fused): the same bounds.
  const auto explicit_scenario =
      rsim::load_scenario(source_path("scenarios/llama3_8b_h100.yaml"),
                          {{{"workload", "{phase: decode, batch: 8, context: 4096}"}}, {}});
  const auto roofs = rsim::scenario_roofs(minimal, "");
  const auto a = rsim::analyze(minimal, roofs);
  const auto b = rsim::analyze(explicit_scenario, rsim::scenario_roofs(explicit_scenario, ""));
  CHECK(a.bounds.total.t_lower.si() == b.bounds.total.t_lower.si());
  CHECK(a.bounds.total.t_upper.si() == b.bounds.total.t_upper.si());
  std::filesystem::remove(path);
}
