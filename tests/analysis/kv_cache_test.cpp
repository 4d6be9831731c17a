// SPDX-License-Identifier: MIT
// KV-cache bytes per token for multi-head, grouped-query and multi-query attention, through the
// footprint of a decode step: every layer caches K and V for each of the K KV heads, H wide, so
// one token costs 2 · L · K · H · bytes_per_element (scaling book inference.md, "KV cache size").
#include "run_fixture.hpp"

#include <catch2/catch.hpp>

namespace {

// One sequence, 1023 tokens already cached: the step writes the 1024th, so the footprint holds
// 1024 tokens of K and V. The single-device plan keeps every KV head on one device; bf16 stores
// 2 B per element.
double kv_bytes_per_token(const std::string& model) {
  const auto run =
      rsim::test::run_scenario("llama3_70b_decode_tp8_h100", {{"model", model},
                                                              {"plan", "single"},
                                                              {"workload.batch", "1"},
                                                              {"workload.context", "1023"},
                                                              {"precision", "bf16"}});
  return run.footprint.kv_cache.si() / 1024.0;
}

}  // namespace

TEST_CASE("KV cache bytes per token: MHA, GQA, MQA", "[decode][kv_cache]") {
  // MHA, Llama-2-7B: 2 · 32 layers · 32 KV heads · 128 · 2 B = 524,288 B (0.5 MiB per token).
  CHECK(kv_bytes_per_token("llama2_7b") == 524'288.0);
  // GQA, Llama-3-8B: 2 · 32 · 8 · 128 · 2 B = 131,072 B, a quarter of MHA (G = 32 / 8 = 4).
  CHECK(kv_bytes_per_token("llama3_8b") == 131'072.0);
  // MQA, Gemma 2B: 2 · 18 layers · 1 KV head · 256 · 2 B = 18,432 B.
  CHECK(kv_bytes_per_token("gemma_2b") == 18'432.0);
  // Llama-3.1-405B (GQA): 2 · 126 · 8 · 128 · 2 B = 516,096 B.
  CHECK(kv_bytes_per_token("llama3_405b") == 516'096.0);
}
