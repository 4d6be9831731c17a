// SPDX-License-Identifier: MIT
// One decode step: one new token per sequence against a KV cache of `context` tokens.
#include "run_fixture.hpp"
#include "sim/error.hpp"

#include <catch2/catch.hpp>

TEST_CASE("a decode step reads the KV cache once per layer; attention intensity ≈ G", "[decode]") {
  const auto run = rsim::test::run_scenario("llama3_70b_decode_tp8_h100", {{"plan", "single"}});
  bool found = false;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (op.kind != rsim::OpKind::attention) {
      continue;
    }
    found = true;
    CHECK(op.attention.query_tokens == 1);
    CHECK(op.attention.cached_tokens == 4096);
    // FLOPs: 4 · batch 64 · heads 64 · head_dim 128 · (4096 cached + 1 own) keys
    CHECK(run.table.costs[row].flops.si() == Approx(4.0 * 64 * 64 * 128 * 4097));
    // KV cache read: K and V, 64 sequences × 4096 tokens × 8 KV heads × 128 × 2 B
    // = 1,073,741,824 B per layer; the rest (q, the new k/v, the output) is ~0.2 %.
    CHECK(run.table.costs[row].bytes.si() == Approx(2.0 * 64 * 4096 * 8 * 128 * 2).epsilon(0.003));
    // Intensity → G = 64 query heads / 8 KV heads = 8 (scaling book transformers.md:
    // S·G/(G + S) at T = 1).
    CHECK(run.table.costs[row].intensity == Approx(8.0).epsilon(0.01));
  }
  CHECK(found);
  // The KV footprint: the cached 4096 tokens and the new one, K and V, 80 layers:
  // 64 · 4097 · 80 · 8 · 128 · 2 · 2 B = 85,915,844,608 B.
  CHECK(run.footprint.kv_cache.si() == Approx(64.0 * 4097 * 80 * 8 * 128 * 2 * 2));
}

TEST_CASE("Megatron TP in decode: two all-reduces of batch × D per layer", "[decode][plan]") {
  const auto run = rsim::test::run_scenario("llama3_70b_decode_tp8_h100");
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (op.kind == rsim::OpKind::collective) {
      // 64 sequences × 1 token × D 8192 × 2 B = 1,048,576 B; 2 · 7/8 · V / 450e9 = 4.08 µs
      CHECK(op.collective.bytes.si() == Approx(1'048'576.0));
      CHECK(run.table.costs[row].t_net.si() == Approx(2 * 7.0 / 8 * 1'048'576.0 / 450e9));
    }
  }
  CHECK(run.bounds.total.bound == rsim::Bound::memory);
}

TEST_CASE("decode input errors", "[decode]") {
  const auto path = [](const std::string& name) {
    return rsim::test::source_path("scenarios/" + name + ".yaml");
  };
  CHECK_THROWS_WITH(
      rsim::load_scenario(path("pi05_thor"), {{{"workload.phase", "decode"}}, ""}),
      Catch::Contains("a decode step needs a single-stage decoder with a vocabulary"));
  CHECK_THROWS_WITH(
      rsim::load_scenario(path("llama3_8b_h100"), {{{"workload.phase", "decode"}}, ""}),
      Catch::Contains("give 'context' (the tokens already cached), not 'seq_len'"));
  CHECK_THROWS_WITH(rsim::load_scenario(path("llama3_8b_h100"), {{{"workload.context", "5"}}, ""}),
                    Catch::Contains("'context' is for phase: decode"));
}

TEST_CASE("threshold over the model width brackets the T_math = T_net crossing", "[thresholds]") {
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  rsim::ThresholdQuery query;
  query.key = "d_model";
  query.roof = rsim::Bound::network;
  const auto result = rsim::threshold_scenario(path, {}, query, "", {});
  REQUIRE(result.value);
  CHECK(query.step == 2);  // shard_d splits embed over 2 chips
  const auto at_width = [&](std::int64_t width) {
    auto scenario = rsim::load_scenario(path);
    for (auto& stage : scenario.model.stages) {
      stage.component.hidden_size = width;
    }
    auto roofs = rsim::scenario_roofs(scenario, "");
    return rsim::analyze(std::move(scenario), std::move(roofs)).bounds.total;
  };
  // The smallest width (in steps of 2) where ΣT_math ≥ ΣT_net.
  const auto at = at_width(*result.value);
  const auto below = at_width(*result.value - 2);
  CHECK(at.t_math >= at.t_net);
  CHECK(below.t_math < below.t_net);
  // Below the per-matmul critical D of 8755.6: matmuls that need no all-reduce (down_proj, o_proj
  // under shard_d) add compute but no traffic, so the whole run crosses earlier.
  CHECK(*result.value < 8756);
  // Batch sharding sends nothing: no width is network-bound, so the threshold is the first step.
  rsim::ThresholdQuery by_batch = query;
  by_batch.key = "d_model";
  const auto none =
      rsim::threshold_scenario(path, {{{"plan.preset", "shard_batch"}}, ""}, by_batch, "", {});
  CHECK(none.value == 1);
}
