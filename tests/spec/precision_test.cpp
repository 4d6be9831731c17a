// SPDX-License-Identifier: MIT
#include "sim/spec/precision.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

using rsim::DType;

namespace {

rsim::HardwareSpec hardware(const std::string& name) {
  return rsim::load_hardware(rsim::test::source_path("hardware/" + name + ".yaml"));
}

rsim::Precision parse(const std::string& yaml, const std::string& hw) {
  const auto document = rsim::parse_config(yaml, "p.yaml");
  return rsim::parse_precision(document.at("precision"), hardware(hw));
}

}  // namespace

TEST_CASE("precision presets name every tensor role and the compute path", "[precision]") {
  const auto int8_weights = parse("precision: int8_weights\n", "tpu_v5e");
  CHECK(int8_weights.weights == DType::int8);
  CHECK(int8_weights.activations == DType::bf16);
  CHECK(int8_weights.compute == "bf16");  // dequantized in the kernel: the bf16 path
  const auto int8 = parse("precision: int8\n", "tpu_v5e");
  CHECK(int8.activations == DType::int8);
  CHECK(int8.outputs == DType::int8);
  CHECK(int8.compute == "int8");
  const auto nvfp4 = parse("precision: nvfp4\n", "thor_t5000");
  CHECK(nvfp4.weights == DType::nvfp4);
  CHECK(nvfp4.compute == "fp4");
  CHECK(nvfp4.kv_cache == DType::fp8);
  CHECK(rsim::precision_policies().size() == 8);
}

TEST_CASE("a policy's fields can be overridden, e.g. an int8 KV cache", "[precision]") {
  const auto precision = parse("precision: {policy: bf16, kv_cache: int8}\n", "h100_sxm");
  CHECK(precision.policy == "bf16+");
  CHECK(precision.weights == DType::bf16);
  CHECK(precision.kv_cache == DType::int8);
}

TEST_CASE("a precision the hardware lacks is an error, or a fallback when asked", "[precision]") {
  CHECK_THROWS_WITH(parse("precision: fp8\n", "tpu_v5e"),
                    "p.yaml:1:12: error: 'precision': Google TPU v5e has no compute path 'fp8' "
                    "(it has: bf16, int8, fp32); choose another precision or add 'fallback: "
                    "PATH' to run the matmuls on another path");
  CHECK_THROWS_WITH(parse("precision: nvfp4\n", "tpu_v5e"),
                    Catch::Contains("has no compute path 'fp4'"));
  const auto fallback = parse("precision: {policy: fp8, fallback: bf16}\n", "tpu_v5e");
  CHECK(fallback.compute == "bf16");
  CHECK(fallback.requested_compute == "fp8");
  CHECK(fallback.weights == DType::fp8);  // storage stays fp8: only the compute path falls back
  CHECK_THAT(rsim::describe(fallback), Catch::Contains("fallback: the hardware has no fp8 path"));
  CHECK_THROWS_WITH(parse("precision: {policy: fp8, fallback: fp4}\n", "tpu_v5e"),
                    Catch::Contains("has no compute path 'fp4' either"));
}

TEST_CASE("attention may run on its own compute path, which must exist", "[precision]") {
  // Transformer Engine's FP8 recipe: FP8 GEMMs, BF16 dot-product attention (fp8_dpa off).
  const auto te = parse("precision: {policy: fp8, attention: bf16}\n", "h100_sxm");
  CHECK(te.compute == "fp8");
  CHECK(te.attention_path() == "bf16");
  CHECK(te.policy == "fp8+");
  CHECK_THAT(rsim::describe(te), Catch::Contains("compute fp8, attention bf16"));
  const auto plain = parse("precision: fp8\n", "h100_sxm");
  CHECK(plain.attention_path() == "fp8");  // unset: attention follows the matmuls
  // The value fp4 starts at column 38: 11 for "precision: ", 1 for "{", 14 for "policy: bf16, ",
  // 11 for "attention: ".
  CHECK_THROWS_WITH(parse("precision: {policy: bf16, attention: fp4}\n", "h100_sxm"),
                    Catch::Contains("p.yaml:1:38: error: 'precision.attention'") &&
                        Catch::Contains("has no compute path 'fp4' for attention"));
}

TEST_CASE("the LM head may keep its own dtype and compute path", "[precision]") {
  // ModelOpt / TensorRT Edge-LLM quantize the LM head only with --lm_head_quantization.
  const auto edge = parse("precision: {policy: nvfp4, lm_head: fp16}\n", "thor_t5000");
  CHECK(edge.weights == DType::nvfp4);
  CHECK(edge.lm_head_weights() == DType::fp16);
  CHECK(edge.lm_head_path() == "fp16");  // Thor has an FP16 tensor-core path
  CHECK(edge.compute == "fp4");
  CHECK(edge.policy == "nvfp4+");
  CHECK_THAT(rsim::describe(edge), Catch::Contains("lm_head fp16"));
  const auto plain = parse("precision: nvfp4\n", "thor_t5000");
  CHECK(plain.lm_head_weights() == DType::nvfp4);  // unset: the head follows the weights
  CHECK(plain.lm_head_path() == "fp4");
  // A weight-only policy keeps its path: the head's dtype names none of v5e's paths.
  const auto awq = parse("precision: {policy: int4_weights, lm_head: fp16}\n", "tpu_v5e");
  CHECK(awq.lm_head_weights() == DType::fp16);
  CHECK(awq.lm_head_path() == "bf16");
  CHECK_THROWS_WITH(parse("precision: {policy: nvfp4, lm_head: fp12}\n", "thor_t5000"),
                    Catch::Contains("'precision.lm_head': expected a dtype"));
}

TEST_CASE("gradients may be kept in their own dtype", "[precision]") {
  // Megatron-LM forces FP32 gradient accumulation and reduction for --bf16.
  const auto megatron = parse("precision: {policy: bf16, gradients: fp32}\n", "h100_sxm");
  REQUIRE(megatron.gradients);
  CHECK(*megatron.gradients == DType::fp32);
  CHECK(megatron.weights == DType::bf16);
  CHECK_THAT(rsim::describe(megatron), Catch::Contains("gradients fp32"));
  CHECK_FALSE(parse("precision: bf16\n", "h100_sxm").gradients);
  CHECK_THROWS_WITH(parse("precision: {policy: bf16, gradients: fp31}\n", "h100_sxm"),
                    Catch::Contains("'precision.gradients': expected a dtype"));
}

TEST_CASE("unknown policies and dtypes are errors listing the choices", "[precision]") {
  CHECK_THROWS_WITH(parse("precision: int3\n", "tpu_v5e"),
                    "p.yaml:1:12: error: 'precision': no precision policy 'int3' (policies: bf16, "
                    "fp16, int8_weights, int8, fp8, fp4, nvfp4, int4_weights)");
  CHECK_THROWS_WITH(
      parse("precision: {weights: int3, activations: bf16, compute: bf16}\n", "tpu_v5e"),
      Catch::Contains("'precision.weights': expected a dtype"));
  CHECK_THROWS_WITH(parse("precision: {weights: int8, activations: bf16}\n", "tpu_v5e"),
                    Catch::Contains("missing required key 'precision.compute'"));
}
