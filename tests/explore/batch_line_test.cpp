// SPDX-License-Identifier: MIT
#include "sim/explore/batch_line.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/report/sweep_report.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

namespace {

// Every figure a sweep reports, and the time sums behind them, exactly equal.
void require_same(const rsim::Totals& line, const rsim::Totals& run) {
  REQUIRE(line.t_lower.si() == run.t_lower.si());
  REQUIRE(line.t_upper.si() == run.t_upper.si());
  REQUIRE(line.t_math.si() == run.t_math.si());
  REQUIRE(line.t_mem.si() == run.t_mem.si());
  REQUIRE(line.t_net.si() == run.t_net.si());
  REQUIRE(line.t_overlapped.si() == run.t_overlapped.si());
  REQUIRE(line.t_expected.si() == run.t_expected.si());
  REQUIRE(rsim::bound_label(line) == rsim::bound_label(run));
  REQUIRE(line.t_by_tier.size() == run.t_by_tier.size());
  for (std::size_t tier = 0; tier < line.t_by_tier.size(); ++tier) {
    REQUIRE(line.t_by_tier[tier].first == run.t_by_tier[tier].first);
    REQUIRE(line.t_by_tier[tier].second.si() == run.t_by_tier[tier].second.si());
  }
}

}  // namespace

TEST_CASE("a batch line equals analyze() at every batch, bit for bit, on every scenario",
          "[sweep][batch_line]") {
  // Batches 1–12 (most of which some plan does not divide), and multiples of 7 and 64 further
  // out, then batches large enough that the tile searches answer from their keys' settled
  // winners (past the rows); each variant of each shipped scenario where the line is usable.
  // One workspace per line, so after its first point only the ops whose sizes scale are
  // re-costed. Where it declines a point, analyze() must fail there too or shard it otherwise
  // (the sweep then runs analyze()).
  std::set<std::string> usable;
  for (const auto& entry :
       std::filesystem::directory_iterator(rsim::test::source_path("scenarios"))) {
    const rsim::Scenario baseline = rsim::load_scenario(entry.path());
    std::vector<std::string> variants{""};
    for (const auto& variant : baseline.variant_names) {
      variants.push_back(variant);
    }
    for (const std::string& variant : variants) {
      const rsim::Scenario scenario = rsim::load_scenario(entry.path(), {{}, variant});
      const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
      const rsim::BatchLine line(scenario, roofs);
      if (!line.usable()) {
        continue;
      }
      usable.insert(entry.path().stem().string() + (variant.empty() ? "" : ":" + variant));
      auto workspace = line.workspace();
      for (const std::int64_t batch :
           {1, 2, 3, 4, 5, 6, 8, 12, 49, 64, 448, 1024, 65536, 3 << 20, 1 << 24, 7 << 21}) {
        INFO(entry.path().filename().string() << " " << variant << " batch " << batch);
        rsim::Scenario at = scenario;
        at.workload.batch = batch;
        std::optional<rsim::RunResult> run;
        try {
          run.emplace(rsim::analyze(at, roofs));
        } catch (const rsim::InputError&) {
        }
        const auto point = line.evaluate(batch, *workspace);
        if (!point) {
          continue;  // the sweep asks analyze() (tested below: the same output either way)
        }
        REQUIRE(run.has_value());
        require_same(point->total, run->bounds.total);
        REQUIRE(point->footprint.total().si() == run->footprint.total().si());
        REQUIRE(point->footprint.weights.si() == run->footprint.weights.si());
        REQUIRE(point->footprint.kv_cache.si() == run->footprint.kv_cache.si());
        REQUIRE(point->footprint.capacity.si() == run->footprint.capacity.si());
      }
    }
  }
  // The scenarios sweeps are benchmarked and documented on take the fast path.
  for (const char* name :
       {"pi05_thor", "llama3_70b_1024_h100", "llama3_70b_1024_h100:fsdp1024", "llama3_70b_tp8_h100",
        "shard_d_vs_batch", "llama3_70b_decode_tp8_h100"}) {
    INFO(name);
    CHECK(usable.count(name) == 1);
  }
}

TEST_CASE("a batch line declines what it cannot follow, saying why", "[sweep][batch_line]") {
  const auto train =
      rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_train_h100.yaml"));
  const rsim::BatchLine training(train, rsim::scenario_roofs(train, ""));
  CHECK_FALSE(training.usable());
  CHECK_THAT(training.why(), Catch::Contains("training"));
  // An inference pipeline: analyze() adds its bubble after costing.
  const auto staged =
      rsim::load_scenario(rsim::test::source_path("scenarios/llama3_70b_tp8_h100.yaml"),
                          {{{"plan.preset", "pipeline_dp"},
                            {"plan.mesh.data", "2 over nvlink"},
                            {"plan.mesh.stage", "4 over nvlink"},
                            {"plan.mesh.model", "1 over nvlink"}},
                           ""});
  const rsim::BatchLine pipeline(staged, rsim::scenario_roofs(staged, ""));
  CHECK_FALSE(pipeline.usable());
  CHECK_THAT(pipeline.why(), Catch::Contains("pipeline"));
  // A plan splitting the batch over 2 devices: odd batches are not whole per device.
  const auto shard = rsim::load_scenario(rsim::test::source_path("scenarios/shard_d_vs_batch.yaml"),
                                         {{{"plan.preset", "shard_batch"}}, ""});
  const rsim::BatchLine line(shard, rsim::scenario_roofs(shard, ""));
  REQUIRE(line.usable());
  auto workspace = line.workspace();
  CHECK(line.evaluate(3, *workspace) == nullptr);
  CHECK(line.evaluate(4, *workspace) != nullptr);
}

TEST_CASE("sweeps along batch lines print what analyze() at every point prints",
          "[sweep][batch_line]") {
  // Errors, crossovers (bisected through the same evaluator) and every figure.
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  const std::vector<rsim::SweepAxis> axes{
      rsim::parse_sweep_axis("workload.batch=1..600:7", "--over"),
      rsim::parse_sweep_axis("plan=shard_d,shard_batch", "--over")};
  rsim::SweepOptions fast;
  rsim::SweepOptions slow;
  slow.batch_lines = false;
  auto with_lines = rsim::sweep_to_json(rsim::run_sweep(path, {}, axes, "", {}, fast));
  auto without = rsim::sweep_to_json(rsim::run_sweep(path, {}, axes, "", {}, slow));
  CHECK(with_lines.dump() == without.dump());
  CHECK_FALSE(with_lines["crossovers"].empty());
  // The batch between two other axes: each grid point finds its base by arithmetic on its
  // index (the other axes' mixed radix), which must be the base its values name.
  const std::vector<rsim::SweepAxis> middle{
      rsim::parse_sweep_axis("plan=shard_d,shard_batch", "--over"),
      rsim::parse_sweep_axis("workload.batch=2..64:log2", "--over"),
      rsim::parse_sweep_axis("precision=bf16,int8", "--over")};
  const auto swept = rsim::run_sweep(path, {}, middle, "", {}, fast);
  REQUIRE(swept.points.size() == 2 * 6 * 2);
  // Mixed radix 2 × 6 × 2, the last axis fastest: index = 12·plan + 2·batch + precision.
  CHECK(swept.values(0) == std::vector<std::string>{"shard_d", "2", "bf16"});
  CHECK(swept.values(3) == std::vector<std::string>{"shard_d", "4", "int8"});
  CHECK(swept.value(12, 0) == "shard_batch");
  CHECK(swept.values(23) == std::vector<std::string>{"shard_batch", "64", "int8"});
  for (std::size_t index = 0; index < swept.points.size(); ++index) {
    const rsim::SweepPoint& point = swept.points[index];
    const std::vector<std::string> values = swept.values(index);
    rsim::Scenario scenario = rsim::load_scenario(
        path,
        {{{"plan.preset", values[0]}, {"workload.batch", values[1]}, {"precision", values[2]}},
         ""});
    rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
    const auto run = rsim::analyze(std::move(scenario), std::move(roofs));
    REQUIRE(point.error == 0);
    CHECK(point.total.t_lower.si() == run.bounds.total.t_lower.si());
    CHECK(point.total.t_upper.si() == run.bounds.total.t_upper.si());
  }
}

TEST_CASE("a fixed tile that does not fit at the line's probe still costs the batches it fits",
          "[sweep][batch_line]") {
  // tests/data/valid/fixed_tile_tp8.yaml: TP 8 (probe batch 8), 512 tokens per sequence, SMEM
  // tile 4096×8×16. Its X slices take 2 · min(4096, M) · 16 · 2 B: 128 KiB at batch 4
  // (M = 2048), within H100's 228 KiB; 256 KiB at batch 8 (M = 4096), beyond it.
  const auto path = rsim::test::source_path("tests/data/valid/fixed_tile_tp8.yaml");
  rsim::SweepOptions serial;
  serial.threads = 1;
  serial.batch_lines = false;
  const auto result = rsim::run_sweep(
      path, {}, {rsim::parse_sweep_axis("workload.batch=1,2,4,8", "--over")}, "", {}, serial);
  REQUIRE(result.points.size() == 4);
  for (std::size_t index = 0; index < 3; ++index) {
    CHECK(result.points[index].valid());
  }
  CHECK_THAT(result.label(result.points[3].error), Catch::Contains("tile 4096×8×16"));
}
