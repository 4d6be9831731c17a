// SPDX-License-Identifier: MIT
// One decode step: one new token per sequence against a KV cache of `context` tokens.
#include "run_fixture.hpp"
#include "sim/base/error.hpp"

#include <catch2/catch.hpp>

TEST_CASE("a decode step reads the KV cache once per layer and attention intensity ≈ G",
          "[decode]") {
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
  CHECK_THROWS_WITH(
      rsim::load_scenario(path("llama3_8b_h100"), {{{"workload.decode_steps", "3"}}, ""}),
      Catch::Contains("'decode_steps' is for phase: decode"));
  CHECK_THROWS_WITH(
      rsim::load_scenario(path("llama3_70b_request_h100"), {{{"workload.decode_steps", "0"}}, ""}),
      Catch::Contains("decode_steps"));
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
  // Batch sharding sends nothing: no traffic for T_math to reach (issue 25: it answered "reaches
  // ΣT_net at 1 (ΣT_net = 0 s)").
  rsim::ThresholdQuery by_batch = query;
  by_batch.key = "d_model";
  const auto none =
      rsim::threshold_scenario(path, {{{"plan.preset", "shard_batch"}}, ""}, by_batch, "", {});
  CHECK(none.no_traffic);
  CHECK_FALSE(none.value.has_value());
}

namespace {

// Llama 3 70B (models/llama3_70b.yaml; scaling book applied-training.md): L = 80, D = 8192,
// F = 28672, N = 64, K = 8, H = 128, V = 128256, untied embeddings.
// Parameters: per layer q D·N·H = 67,108,864, k and v 2·D·K·H = 16,777,216, o 67,108,864,
// MLP 3·D·F = 704,643,072, two norms 2·D = 16,384: 855,654,400; × 80 = 68,452,352,000; embedding
// and LM head V·D = 1,050,673,152 each; final norm 8192: 70,553,706,496 (the book's 70.55e9).
constexpr double kLlama70bParameters = 70'553'706'496.0;
constexpr double kLlama70bEmbedding = 1'050'673'152.0;
constexpr double kLlama70bNorms = 80.0 * 2 * 8192 + 8192;  // 1,318,912, replicated under TP
// KV cache per token: K and V × K 8 heads × H 128 × L 80 layers × 2 B (bf16) = 327,680 B.
constexpr double kKvBytesPerToken = 2.0 * 8 * 128 * 80 * 2;
constexpr double kH100Bandwidth = 3.35e12;  // hardware/h100_sxm.yaml hbm

}  // namespace

TEST_CASE("a decode step is bounded by (B·KV per sequence + weights) / bandwidth", "[decode]") {
  // One H100, batch 8, 4096 cached tokens. Scaling book inference.md: min step time =
  // (Batch·KV_size + Param_size) / W_hbm. rsim reads every weight but the embedding table (a
  // decode step gathers 8 of its rows): (70,553,706,496 − 1,050,673,152) · 2 B = 139,006,066,688 B;
  // KV: 8 · 4096 · 327,680 B = 10,737,418,240 B. Σ 149,743,484,928 B / 3.35e12 B/s = 44.70 ms.
  // Above it only by the activations the ops move (< 1 %): the step is memory-bound.
  const auto run = rsim::test::run_scenario("llama3_70b_decode_tp8_h100",
                                            {{"plan", "single"}, {"workload.batch", "8"}});
  const double weights = (kLlama70bParameters - kLlama70bEmbedding) * 2.0;
  const double kv = 8.0 * 4096 * kKvBytesPerToken;
  const double floor = (weights + kv) / kH100Bandwidth;
  CHECK(floor == Approx(44.70e-3).epsilon(1e-3));
  CHECK(run.bounds.total.t_lower.si() >= floor);
  CHECK(run.bounds.total.t_lower.si() <= floor * 1.01);
  CHECK(run.bounds.total.bound == rsim::Bound::memory);
}

TEST_CASE("a request = its prompt's prefill + the sum of its decode steps", "[decode]") {
  // Llama 3 70B on one H100, 4 sequences, a 1024-token prompt, 3 decode steps at 1024, 1025 and
  // 1026 cached tokens.
  const auto request_run =
      rsim::test::run_scenario("llama3_70b_request_h100", {{"plan", "single"},
                                                           {"workload.batch", "4"},
                                                           {"workload.context", "1024"},
                                                           {"workload.decode_steps", "3"}});
  REQUIRE(request_run.request);
  const rsim::DecodeRequest& request = *request_run.request;
  CHECK(request.steps == 3);
  CHECK(request.affine);
  const auto step_at = [](int context) {
    return rsim::test::run_scenario("llama3_70b_decode_tp8_h100",
                                    {{"plan", "single"},
                                     {"workload.batch", "4"},
                                     {"workload.context", std::to_string(context)}})
        .bounds.total;
  };
  const rsim::Totals first = step_at(1024);
  // Each step caches one more token per sequence: attention (memory-bound, intensity ≈ G = 8)
  // reads 4 · 327,680 B = 1,310,720 B more, 391.3 ns at 3.35 TB/s; nothing else depends on c.
  const double per_token = 4.0 * kKvBytesPerToken / kH100Bandwidth;
  const double steps_by_hand = 3.0 * first.t_lower.si() + (0.0 + 1.0 + 2.0) * per_token;
  CHECK(request.decode.lower.si() == Approx(steps_by_hand).epsilon(1e-9));
  // The same against three separate step runs (lower and upper bounds).
  const rsim::Totals second = step_at(1025);
  const rsim::Totals third = step_at(1026);
  CHECK(request.decode.lower.si() ==
        Approx((first.t_lower + second.t_lower + third.t_lower).si()).epsilon(1e-12));
  CHECK(request.decode.upper.si() ==
        Approx((first.t_upper + second.t_upper + third.t_upper).si()).epsilon(1e-12));
  // The prefill: the plain prefill of the same 4 × 1024 tokens, plus writing the prompt's K and
  // V into the cache: per layer read k and v and write them, 4 · 4 · 1024 · 8 · 128 · 2 B =
  // 33,554,432 B; × 80 layers / 3.35e12 B/s = 801.3 µs.
  const rsim::Totals prefill =
      rsim::test::run_scenario(
          "llama3_70b_tp8_h100",
          {{"plan", "single"}, {"workload.batch", "4"}, {"workload.seq_len", "1024"}})
          .bounds.total;
  const double cache_writes = 80.0 * 4 * 4 * 1024 * 8 * 128 * 2 / kH100Bandwidth;
  CHECK(request.prefill.lower.si() == Approx(prefill.t_lower.si() + cache_writes).epsilon(1e-9));
  CHECK(request.total().lower.si() ==
        Approx(request.prefill.lower.si() + steps_by_hand).epsilon(1e-9));
  CHECK(request.per_output_token().lower.si() == Approx(steps_by_hand / 3.0).epsilon(1e-9));
  // The memory table counts the last step's cache: 1024 + 3 tokens per sequence.
  CHECK(request_run.footprint.kv_cache.si() == Approx(4.0 * 1027 * kKvBytesPerToken));
}

TEST_CASE("a long request sums its steps exactly from the two ends", "[decode]") {
  // 512 steps: the trapezoid N·(t_first + t_last)/2 against the step run at the midpoint
  // context 4096 + 255.5 (the mean of an affine step time over the steps).
  const auto run = rsim::test::run_scenario("llama3_70b_request_h100");
  REQUIRE(run.request);
  CHECK(run.request->affine);
  CHECK(run.request->evaluations == 4);  // prefill, first, last, midpoint check
  const auto step_at = [](int context) {
    return rsim::test::run_scenario("llama3_70b_decode_tp8_h100",
                                    {{"workload.context", std::to_string(context)}})
        .bounds.total.t_lower.si();
  };
  // Affine: the mean of the steps at 4351 and 4352 is the mean step; × 512.
  CHECK(run.request->decode.lower.si() ==
        Approx(512.0 * (step_at(4351) + step_at(4352)) / 2.0).epsilon(1e-9));
}

TEST_CASE("the critical decode batch of the matmuls against the closed form", "[decode]") {
  // Σ over the step's matmuls X[B, D_i]·W[D_i, F_i] (× count): FLOPs 2B·ΣDF, bytes
  // s_x·B·ΣD + s_w·ΣDF + s_o·B·ΣF. Intensity = I ⇒ B* = I·s_w·ΣDF / (2ΣDF − I·(s_x·ΣD + s_o·ΣF)).
  // One device: per layer q 8192×8192, kv 8192×2048, o 8192×8192, gate_up 8192×57344, down
  // 28672×8192: Σ DF = 8192 · 104,448 = 855,638,016, × 80 + LM head 8192 · 128,256 =
  // 69,501,714,432; Σ (D + F) = 16,384 + 10,240 + 16,384 + 65,536 + 36,864 = 145,408, × 80 +
  // 136,448 = 11,769,088. v5e: I = 1.97e14 / 8.2e11 = 240.24 (scaling book roofline.md).
  const double sum_df = 69'501'714'432.0;
  const double sum_d_plus_f = 11'769'088.0;
  const double ridge = 1.97e14 / 8.2e11;
  const auto critical_of = [](const rsim::RunResult& run) {
    REQUIRE(run.decode_critical);
    REQUIRE(run.decode_critical->matmuls);
    REQUIRE(run.decode_critical->matmuls->kind == rsim::CriticalBatch::Kind::at);
    return run.decode_critical->matmuls->tokens;
  };
  // bf16 (s = 2): B* = I·ΣDF / (ΣDF − I·Σ(D+F)) = 250.4: the book's B_crit of 240 (one matmul,
  // B ≪ D, F) raised 4 % by the activations the narrow kv and o projections move.
  const auto bf16 = rsim::test::run_scenario("llama3_70b_decode_v5e",
                                             {{"plan", "single"}, {"precision", "bf16"}});
  const double bf16_closed = ridge * sum_df / (sum_df - ridge * sum_d_plus_f);
  CHECK(bf16_closed == Approx(250.43).epsilon(1e-4));
  CHECK(critical_of(bf16) == Approx(bf16_closed).epsilon(1e-9));
  // Attention stays on the memory roof: intensity ≈ G = 64 / 8 = 8 (≪ 240), whatever the batch.
  CHECK(bf16.decode_critical->group_size == 8);
  CHECK(bf16.decode_critical->attention_intensity == Approx(8.0).epsilon(0.01));
  // int8 weights, bf16 compute (s_w = 1): B* = I·ΣDF / (2ΣDF − 2I·Σ(D+F)) = 125.2, half
  // (the book's 120).
  const auto int8 = rsim::test::run_scenario("llama3_70b_decode_v5e", {{"plan", "single"}});
  CHECK(critical_of(int8) == Approx(bf16_closed / 2.0).epsilon(1e-9));
  // Megatron TP 8 (× 2 data replicas): each device has F/8 of q, kv, gate_up, the LM head and D/8
  // of o's and down's inputs: Σ DF / 8 = 8,687,714,304; Σ (D + F) per layer 9216 + 8448 + 9216 +
  // 15,360 + 11,776 = 54,016, × 80 + 8192 + 16,032 = 4,345,504. int8 weights:
  // B* = I·ΣDF / (2ΣDF − 2I·Σ(D+F)) = 136.5 per device, 273.1 for the two replicas.
  const auto tp = rsim::test::run_scenario("llama3_70b_decode_v5e");
  const double local_df = sum_df / 8.0;
  const double local_d_plus_f = 4'345'504.0;
  const double tp_closed = ridge * local_df / (2.0 * local_df - 2.0 * ridge * local_d_plus_f);
  CHECK(tp_closed == Approx(136.53).epsilon(1e-4));
  CHECK(critical_of(tp) == Approx(tp_closed).epsilon(1e-9));
  CHECK(tp.decode_critical->replicas == 2.0);
}

TEST_CASE("the memory table of Llama 3 70B bf16 on 8 H100s (TP 8)", "[decode][memory]") {
  // 64 sequences, a 4096-token prompt, 512 steps: the last step caches 4608 tokens.
  const auto run = rsim::test::run_scenario("llama3_70b_request_h100");
  const rsim::Footprint& memory = run.footprint;
  // Weights: 141.1 GB in bf16 over 8 devices, but the norms (1,318,912 parameters) replicated:
  // (70,553,706,496 − 1,318,912) · 2 / 8 + 1,318,912 · 2 = 17,640,734,720 B.
  CHECK(memory.weights.si() ==
        Approx((kLlama70bParameters - kLlama70bNorms) * 2.0 / 8.0 + kLlama70bNorms * 2.0));
  // KV: 64 · 4608 tokens · 327,680 B / 8 (one KV head per device) = 12,079,595,520 B.
  CHECK(memory.kv_cache.si() == Approx(64.0 * 4608 * kKvBytesPerToken / 8.0));
  // Activations: the largest op is the LM head: x [64, 8192] and logits [64, 128256 / 8] in bf16:
  // 1,048,576 + 2,052,096 = 3,100,672 B.
  CHECK(memory.activations.si() == Approx(64.0 * 8192 * 2 + 64.0 * 16032 * 2));
  CHECK(memory.capacity.si() == Approx(80e9));
  CHECK(memory.fits());
  CHECK(memory.free().si() == Approx(80e9 - 17'640'734'720.0 - 12'079'595'520.0 - 3'100'672.0));
}

TEST_CASE("unfused attention in decode: the whole KV cache, and a critical batch", "[decode]") {
  // Issue 21 #9: with attention as QKᵀ, softmax and PV matmuls, the memory table counted one
  // token of cache and the critical decode batch read "never" (attention intensity 0).
  const auto fused = rsim::test::run_scenario("llama3_70b_decode_tp8_h100", {{"plan", "single"}});
  const auto unfused = rsim::test::run_scenario(
      "llama3_70b_decode_tp8_h100", {{"plan", "single"}, {"fusion.attention", "unfused"}});
  // The same cache either way: 64 · 4097 · 80 · 8 · 128 · 2 · 2 B = 85,915,844,608 B.
  CHECK(unfused.footprint.kv_cache.si() == Approx(64.0 * 4097 * 80 * 8 * 128 * 2 * 2));
  // The weight matmuls are the same ops: the same critical batch; attention (QKᵀ and PV) stays
  // near G = 8 FLOP/B (the scores' round trip through DRAM lowers it a little).
  REQUIRE(unfused.decode_critical);
  REQUIRE(unfused.decode_critical->matmuls);
  CHECK(unfused.decode_critical->matmuls->kind == rsim::CriticalBatch::Kind::at);
  CHECK(unfused.decode_critical->matmuls->tokens ==
        Approx(fused.decode_critical->matmuls->tokens).epsilon(1e-9));
  CHECK(unfused.decode_critical->attention_intensity > 4.0);
  CHECK(unfused.decode_critical->attention_intensity <= 8.0 * 1.01);
}
