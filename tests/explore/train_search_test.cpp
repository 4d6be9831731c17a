// SPDX-License-Identifier: MIT
// The training plan search: every (t, p, d, ZeRO, sp, recompute, m, v, overlaps, offload) of a
// training scenario, costed by the schedule stage and ranked by expected step time.
#include "explore/train_search_fixture.hpp"
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/search.hpp"
#include "sim/report/search_report.hpp"

#include <boost/range/iterator_range.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <sstream>

using namespace rsim::test::train_search;

TEST_CASE("training search with uneven pipeline stages tries p that does not divide the layers",
          "[search][train]") {
  // The odd decoder's 9 layers on 8 GPUs, as above, with --uneven-stages: p ∈ {2, 4, 8} no longer
  // rejected (the busiest stage holds ⌈9/p⌉ = 5, 3 or 2 layers). Interleaving keeps the busiest
  // stage's layers: v | 9, p·v ≤ 9 and v·⌈9/(p·v)⌉ = ⌈9/p⌉; p = 2, v = 3 would hold 3·⌈9/6⌉ = 6 > 5
  // (and p = 4 or 8 with v = 3 is past 9 chunks): v = 1 everywhere, the 1,590 plans above.
  const auto scenario =
      rsim::load_scenario(rsim::test::source_path("tests/data/train/odd_decoder_train.yaml"));
  auto roofs = rsim::scenario_roofs(scenario, "");
  roofs.host_memory.reset();
  rsim::TrainingSearchOptions options;
  options.uneven_stages = true;
  const auto result = rsim::search_training_plans(scenario, roofs, 8, options);
  CHECK(result.seen == 1590);
  CHECK(rejected(result, "layers do not divide over the pipeline") == 0);
  // Eight stages of the 9 layers (the busiest holding 2) are costed and ranked, at v = 1 only.
  CHECK(std::any_of(result.ranked.begin(), result.ranked.end(),
                    [](const auto& candidate) { return candidate.plan.pipeline == 8; }));
  CHECK(std::none_of(result.ranked.begin(), result.ranked.end(),
                     [](const auto& candidate) { return candidate.plan.interleave > 1; }));
}

TEST_CASE("training search on 8 GPUs: the best plan, derived by hand", "[search][train]") {
  // The odd decoder (tests/data/train/odd_decoder.yaml): L = 9 layers, 9 heads of 256, D = 2304,
  // F = 9216 (not gated), V = 32000 tied; 16 sequences of 512 tokens on 8 H100s (no host
  // offloading). Space: t | 8, p | 8/t, d = 8/(t·p); ZeRO stage 0, 1, 2, 3 (the last three for
  // d > 1); sp off, or on (t > 1) with the tensor collectives after or overlapped (3 choices);
  // m ∈ divisors(16) = {1, 2, 4, 8, 16}; recompute ×3; v = 1 (no p > 1 divides 9); gradients
  // reduced after the backward or overlapped with it (d > 1). Plans (ZeRO × sp choices) × 3 × 5
  // × (2 for d > 1) per (t, p, d):
  //   t1 p1 d8: 4 → 120; t1 p2 d4: 120; t1 p4 d2: 120; t1 p8 d1: 15; t2 p1 d4: 4 × 3 → 360;
  //   t2 p2 d2: 360; t2 p4 d1: 3 → 45; t4 p1 d2: 360; t4 p2 d1: 45; t8 p1 d1: 45. Σ = 1590.
  // Rejected, first reason first:
  //   layers (p ∈ {2, 4, 8} does not divide 9): 120 + 120 + 15 + 360 + 45 + 45 = 705;
  //   batch (16/m sequences per microbatch over d must be whole: m·d | 16): d8 m ∈ {4, 8, 16}:
  //     4 × 3 × 3 × 2 = 72; d4 (t2) m ∈ {8, 16}: 12 × 3 × 2 × 2 = 144; d2 (t4) m = 16:
  //     12 × 3 × 2 = 72 → 288;
  //   model (9 heads over t ∈ {2, 4, 8}): t2 d4 m ∈ {1, 2, 4}: 12 × 3 × 3 × 2 = 216; t4 d2 m ∈
  //     {1, 2, 4, 8}: 12 × 3 × 4 × 2 = 288; t8 d1: 3 × 3 × 5 = 45 → 549.
  // Costed: t1 p1 d8, 4 shapes × 3 × m ∈ {1, 2} × 2 = 48 (P ≈ 0.65e9 × 16 B ≈ 10 GB fits).
  const auto result = train_search("odd_decoder_train.yaml", 8);
  CHECK(result.seen == 1590);
  CHECK(rejected(result, "layers do not divide over the pipeline") == 705);
  CHECK(rejected(result, "batch does not divide into microbatches") == 288);
  CHECK(rejected(result, "does not divide the model") == 549);
  CHECK(result.rejected_by_reason.size() == 3);
  CHECK(result.costed == 48);
  CHECK(result.ranked.size() == 48);
  // Analyses: the 24 costed without the overlap (it is derived), and one per shape that does not
  // divide the model (its first whole b; the other m divide no better): t2 8 × 3 + t4 8 × 3 +
  // t8 2 × 3 = 54.
  CHECK(result.analyses == 24 + 54);
  // The best of the 48, by hand. Every one runs the same math (1/8 of the step's tokens).
  // - recompute none: selective and full add forward work (and, under ZeRO-3, weight gathers);
  // - m = 1: m = 2 reads every weight twice (and ZeRO-3 gathers it twice), for the same FLOPs;
  // - at m = 1, with G = matmul weights × 2 B: (9 × (4·D² + 2·D·F) + V·D) = 9 × 63,700,992 +
  //   73,728,000 = 647,036,928 parameters → 1,294,073,856 B; / W_nvlink 450e9 B/s = 2.876 ms,
  //   and T_opt = a fused Adam reading the gradient (2 B) and the fp32 state (12 B: master copy
  //   and moments) and writing the state and the bf16 parameter (14 B): 28 B × 647,036,928 /
  //   3.35e12 B/s = 5.408 ms:
  //   - ZeRO-0 (DP) all-reduces the gradients once (2·(7/8)·G/W) and updates all P;
  //   - ZeRO-1 reduce-scatters them and all-gathers the updated weights (the same 2·(7/8)·G/W)
  //     and updates P/8: ZeRO-1 − DP = −(7/8)·T_opt = −4.732 ms;
  //   - ZeRO-2 moves and updates the same (it keeps only 1/8 of the gradients): a tie, broken by
  //     the ZeRO stage, ascending;
  //   - ZeRO-3 all-gathers the weights for the forward and again for the backward and
  //     reduce-scatters the gradients ((7/8)·G/W each) and updates P/8: ZeRO-3 − ZeRO-1 =
  //     (7/8)·G/W = +2.516 ms.
  // - overlapping ZeRO-1's gradient reduce-scatter (2.516 ms) with the backward: exposed
  //   max(G/ℓ, G − B/m) with ℓ = 9 layers, m = 1 and B ≥ the backward matmuls' math alone,
  //   4 × 647,036,928 × 1024 tokens / 989.4e12 FLOP/s = 2.679 ms > (8/9)·G: exposed G/9, so the
  //   overlap hides (8/9) × 2.516 = 2.237 ms.
  // Best: t1 p1 d8 megatron_3d+zero1 m1 none overlap, the plan of odd_decoder_train.yaml.
  REQUIRE(result.ranked.size() >= 2);
  const auto& best = result.ranked.front().plan;
  CHECK(best.tensor == 1);
  CHECK(best.pipeline == 1);
  CHECK(best.data == 8);
  CHECK(best.zero_stage == 1);
  CHECK(best.microbatches == 1);
  CHECK(best.recompute == rsim::Recompute::none);
  CHECK(best.overlap_gradients);
  const auto at_m1 = [&](std::int64_t zero_stage, bool overlap = false) {
    const auto found =
        std::find_if(result.ranked.begin(), result.ranked.end(), [&](const auto& candidate) {
          return candidate.plan.zero_stage == zero_stage && candidate.plan.microbatches == 1 &&
                 candidate.plan.recompute == rsim::Recompute::none &&
                 candidate.plan.overlap_gradients == overlap;
        });
    REQUIRE(found != result.ranked.end());
    return *found;
  };
  // Without the overlap the step is the run's lower bound.
  const auto direct = run_plan("odd_decoder_train.yaml", "megatron_3d", 8, 1, 1, "none", 1, 1);
  CHECK(at_m1(1).step_lower.si() == Approx(direct.bounds.total.t_lower.si()).epsilon(1e-12));
  CHECK(result.ranked.front().footprint.total().si() ==
        Approx(direct.footprint.total().si()).epsilon(1e-12));
  // The hand differences, less the collectives' latencies and the small activation reshards
  // ZeRO-3's sharded embedding table adds (a few %).
  CHECK((at_m1(1).step_lower - at_m1(0).step_lower).si() == Approx(-4.732e-3).epsilon(0.05));
  CHECK((at_m1(3).step_lower - at_m1(1).step_lower).si() == Approx(2.516e-3).epsilon(0.05));
  CHECK(at_m1(2).step_lower.si() == Approx(at_m1(1).step_lower.si()).epsilon(1e-12));
  // The gradient overlap hides (8/9) of the reduce-scatters in the expected step: their expected
  // time G is each one's α + 7 ring steps × 0.6 µs (hardware/h100_sxm.yaml) plus the bytes at
  // NVLink's 0.82 of 450 GB/s, at least 2.516 ms / 0.82 = 3.068 ms, and the backward's expected
  // math (≥ 2.679 ms / 0.80 = 3.349 ms) covers (8/9)·G. While they run under the backward they
  // take 0.15 of the SMs (NVLink's processor_usage, Calculon's systems/h100_80g_nvl8.json), so the
  // step saves (8/9)·G·(1 − 0.15). The lower bound hides every collective already: the same with
  // or without it.
  double gradients_expected = 0.0;
  for (std::size_t row = 0; row < direct.table.order.size(); ++row) {
    const auto& op = direct.graph.op(direct.table.order[row]);
    if (op.role == rsim::CollectiveRole::gradient_reduction) {
      const auto index = static_cast<Eigen::Index>(row);
      gradients_expected += direct.table.expected(index) * direct.table.counts(index);
    }
  }
  CHECK(gradients_expected > 2.516e-3 / 0.82);
  CHECK((at_m1(1, true).step_expected - at_m1(1).step_expected).si() ==
        Approx(-8.0 / 9.0 * gradients_expected * (1.0 - 0.15)).epsilon(1e-9));
  CHECK(at_m1(1, true).step_lower.si() == at_m1(1).step_lower.si());
  // ZeRO-2 keeps 1/8 of the gradients: (7/8) × 1,294,073,856 B less than ZeRO-1.
  CHECK((at_m1(1).footprint.gradients - at_m1(2).footprint.gradients).si() ==
        Approx(0.875 * 1'294'073'856.0).epsilon(0.01));
  // MFU = model FLOPs / (8 × 989.4e12 FLOP/s × the expected step): what a run would report, not
  // the bound's (95 % for GPT-3 175B on 1,024 H100s at the lower bound).
  CHECK(result.ranked.front().mfu ==
        Approx(result.model_flops / (8.0 * 989.4e12 * result.ranked.front().step_expected.si())));
}

TEST_CASE("training search counts what it rejects, and interleaving follows from one costing",
          "[search][train]") {
  // Llama 2 7B (L = 32, 32 heads, V = 32000), 8 sequences of 128 tokens on 8 H100s (no host
  // offloading); ZeRO 0–3 for d > 1 (4 ways), 0 for d = 1; for t > 1 sp off, or on with the
  // tensor collectives after or overlapped (3 ways, so 12 or 3 per (t, p, d)); m ∈ {1, 2, 4, 8};
  // v ∈ divisors(32/p): p2 → 5, p4 → 4, p8 → 3; gradients after or overlapped for d > 1 (× 2;
  // every count below for d > 1 is × 2).
  // Seen: t1p1d8 4·3·4·2 = 96; t1p2d4 4·3·4·5·2 = 480; t1p4d2 4·3·4·4·2 = 384; t1p8d1 3·4·3 =
  //   36; t2p1d4 12·3·4·2 = 288; t2p2d2 12·3·4·5·2 = 1440; t2p4d1 3·3·4·4 = 144; t4p1d2 288;
  //   t4p2d1 3·3·4·5 = 180; t8p1d1 3·3·4 = 36. Σ = 3372.
  // Memory before costing: P = 32 × (4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096
  //   = 6,738,415,616 parameters × (2 + 2 + 12) B = 107.8 GB > 80 GB replicated on one shard
  //   (t1 p1 d8 ZeRO-0: 3 × 4 × 2 = 24 plans); ZeRO-1 there needs 2 + 2 + 12/8 = 5.5 B per
  //   parameter (37.1 GB) and fits, as do 2 shards (53.9 GB).
  // Batch (m·d | 8): t1p1d8 ZeRO 1–3 m ∈ {2, 4, 8}: 3·3·3·2 = 54; t1p2d4 m ∈ {4, 8}: 4·3·2·5·2
  //   = 240; t1p4d2 m = 8: 4·3·4·2 = 96; t2p1d4: 12·3·2·2 = 144; t2p2d2: 12·3·5·2 = 360;
  //   t4p1d2: 12·3·2 = 72 → 966.
  // Interleaving (v > 1 needs p | m): t1p2d4 m = 1: 4·3·4·2 = 96; t1p4d2 m ∈ {1, 2}: 4·3·2·3·2
  //   = 144; t1p8d1 m ∈ {1, 2, 4}: 3·3·2 = 18; t2p2d2 m = 1: 12·3·4·2 = 288; t2p4d1 m ∈ {1, 2}:
  //   3·3·2·3 = 54; t4p2d1 m = 1: 3·3·4 = 36 → 636.
  // Everything divides the model (32 heads, F = 11008 = 2⁸·43, V, D over 8); the rest is costed:
  // 3372 − 24 − 966 − 636 = 1746.
  const auto result = train_search("llama2_7b_train.yaml", 8);
  CHECK(result.seen == 3372);
  CHECK(rejected(result, "does not fit in memory") == 24);
  CHECK(rejected(result, "batch does not divide into microbatches") == 966);
  CHECK(rejected(result, "interleaving needs m divisible by p") == 636);
  CHECK(result.rejected_by_reason.size() == 3);
  CHECK(result.costed == 1746);
  CHECK(result.ranked.size() == 1746);
  const auto memory = std::find_if(
      result.rejected.begin(), result.rejected.end(),
      [](const auto& rejection) { return rejection.reason == rsim::RejectionReason::memory; });
  REQUIRE(memory != result.rejected.end());
  CHECK(memory->detail.find("alone need at least 107.8 GB") != std::string::npos);
  // v = 2 derived from the v = 1 costing against analyze() at v = 2: t1 p2 d4, m = 2.
  const auto interleaved =
      std::find_if(result.ranked.begin(), result.ranked.end(), [](const auto& candidate) {
        const auto& plan = candidate.plan;
        return plan.tensor == 1 && plan.pipeline == 2 && plan.zero_stage == 0 &&
               !plan.overlap_gradients && plan.microbatches == 2 &&
               plan.recompute == rsim::Recompute::selective && plan.interleave == 2;
      });
  REQUIRE(interleaved != result.ranked.end());
  const auto direct = run_plan("llama2_7b_train.yaml", "megatron_3d", 4, 2, 2, "selective", 2);
  REQUIRE(direct.pipeline);
  CHECK(interleaved->step_lower.si() == Approx(direct.bounds.total.t_lower.si()).epsilon(1e-12));
  CHECK(interleaved->step_upper.si() == Approx(direct.bounds.total.t_upper.si()).epsilon(1e-12));
  CHECK(interleaved->t_net.si() == Approx(direct.bounds.total.t_net.si()).epsilon(1e-12));
  CHECK(interleaved->bubble.si() == Approx(direct.pipeline->bubble_lower.si()).epsilon(1e-12));
  // (p − 1)/(v·m + p − 1) = 1/(2·2 + 1) = 0.2.
  CHECK(interleaved->bubble_fraction == Approx(0.2));
  // Pruning drops no plan that fits: costing every plan ranks the same 1746.
  const auto scenario =
      rsim::load_scenario(rsim::test::source_path("tests/data/train/llama2_7b_train.yaml"));
  rsim::TrainingSearchOptions exhaustive;
  exhaustive.prune = false;
  auto roofs = rsim::scenario_roofs(scenario, "");
  roofs.host_memory.reset();
  const auto all = rsim::search_training_plans(scenario, roofs, 8, exhaustive);
  CHECK(all.seen == 3372);
  CHECK(rsim::training_search_to_json(all, 0)["ranked"] ==
        rsim::training_search_to_json(result, 0)["ranked"]);
}

TEST_CASE("training search places the axes in every distinct order", "[search][train]") {
  // Llama 2 7B on 16 H100s: two NVLink nodes of 8 over InfiniBand. t2 p2 d4, each order taking
  // the node's room (8) in turn, an axis inside while it divides what is left, else on ib:
  //   model>data>stage: model 2 (room 4), data 4 (room 1), stage ib;
  //   model>stage>data: model 2 (4), stage 2 (2), data 4 > 2 → ib;
  //   data>model>stage: data 4 (2), model 2 (1), stage ib = the first;
  //   data>stage>model: data 4 (2), stage 2 (1), model ib;
  //   stage>model>data: = the second; stage>data>model: = the fourth.
  // Three distinct placements: orders 0, 1 and 3.
  const auto result = train_search("llama2_7b_train.yaml", 16);
  std::set<std::int64_t> placements;
  for (const auto& candidate : result.ranked) {
    if (candidate.plan.tensor == 2 && candidate.plan.pipeline == 2) {
      placements.insert(candidate.plan.placement);
    }
  }
  CHECK(placements == std::set<std::int64_t>{0, 1, 3});
  CHECK(rsim::training_axis_orders().at(1) == "model>stage>data");
  // Order 1 costed as the scenario with that mesh: step time = analyze()'s lower bound.
  rsim::TrainingPlan wanted;
  wanted.tensor = 2;
  wanted.pipeline = 2;
  wanted.data = 4;
  wanted.placement = 1;
  wanted.microbatches = 2;
  const auto& placed = find_plan(result, wanted);
  CHECK(placed.mesh == "model: \"2 over nvlink\", data: \"4 over ib\", stage: \"2 over nvlink\"");
  CHECK(placed.plan.label() == "t2 p2 d4 megatron_3d m2 none v1 place:model>stage>data");
  const auto direct =
      rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "megatron_3d"},
                                                     {"plan.mesh.model", "2 over nvlink"},
                                                     {"plan.mesh.data", "4 over ib"},
                                                     {"plan.mesh.stage", "2 over nvlink"},
                                                     {"workload.microbatches", "2"},
                                                     {"workload.recompute", "none"}});
  CHECK(placed.step_lower.si() == Approx(direct.bounds.total.t_lower.si()).epsilon(1e-12));
  CHECK(placed.t_net.si() == Approx(direct.bounds.total.t_net.si()).epsilon(1e-12));
  // The default order puts the data axis in the node and the stages over ib instead: a
  // different plan with its own network time.
  wanted.placement = 0;
  CHECK(find_plan(result, wanted).t_net.si() != placed.t_net.si());
  // An axis larger than the node that takes its room first spans it and the next tier: t1 p16
  // d1 puts 8 stages in each node (7 of every 8 stage boundaries on NVLink) instead of all 16
  // over ib, less network time.
  wanted = rsim::TrainingPlan{};
  wanted.pipeline = 16;
  const auto& spanning = find_plan(result, wanted);
  CHECK(spanning.mesh == "stage: \"16 over nvlink+ib\"");
  const auto hierarchical =
      rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "megatron_3d"},
                                                     {"plan.mesh.data", "1 over nvlink"},
                                                     {"plan.mesh.stage", "16 over nvlink+ib"},
                                                     {"workload.microbatches", "1"},
                                                     {"workload.recompute", "none"}});
  const auto flat =
      rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "megatron_3d"},
                                                     {"plan.mesh.data", "1 over nvlink"},
                                                     {"plan.mesh.stage", "16 over ib"},
                                                     {"workload.microbatches", "1"},
                                                     {"workload.recompute", "none"}});
  CHECK(spanning.step_lower.si() == Approx(hierarchical.bounds.total.t_lower.si()).epsilon(1e-12));
  CHECK(hierarchical.bounds.total.t_net < flat.bounds.total.t_net);
}

TEST_CASE("training search on one device without a network (Thor)", "[search][train]") {
  // tests/data/train/odd_decoder_thor.yaml: 4 sequences on one Thor: t = p = d = 1, one
  // placement, ZeRO 0, no sp, no overlaps, no host memory (unified), m ∈ {1, 2, 4}, recompute ×3:
  // 9 plans, all fitting (P ≈ 0.65e9 × 16 B ≈ 10 GB < 128 GB). Best: m = 1 reads the weights once
  // and recompute none adds no forward work.
  const auto result = train_search("odd_decoder_thor.yaml", 1, 0, true);
  CHECK(result.seen == 9);
  CHECK(result.costed == 9);
  REQUIRE_FALSE(result.ranked.empty());
  CHECK(result.ranked.front().plan.label() == "t1 p1 d1 megatron_3d m1 none");
  CHECK(result.ranked.front().mesh.empty());
}

TEST_CASE("an interrupted training search reports what it finished", "[search][train]") {
  const auto scenario =
      rsim::load_scenario(rsim::test::source_path("tests/data/train/odd_decoder_train.yaml"));
  const auto roofs = rsim::scenario_roofs(scenario, "");
  std::atomic<bool> cancel{false};
  rsim::TrainingSearchOptions options;
  options.threads = 1;
  options.cancel = &cancel;
  // Ctrl-C after the first plan shape: one thread starts no other.
  options.progress = [&](std::size_t, std::size_t) { cancel.store(true); };
  const auto stopped = rsim::search_training_plans(scenario, roofs, 8, options);
  const auto whole = rsim::search_training_plans(scenario, roofs, 8);
  CHECK(stopped.cancelled);
  CHECK_FALSE(whole.cancelled);
  CHECK(stopped.shapes == whole.shapes);
  CHECK(stopped.shapes_searched == 1);
  CHECK(whole.shapes_searched == whole.shapes);
  CHECK(stopped.seen == whole.seen);
  CHECK(stopped.costed < whole.costed);
  std::ostringstream text;
  rsim::write_training_search_text(text, stopped, 3);
  CHECK(text.str().find(fmt::format("Interrupted: 1 of {} plan shapes searched", whole.shapes)) !=
        std::string::npos);
  CHECK(rsim::training_search_to_json(stopped, 3)["cancelled"] == true);
}

TEST_CASE("training search ranks the same on one thread and on many", "[search][train]") {
  const auto serial =
      rsim::training_search_to_json(train_search("odd_decoder_train.yaml", 8, 1), 0);
  const auto parallel =
      rsim::training_search_to_json(train_search("odd_decoder_train.yaml", 8, 4), 0);
  CHECK(serial.dump() == parallel.dump());
  // Ranked by expected step time, ties by the bounds then plan order: a strict order.
  const auto result = train_search("odd_decoder_train.yaml", 8);
  for (std::size_t index = 1; index < result.ranked.size(); ++index) {
    CHECK(result.ranked[index - 1].step_expected <= result.ranked[index].step_expected);
  }
  std::ostringstream text;
  rsim::write_training_search_text(text, result, 3);
  CHECK(text.str().find("1590 plans seen, 48 costed") != std::string::npos);
  CHECK_THROWS_AS(train_search("odd_decoder_train.yaml", 0), rsim::InputError);
  // An inference scenario is not searched as training.
  const auto inference =
      rsim::load_scenario(rsim::test::source_path("scenarios/shard_d_vs_batch.yaml"));
  CHECK_THROWS_AS(rsim::search_training_plans(inference, rsim::scenario_roofs(inference, ""), 2),
                  rsim::InputError);
}

TEST_CASE("a tensor axis beyond the NVLink node gets its training threshold", "[search][train]") {
  // t = 16 over nvlink+ib: the largest degree covering the collectives is searched over degrees
  // that are not whole NVLink groups too (e.g. 20 = 2.5 nodes); each is costed at whole groups
  // (24) instead of failing the run.
  const auto run =
      rsim::test::run_scenario("gpt3_175b_train_h100", {{"plan.mesh.model", "16 over nvlink+ib"},
                                                        {"plan.mesh.data", "4 over ib"},
                                                        {"workload.microbatches", "384"}});
  const auto tensor = std::find_if(run.training_thresholds.begin(), run.training_thresholds.end(),
                                   [](const auto& threshold) { return !threshold.data; });
  REQUIRE(tensor != run.training_thresholds.end());
  CHECK(tensor->size == 16);
  CHECK(tensor->largest_degree >= 1);
}
