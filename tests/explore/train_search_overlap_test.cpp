// SPDX-License-Identifier: MIT
// The training plan search's schedule choices, each derived from one costing: the scenario's
// weight-gather overlap kept, tensor collectives overlapped with their matmuls, offloading to host
// memory.
#include "explore/train_search_fixture.hpp"
#include "sim/report/search_report.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

using namespace rsim::test::train_search;

TEST_CASE("training search keeps the scenario's weight-gather overlap as rsim run does",
          "[search][train]") {
  // Llama 2 7B on 8 H100s under ZeRO-3 (t1 p1 d8, m = 1, no recomputation): every weight is
  // gathered before its use. The scenario says its engine prefetches them (overlap_weights: FSDP,
  // XLA); the search is no judge of that and keeps it, so the plan's expected step is what
  // analyze() of the same plan with the overlap gives, and less than without it.
  const auto search = [](bool overlap_weights) {
    const auto scenario = rsim::load_scenario(
        rsim::test::source_path("tests/data/train/llama2_7b_train.yaml"),
        {{{"workload.overlap_weights", overlap_weights ? "true" : "false"}}, ""});
    auto roofs = rsim::scenario_roofs(scenario, "");
    roofs.host_memory.reset();
    return rsim::search_training_plans(scenario, roofs, 8, {});
  };
  rsim::TrainingPlan wanted;
  wanted.data = 8;
  wanted.zero_stage = 3;
  wanted.microbatches = 1;
  wanted.recompute = rsim::Recompute::none;
  const auto overlapped = search(true);
  const auto& candidate = find_plan(overlapped, wanted);
  const auto direct =
      rsim::test::run_train("llama2_7b_train.yaml", {{"plan", candidate.plan_yaml},
                                                     {"workload.microbatches", "1"},
                                                     {"workload.recompute", "none"},
                                                     {"workload.overlap_weights", "true"}});
  CHECK(candidate.step_expected.si() == Approx(direct.bounds.total.t_expected.si()).epsilon(1e-12));
  CHECK(find_plan(search(false), wanted).step_expected > candidate.step_expected);
}

TEST_CASE("training search: tensor collectives overlapped with their matmuls", "[search][train]") {
  // Llama 2 7B, t2 p1 d4 megatron_3d_sp, m = 1: each replica runs 8/4 = 2 sequences × 128 =
  // 256 tokens. Under sequence parallelism each layer's forward has 4 tensor-axis collectives
  // (all-gather before q/kv and gate_up, reduce-scatter after o and down) and its backward 6:
  // their 4 conjugates (q's and kv's input gradients add up and are reduce-scattered once, as
  // after Megatron-LM's fused QKV GEMM; the all-gathered output gradients of o and down serve
  // their weight gradients too) and 2 re-gathers for the
  // weight gradients (gate_up's input, and the attention norm's output once for q and kv), as
  // Megatron-LM does. The LM head adds 3 (a gather, its weight gradient's gather, a scatter).
  // Each moves [256, 4096] bf16 = 2,097,152 B over t = 2 on NVLink: (t−1)/t × 2,097,152 B /
  // 450e9 B/s = 2.330169 µs; (10 × 32 + 3) × 2.330169 µs = 323 × 2.330169 µs = 0.752645 ms.
  // The matmuls they hide under are memory-bound at 256 tokens: a layer's weights / t =
  // 202,383,360 × 2 B / 2 / 3.35e12 B/s = 60 µs per pass and layer (1.9 ms forward, twice that
  // backward), so (t−1)/t of them (0.97 ms, 1.9 ms) exceeds the collectives of each pass
  // (0.30 ms, 0.45 ms): a ring step hides them all, exposed max(0, C − (t−1)/t·G) = 0.
  const auto result = train_search("llama2_7b_train.yaml", 8);
  rsim::TrainingPlan wanted;
  wanted.tensor = 2;
  wanted.data = 4;
  wanted.sequence_parallel = true;
  const auto& after = find_plan(result, wanted);
  wanted.overlap_tensor = true;
  const auto& overlapped = find_plan(result, wanted);
  CHECK(overlapped.tensor_hidden.si() == Approx(0.752645e-3).epsilon(1e-6));
  // The plan run as a scenario of its own, and its tensor-axis all-gathers and reduce-scatters.
  const auto sequence_parallel = [](const std::string& recompute) {
    return rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "megatron_3d_sp"},
                                                          {"plan.mesh.model", "2 over nvlink"},
                                                          {"plan.mesh.data", "4 over nvlink"},
                                                          {"workload.microbatches", "1"},
                                                          {"workload.recompute", recompute}});
  };
  const auto tensor_collectives = [](const rsim::RunResult& run) {
    std::int64_t collectives = 0;
    for (const auto vertex : run.graph.topological_order()) {
      const auto& op = run.graph.op(vertex);
      if (op.kind == rsim::OpKind::collective && op.mesh_axis == "model" &&
          (op.collective.kind == rsim::CollectiveKind::all_gather ||
           op.collective.kind == rsim::CollectiveKind::reduce_scatter)) {
        collectives += op.count;
      }
    }
    return collectives;
  };
  const auto direct = sequence_parallel("none");
  CHECK(tensor_collectives(direct) == 323);
  // A gather that serves two matmuls feeds both, and a gradient's gather waits for the gradient:
  // q's weight gradient reads the attention norm's output gathered once for kv's.
  const auto& graph = direct.graph;
  const auto gather_into = [&](std::string_view consumer) {
    for (const auto vertex : graph.topological_order()) {
      if (graph.op(vertex).name != consumer) {
        continue;
      }
      for (const auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
        const auto& source = graph.op(boost::source(edge, graph.graph()));
        if (source.kind == rsim::OpKind::collective &&
            source.collective.kind == rsim::CollectiveKind::all_gather) {
          return boost::in_degree(boost::source(edge, graph.graph()), graph.graph()) > 0;
        }
      }
    }
    return false;
  };
  CHECK(gather_into("q_proj.wgrad"));
  CHECK(gather_into("kv_proj.wgrad"));
  CHECK(gather_into("o_proj.wgrad"));
  CHECK(gather_into("o_proj.dgrad"));
  // Full recomputation re-runs the layers' forward, gathering 4 times per layer like it (q and
  // kv share the attention norm's gather): (4 + 4 + 6) × 32 + 3 = 451.
  CHECK(tensor_collectives(sequence_parallel("full")) == 451);
  // The overlap shortens the expected step (the collectives it hides are exposed without it);
  // the lower bound already hides every collective under the device work (issue 21 #3a): equal.
  CHECK(overlapped.tensor_hidden.si() > 0.0);
  CHECK(after.step_expected > overlapped.step_expected);
  CHECK(after.step_lower.si() == overlapped.step_lower.si());
  // The upper bound assumes no overlap: unchanged.
  CHECK(overlapped.step_upper.si() == after.step_upper.si());
  CHECK(after.tensor_hidden.si() == 0.0);
  CHECK(overlapped.plan.label() == "t2 p1 d4 megatron_3d_sp m1 none tp-overlap");
}

TEST_CASE("training search: offloading to host memory, derived by hand", "[search][train]") {
  // Llama 2 7B on 8 H100s with their host memory (hardware/h100_sxm.yaml: 256 GiB and PCIe
  // Gen5 64 GB/s each way per GPU). P = 6,738,415,616 parameters, of which the 32 layers hold
  // 32 × (4·4096² + 3·4096·11008 + 2·4096) = 32 × 202,383,360 = 6,476,267,520.
  const auto result = train_search("llama2_7b_train.yaml", 8, 0, true);
  // Every plan of the search without host memory (3372) is one of 8 offloading choices.
  CHECK(result.seen == 8 * 3372);
  // t1 p1 d8 ZeRO-0 needs 16 B × P = 107.8 GB replicated (rejected without host memory).
  // Offloading the weights and the optimizer state keeps 2 of the 32 layers' in HBM:
  //   weights: 2 B × P − (15/16) × 2 B × 6,476,267,520 = 13,476,831,232 − 12,143,001,600
  //            = 1,333,829,632 B;
  //   optimizer state: 12 B × P − (15/16) × 12 B × 6,476,267,520 = 80,860,987,392 −
  //            72,858,009,600 = 8,002,977,792 B;
  //   host: 12,952,535,040 + 77,715,210,240 = 90,667,745,280 B ≤ 256 GiB.
  // At m = 1 the forward and the backward each stream the layers' weights in (12,952,535,040 B
  // / 64e9 B/s = 202.4 ms, against ~14 ms and ~28 ms of math plus a 52 ms gradient
  // all-reduce), and the optimizer step reads and writes the offloaded weights and state once
  // (90,667,745,280 B / 64e9 = 1.4167 s, against ~60 ms in HBM): every pass waits on the link,
  // so the step's lower bound is (3 × 12,952,535,040 + 77,715,210,240) / 64e9 = 1.821450240 s.
  rsim::TrainingPlan wanted;
  wanted.data = 8;
  wanted.offload_weights = true;
  wanted.offload_optimizer = true;
  const auto& offloaded = find_plan(result, wanted);
  CHECK(offloaded.footprint.weights.si() == Approx(1'333'829'632.0).epsilon(1e-12));
  CHECK(offloaded.footprint.optimizer_state.si() == Approx(8'002'977'792.0).epsilon(1e-12));
  CHECK(offloaded.host_bytes.si() == Approx(90'667'745'280.0).epsilon(1e-12));
  CHECK(offloaded.step_lower.si() == Approx(1.821450240).epsilon(1e-9));
  CHECK(offloaded.t_host.si() == Approx(1.821450240).epsilon(1e-9));
  CHECK(offloaded.plan.label() == "t1 p1 d8 megatron_3d m1 none offload:weights+optimizer");
  // Offloading the saved activations (t1 p1 d8 ZeRO-1, which fits without): HBM keeps two
  // layers' and the head's, the link carries every layer's out in the forward and back in the
  // backward (m · ℓ · per-layer bytes each way), checked against the direct run's parts.
  const auto direct = run_plan("llama2_7b_train.yaml", "megatron_3d", 8, 1, 1, "none", 1, 1);
  REQUIRE(direct.training_memory);
  const auto& parts = *direct.training_memory;
  wanted = rsim::TrainingPlan{};
  wanted.data = 8;
  wanted.zero_stage = 1;
  wanted.offload_activations = true;
  const auto& activations = find_plan(result, wanted);
  CHECK(activations.footprint.activations.si() ==
        Approx((parts.layer_saved * 2.0 + parts.head).si()).epsilon(1e-12));
  CHECK(activations.host_bytes.si() == Approx(parts.layer_saved.si() * 32.0).epsilon(1e-12));
  CHECK(activations.t_host.si() ==
        Approx(2.0 * parts.layer_saved.si() * 32.0 / 64e9).epsilon(1e-12));
  // A rejection stands for every overlap choice of its plan, so it shows none of them. At
  // t1 p1 d8 ZeRO-0, m = 1, the 4 offloading choices that keep the optimizer state in HBM do not
  // fit (at least 1.33 GB of weights + 13.48 GB of gradients + 80.86 GB of state > 80 GB); the 4
  // that offload it do (13.48 + 13.48 + 8.00 GB at most, plus the activations).
  const auto rejected_choices = std::count_if(
      result.rejected.begin(), result.rejected.end(), [](const rsim::TrainingRejection& rejection) {
        return rejection.reason == rsim::RejectionReason::memory && rejection.plan.data == 8 &&
               rejection.plan.zero_stage == 0 && rejection.plan.microbatches == 1 &&
               rejection.plan.recompute == rsim::Recompute::none;
      });
  CHECK(rejected_choices == 4);
  for (const auto& rejection : result.rejected) {
    CHECK_FALSE(rejection.plan.overlap_gradients);
    CHECK_FALSE(rejection.plan.overlap_tensor);
  }
  // The same with 20 GB of host memory, where a choice is rejected after an earlier one of the
  // same plan was costed: t1 p1 d8 ZeRO-1 offloading the weights and the optimizer state needs
  // 12,952,535,040 B + 12 B × 6,476,267,520 / 8 = 9,714,401,280 B = 22.67 GB of host memory
  // (each alone fits).
  auto small_host = rsim::scenario_roofs(
      rsim::load_scenario(rsim::test::source_path("tests/data/train/llama2_7b_train.yaml")), "");
  small_host.host_memory->capacity = rsim::Bytes(20e9);
  const auto host_limited = rsim::search_training_plans(
      rsim::load_scenario(rsim::test::source_path("tests/data/train/llama2_7b_train.yaml")),
      small_host, 8);
  const auto host_rejection = std::find_if(
      host_limited.rejected.begin(), host_limited.rejected.end(), [](const auto& rejection) {
        return rejection.reason == rsim::RejectionReason::host_memory && rejection.plan.data == 8 &&
               rejection.plan.zero_stage == 1 && rejection.plan.offload_weights &&
               !rejection.plan.offload_activations && rejection.plan.offload_optimizer;
      });
  REQUIRE(host_rejection != host_limited.rejected.end());
  CHECK(host_rejection->detail.find("needs 22.67 GB of host memory") != std::string::npos);
  for (const auto& rejection : host_limited.rejected) {
    CHECK_FALSE(rejection.plan.overlap_gradients);
    CHECK_FALSE(rejection.plan.overlap_tensor);
  }
  // Pruning (the memory floor with offloading) drops no plan that fits.
  const auto scenario =
      rsim::load_scenario(rsim::test::source_path("tests/data/train/llama2_7b_train.yaml"));
  rsim::TrainingSearchOptions exhaustive;
  exhaustive.prune = false;
  const auto all =
      rsim::search_training_plans(scenario, rsim::scenario_roofs(scenario, ""), 8, exhaustive);
  CHECK(all.costed == result.costed);
  CHECK(rsim::training_search_to_json(all, 0)["ranked"] ==
        rsim::training_search_to_json(result, 0)["ranked"]);
  // Keeping only the best 7 keeps exactly the first 7 of the whole ranking.
  const auto best = train_search("llama2_7b_train.yaml", 8, 0, true, 7);
  CHECK(best.costed == result.costed);
  REQUIRE(best.ranked.size() == 7);
  CHECK(rsim::training_search_to_json(best, 7) == rsim::training_search_to_json(result, 7));
}
