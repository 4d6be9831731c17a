// SPDX-License-Identifier: MIT
// rsim's speed, measured (issue: sweeps and search): a whole scenario evaluation, the pipeline
// without YAML, the tiling search of one GEMM, and sweep points per second.
#include "sim/analysis/request.hpp"
#include "sim/cost/tile_search.hpp"
#include "sim/cost/tiling.hpp"
#include "sim/explore/batch_line.hpp"
#include "sim/explore/search.hpp"
#include "sim/explore/serving.hpp"
#include "sim/explore/sweep.hpp"

#include <fmt/format.h>

#include <benchmark/benchmark.h>
#include <filesystem>
#include <string>

namespace {

std::filesystem::path source(const std::string& relative) {
  return std::filesystem::path(RSIM_SOURCE_DIR) / relative;
}

// Load + validate + build + cost + bound: what `rsim run` does, minus printing.
void BM_RunScenario(benchmark::State& state, const std::string& name) {
  const auto path = source("scenarios/" + name + ".yaml");
  for (auto _ : state) {
    rsim::Scenario scenario = rsim::load_scenario(path);
    rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
    benchmark::DoNotOptimize(rsim::analyze(std::move(scenario), std::move(roofs)));
  }
}
BENCHMARK_CAPTURE(BM_RunScenario, pi05_thor, std::string("pi05_thor"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunScenario, llama3_70b_tp8_h100, std::string("llama3_70b_tp8_h100"))
    ->Unit(benchmark::kMillisecond);

// The pipeline alone on an already validated scenario (no YAML work).
void BM_AnalyzeOnly(benchmark::State& state) {
  const rsim::Scenario scenario = rsim::load_scenario(source("scenarios/pi05_thor.yaml"));
  const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  for (auto _ : state) {
    benchmark::DoNotOptimize(rsim::analyze(scenario, roofs));
  }
}
BENCHMARK(BM_AnalyzeOnly)->Unit(benchmark::kMillisecond);

// The best tile of one π0.5 prefix GEMM in Thor's 228 KiB of SMEM.
void BM_BestTile(benchmark::State& state) {
  const rsim::GemmShape shape{1.0, 968, 32768, 2048, 1.0, 1.0, 1.0, 4.0};
  const rsim::TileBudget budget{rsim::Bytes(228.0 * 1024), rsim::Bytes(256.0 * 1024)};
  for (auto _ : state) {
    benchmark::DoNotOptimize(rsim::best_gemm_tile(shape, budget));
  }
}
BENCHMARK(BM_BestTile)->Unit(benchmark::kMicrosecond);

// Sweep points per second (items/s), on every core: Llama-3-70B prefill on 1024 H100s over
// batches 1024, 2048, … × 4 plans (TP 8 × DP 128, TP 16 × DP 64, TP 4 × DP 256, FSDP 1024),
// every point valid, the whole run_sweep timed (YAML, probes and result included). Args: batch
// lines on (1, the default) or analyze() at every point (0); how many batches (the grid is
// 4 × that: 1 measures the fixed cost, 16384 the rate once it is paid).
void BM_SweepLlama70b1024(benchmark::State& state) {
  const auto path = source("scenarios/llama3_70b_1024_h100.yaml");
  const std::int64_t batches = state.range(1);
  const std::vector<rsim::SweepAxis> axes{
      rsim::parse_sweep_axis(fmt::format("workload.batch=1024..{}:1024", 1024 * batches), "bench"),
      rsim::parse_sweep_axis("variant=baseline,tp16_dp64,tp4_dp256,fsdp1024", "bench")};
  rsim::SweepOptions options;
  options.crossovers = false;
  options.batch_lines = state.range(0) != 0;
  std::size_t points = 0;
  for (auto _ : state) {
    const auto result = rsim::run_sweep(path, {}, axes, "", {}, options);
    points += result.points.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
}
BENCHMARK(BM_SweepLlama70b1024)
    ->Args({1, 1})
    ->Args({1, 1024})
    ->Args({1, 16384})
    ->Args({0, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One point of a batch line on one thread (items/s: points/s per core): the TP 8 × DP 128 plan
// of the sweep above at batches 1024, 2048, …, 1024².
void BM_BatchLinePoint(benchmark::State& state) {
  const rsim::Scenario scenario =
      rsim::load_scenario(source("scenarios/llama3_70b_1024_h100.yaml"));
  const rsim::BatchLine line(scenario, rsim::scenario_roofs(scenario, ""));
  auto workspace = line.workspace();
  std::int64_t batch = 0;
  for (auto _ : state) {
    batch = batch % (1024 * 1024) + 1024;
    benchmark::DoNotOptimize(line.evaluate(batch, *workspace));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BatchLinePoint)->Unit(benchmark::kMicrosecond);

// Inference plans per second (items/s: plans seen; costed/s: plans given a time): `rsim search`
// of Llama-3-70B prefill on 16,384 H100s.
void BM_SearchLlama70b16384(benchmark::State& state) {
  const rsim::Scenario scenario = rsim::load_scenario(source("scenarios/llama3_70b_tp8_h100.yaml"));
  const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  std::int64_t seen = 0;
  std::int64_t costed = 0;
  for (auto _ : state) {
    const auto result = rsim::search_plans(scenario, roofs, 16384, rsim::SearchObjective::latency);
    seen += result.seen;
    costed += static_cast<std::int64_t>(result.ranked.size());
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(seen);
  state.counters["costed"] =
      benchmark::Counter(static_cast<double>(costed), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SearchLlama70b16384)->Unit(benchmark::kMillisecond)->UseRealTime();

// Training plans per second: `rsim search` of GPT-3 175B on 1024 H100s (every core), keeping
// the best 10 as `rsim search --top 10` does. items/s counts the plans of the space (seen);
// costed/s those given a step time; analyses/s the analyze() runs they came from.
void BM_TrainingSearchGpt3(benchmark::State& state) {
  const rsim::Scenario scenario =
      rsim::load_scenario(source("scenarios/gpt3_175b_train_h100.yaml"));
  const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  std::int64_t seen = 0;
  std::int64_t costed = 0;
  std::int64_t analyses = 0;
  for (auto _ : state) {
    rsim::TrainingSearchOptions options;
    options.keep = 10;
    const auto result = rsim::search_training_plans(scenario, roofs, 1024, options);
    seen += result.seen;
    costed += result.costed;
    analyses += result.analyses;
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(seen);
  state.counters["costed"] =
      benchmark::Counter(static_cast<double>(costed), benchmark::Counter::kIsRate);
  state.counters["analyses"] =
      benchmark::Counter(static_cast<double>(analyses), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TrainingSearchGpt3)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// Serving (issue 27: 100,000 requests in under a second on 2 cores): the shipped Llama 3 70B
// scenario with 100,000 Poisson requests at 16 requests/s (below its capacity, ≈ 20/s), whole
// runs: the iteration costs built (batch lines, prefill lines on the grid) and the simulation.
// items/s counts requests.
void BM_Serve100k(benchmark::State& state) {
  const rsim::Scenario scenario = rsim::load_scenario(
      source("scenarios/llama3_70b_serve_h100.yaml"),
      {{{"workload.requests", "100000"}, {"workload.arrivals", "{rate: 16}"}}, ""});
  const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  for (auto _ : state) {
    benchmark::DoNotOptimize(rsim::simulate_serving(scenario, roofs));
  }
  state.SetItemsProcessed(state.iterations() * 100'000);
}
BENCHMARK(BM_Serve100k)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
