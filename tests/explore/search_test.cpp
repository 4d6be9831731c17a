// SPDX-License-Identifier: MIT
// The inference plan search: every preset and mesh of a scenario over N devices, ranked.
#include "sim/explore/search.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/search_report.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace {

rsim::SearchResult search(const std::string& name, std::int64_t devices,
                          rsim::SearchObjective objective = rsim::SearchObjective::latency) {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/" + name + ".yaml"));
  const auto roofs = rsim::scenario_roofs(scenario, "");
  return rsim::search_plans(scenario, roofs, devices, objective);
}

}  // namespace

TEST_CASE("plan search on 2 chips: batch splitting wins below the critical D (scaling book)",
          "[search]") {
  // Gemma 2B (D = 2048), 1024 sequences of 1 token, 2 TPU v5e chips. Candidates: one device
  // (single, 2 replicas), model = 2 (megatron_tp, sequence_parallel, shard_d, shard_batch),
  // data = 2 (data_parallel, fsdp), stage = 2 (pipeline: 9 of the 18 layers each): 8, none
  // rejected.
  const auto result = search("shard_d_vs_batch", 2);
  CHECK(result.seen == 8);
  CHECK(result.ranked.size() == 8);
  CHECK(result.rejected.empty());
  // Splitting the batch needs no communication: each chip runs 512 sequences with all weights.
  // data_parallel and shard_batch shard the same axis and tie; the stated tie rule (upper bound,
  // then preset name) puts data_parallel first.
  REQUIRE(result.ranked.size() >= 2);
  CHECK(result.ranked[0].preset == "data_parallel");
  CHECK(result.ranked[1].preset == "shard_batch");
  CHECK(result.ranked[0].total.t_net.si() == 0.0);
  const auto half =
      rsim::test::run_scenario("shard_d_vs_batch", {{"plan", "single"}, {"workload.batch", "512"}});
  CHECK(result.ranked[0].total.t_lower.si() == Approx(half.bounds.total.t_lower.si()));
  // D = 2048 is far below the critical D of 8755.6: shard_d's all-reduce makes it slower than
  // any batch split (How to Scale Your Model, roofline chapter).
  const auto shard_d =
      std::find_if(result.ranked.begin(), result.ranked.end(),
                   [](const auto& candidate) { return candidate.preset == "shard_d"; });
  REQUIRE(shard_d != result.ranked.end());
  CHECK(shard_d->total.t_lower > result.ranked[0].total.t_lower);
  CHECK(shard_d->total.bound == rsim::Bound::network);
}

TEST_CASE("plan search counts what it rejects, by reason", "[search]") {
  // 16 chips: n | 16 devices per replica, n = data × stage × model. Without stages, per n:
  // data-only 2 presets, model-only 4, each mixed split 1 (n = 1: single): 1 + (2+4) + (2+1+4) +
  // (2+1+1+4) + (2+1+1+1+4) = 31. With p > 1 stages, one pipeline preset per split of n / p into
  // data × model, τ(n / p) of them (τ: the number of divisors): n = 2: 1; n = 4: τ(2) + τ(1) = 3;
  // n = 8: 3 + 2 + 1 = 6; n = 16: 4 + 3 + 2 + 1 = 10; 20 more, 51 in all.
  // Rejected: Gemma 2B's 8 query heads over model = 16 (megatron_tp, sequence_parallel: 2).
  // Its 18 layers over 4, 8 or 16 stages split unevenly (the busiest stage holds 5, 3 or 2) and
  // are costed so. Every other plan divides (batch 1024, embed 2048).
  const auto result = search("shard_d_vs_batch", 16);
  CHECK(result.seen == 51);
  CHECK(result.rejected.size() == 2);
  for (const auto& rejection : result.rejected) {
    CHECK(rejection.reason == rsim::RejectionReason::does_not_divide);
    CHECK(rejection.mesh == "model: \"16 over ici\"");
  }
  CHECK(result.ranked.size() == 49);
}

TEST_CASE("plan search is deterministic and marks the Pareto front", "[search]") {
  const auto first = rsim::search_to_json(search("shard_d_vs_batch", 4), 0);
  const auto second = rsim::search_to_json(search("shard_d_vs_batch", 4), 0);
  CHECK(first.dump() == second.dump());
  // Each candidate's mesh axis by axis (a CSV column each): data_parallel over the 4 chips.
  for (const auto& candidate : first["ranked"]) {
    if (candidate["preset"] == "data_parallel" && candidate["devices_per_replica"] == 4) {
      CHECK(candidate["mesh_axes"]["data"]["size"] == 4);
      CHECK(candidate["mesh_axes"]["data"]["network"] == "ici");
    }
  }
  const auto result = search("shard_d_vs_batch", 4, rsim::SearchObjective::throughput);
  // Ranked by sequences per device-second, best first; the best is on the Pareto front.
  for (std::size_t index = 1; index < result.ranked.size(); ++index) {
    CHECK(result.ranked[index - 1].sequences_per_device_s >=
          result.ranked[index].sequences_per_device_s);
  }
  CHECK(result.ranked.front().pareto);
  // Cost (device-seconds per sequence) is throughput's reciprocal: the same order, and for the best
  // plan devices × expected time / batch (1024 sequences).
  const auto cost = search("shard_d_vs_batch", 4, rsim::SearchObjective::cost);
  REQUIRE(cost.ranked.size() == result.ranked.size());
  for (std::size_t index = 0; index < cost.ranked.size(); ++index) {
    CHECK(cost.ranked[index].mesh == result.ranked[index].mesh);
    CHECK(cost.ranked[index].preset == result.ranked[index].preset);
  }
  const auto& best = cost.ranked.front();
  CHECK(1.0 / best.sequences_per_device_s ==
        Approx(static_cast<double>(best.devices) * best.total.t_expected.si() / 1024.0));
  CHECK_THROWS_AS(search("shard_d_vs_batch", 0), rsim::InputError);
}

TEST_CASE("divisors pair up to the square root and a search refuses a runaway device count",
          "[search]") {
  CHECK(rsim::divisors(1) == std::vector<std::int64_t>{1});
  CHECK(rsim::divisors(36) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 9, 12, 18, 36});
  CHECK(rsim::divisors(97) == std::vector<std::int64_t>{1, 97});
  const auto powers = rsim::divisors(std::int64_t{1} << 24);
  REQUIRE(powers.size() == 25);  // 2^0 … 2^24
  CHECK(powers.back() == std::int64_t{1} << 24);
  CHECK(std::is_sorted(powers.begin(), powers.end()));
  // Issue 23 #5: --devices 4611686018427387904 ran trial division for ever (2^30 took 13 s).
  CHECK_THROWS_WITH(rsim::check_search_devices(std::int64_t{1} << 62),
                    Catch::Contains("--devices 4611686018427387904: expected a whole number "
                                    "from 1 to 16777216"));
  CHECK_THROWS_WITH(rsim::check_search_devices(0), Catch::Contains("--devices 0"));
  CHECK_NOTHROW(rsim::check_search_devices(16384));
}

TEST_CASE("a mixture of experts is searched with expert parallelism too", "[search][moe]") {
  // Mixtral 8x7B decode on 8 H100s. Per n | 8 devices per replica: n = 1: single (1); n = 2:
  // data-only 2 + model-only 5 (megatron_tp, sequence_parallel, shard_d, shard_batch,
  // expert_parallel) = 7; n = 4: 2 + 5 + one mixed split (2 × 2) = 8; n = 8: 2 + 5 + two mixed
  // (2 × 4, 4 × 2) = 9. 1 + 7 + 8 + 9 = 25. Pipeline plans (32 layers split over 2, 4 or 8
  // stages): n = 2: 1, n = 4: 3, n = 8: 6 (as in the test above): 35. The scenario's own plan
  // (expert_parallel over 8 on NVLink) is the generated one under another axis name: counted
  // once.
  const auto result = search("mixtral_8x7b_decode_h100", 8);
  CHECK(result.seen == 35);
  const auto expert = std::find_if(result.ranked.begin(), result.ranked.end(), [](const auto& c) {
    return c.preset == "expert_parallel" && c.mesh == "model: \"8 over nvlink\"";
  });
  CHECK(expert != result.ranked.end());
  // The pipeline presets are among the ranked: stages alone and with tensor parallelism.
  for (const char* preset : {"pipeline", "pipeline_tp"}) {
    INFO(preset);
    CHECK(std::any_of(result.ranked.begin(), result.ranked.end(),
                      [&](const auto& c) { return c.preset == preset; }));
  }
}

TEST_CASE("the scenario's own plan is always a candidate", "[search]") {
  // shard_d_vs_batch on 2 chips: 8 generated plans (see above). Its file's plan, shard_d over
  // 2 chips, is one of them; the same plan with the batch rule written out as replicated is a
  // custom plan ("shard_d+") no preset reproduces: a ninth candidate.
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  const auto scenario = rsim::load_scenario(
      path, {{{"plan", "{preset: shard_d, mesh: {model: 2 over ici}, rules: {batch: null}}"}}, {}});
  const auto roofs = rsim::scenario_roofs(scenario, "");
  const auto result = rsim::search_plans(scenario, roofs, 2, rsim::SearchObjective::latency);
  CHECK(result.seen == 9);
  const auto own = std::find_if(result.ranked.begin(), result.ranked.end(),
                                [](const auto& c) { return c.preset == "shard_d+"; });
  REQUIRE(own != result.ranked.end());
  CHECK(own->mesh == "model: \"2 over ici\"");
}
