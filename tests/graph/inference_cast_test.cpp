// SPDX-License-Identifier: MIT
// Inference on an FP8 path from BF16 activations: each GEMM's X is cast to FP8 first.
#include "run_fixture.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

struct Cast {
  std::string name;
  double bytes = 0.0;
  bool fused = false;
};

// The quantize ops of a run in graph order, with their bytes (inputs + outputs, per device).
std::vector<Cast> casts(const rsim::RunResult& run) {
  std::vector<Cast> found;
  for (const auto vertex : run.table.order) {
    const rsim::Op& op = run.graph.op(vertex);
    if (op.kind == rsim::OpKind::elementwise && op.elementwise == rsim::ElementwiseKind::quantize) {
      double bytes = 0.0;
      for (const auto& tensor : op.inputs) {
        bytes += tensor.bytes().si();
      }
      for (const auto& tensor : op.outputs) {
        bytes += tensor.bytes().si();
      }
      found.push_back({op.name, bytes, op.fused});
    }
  }
  return found;
}

const rsim::Op& op_named(const rsim::RunResult& run, const std::string& name) {
  for (const auto vertex : run.table.order) {
    if (run.graph.op(vertex).name == name) {
      return run.graph.op(vertex);
    }
  }
  FAIL("no op " << name);
  throw;
}

constexpr const char* kFp8Gemms =
    "{weights: fp8, activations: bf16, outputs: bf16, kv_cache: bf16, compute: fp8}";

}  // namespace

TEST_CASE("FP8 GEMMs in inference cast their BF16 input first", "[graph][precision]") {
  // Llama 3 8B prefill, batch 4 × 2,048 = 8,192 tokens on one H100 (scenarios/llama3_8b_h100
  // .yaml), D 4,096, F 14,336. Each cast reads X in bf16 (2 B) and writes it in e4m3 (1 B):
  //   Q and K/V share theirs (the same normed X): 8,192 · 4,096 · 3 B = 100,663,296 B
  //   o_proj (N·H = 4,096 features)                 100,663,296 B
  //   gate_up_proj                                  100,663,296 B
  //   down_proj (F = 14,336 features): 8,192 · 14,336 · 3 B = 352,321,536 B
  //   lm_head on the last token of each sequence: 4 · 4,096 · 3 B = 49,152 B
  const rsim::RunResult run =
      rsim::test::run_scenario("llama3_8b_h100", {{"precision", kFp8Gemms}});
  const std::vector<Cast> found = casts(run);
  REQUIRE(found.size() == 5);
  const double tokens = 8192.0;
  CHECK(found[0].name == "q_proj.quantize");
  CHECK(found[0].bytes == Approx(tokens * 4096.0 * 3.0));
  CHECK(found[1].name == "o_proj.quantize");
  CHECK(found[1].bytes == Approx(tokens * 4096.0 * 3.0));
  CHECK(found[2].name == "gate_up_proj.quantize");
  CHECK(found[2].bytes == Approx(tokens * 4096.0 * 3.0));
  CHECK(found[3].name == "down_proj.quantize");
  CHECK(found[3].bytes == Approx(tokens * 14336.0 * 3.0));
  CHECK(found[4].name == "lm_head.quantize");
  CHECK(found[4].bytes == Approx(4.0 * 4096.0 * 3.0));
  for (const Cast& cast : found) {
    CHECK_FALSE(cast.fused);
  }
  // The GEMMs read the cast X: 1 B per element.
  for (const std::string gemm : {"q_proj", "kv_proj", "o_proj", "gate_up_proj", "down_proj"}) {
    CAPTURE(gemm);
    CHECK(op_named(run, gemm).inputs.front().dtype == rsim::DType::fp8);
  }
  // An engine that quantizes in the kernel before (a norm + quantize kernel) fuses them.
  const rsim::RunResult fused = rsim::test::run_scenario(
      "llama3_8b_h100", {{"precision", kFp8Gemms}, {"fusion.into_matmul", "[quantize]"}});
  for (const Cast& cast : casts(fused)) {
    CHECK(cast.fused);
  }
  // Nothing to cast where activations are FP8 already or the GEMMs run in BF16.
  CHECK(casts(rsim::test::run_scenario("llama3_8b_h100", {{"precision", "fp8"}})).empty());
  CHECK(casts(rsim::test::run_scenario("llama3_8b_h100")).empty());
}
