// SPDX-License-Identifier: MIT
#include "sim/explore/sweep.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/html.hpp"
#include "sim/report/sweep_report.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

std::size_t count_in(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

std::vector<std::string> values_of(const rsim::SweepAxis& axis) { return axis.values; }

// Sweep options on `threads` threads, with batch lines on or off and an optional cancel flag.
rsim::SweepOptions on_threads(std::int64_t threads, bool batch_lines = true,
                              const std::atomic<bool>* cancel = nullptr) {
  rsim::SweepOptions options;
  options.threads = threads;
  options.batch_lines = batch_lines;
  options.cancel = cancel;
  return options;
}

// A shipped scenario swept over two axes (`KEY=VALUES` each).
rsim::SweepResult sweep_over(const char* scenario, std::string_view first, std::string_view second,
                             const rsim::SweepOptions& options = {}) {
  return rsim::run_sweep(
      rsim::test::source_path(scenario), {},
      {rsim::parse_sweep_axis(first, "--over"), rsim::parse_sweep_axis(second, "--over")}, "", {},
      options);
}

// The crossovers of a shipped scenario swept over `batches` (workload.batch) × `variants`.
std::vector<rsim::SweepCrossover> variant_crossovers(const char* scenario, std::string_view batches,
                                                     std::string_view variants) {
  return sweep_over(scenario, fmt::format("workload.batch={}", batches),
                    fmt::format("variant={}", variants))
      .crossovers;
}

}  // namespace

TEST_CASE("sweep axes: lists, ranges, steps and doubling", "[sweep]") {
  const auto list = rsim::parse_sweep_axis("variant=baseline,bf16", "--over");
  CHECK(list.key == "variant");
  CHECK(values_of(list) == std::vector<std::string>{"baseline", "bf16"});
  CHECK_FALSE(list.numeric);
  // 1..10:3 → 1, 4, 7, 10
  CHECK(values_of(rsim::parse_sweep_axis("workload.batch=1..10:3", "--over")) ==
        std::vector<std::string>{"1", "4", "7", "10"});
  // 1..100:log2 → 1, 2, 4, …, 64, then the end of the range, 100
  const auto doubling = rsim::parse_sweep_axis("workload.batch=1..100:log2", "--over");
  CHECK(values_of(doubling) ==
        std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64", "100"});
  CHECK(doubling.numeric);
  CHECK(rsim::parse_sweep_axis("workload.batch=3..5", "--over").values.size() == 3);
  for (const char* bad :
       {"workload.batch", "=1,2", "workload.batch=", "workload.batch=0..4", "workload.batch=5..1",
        "workload.batch=1..4:0", "workload.batch=1..x", "variant=a,,b"}) {
    INFO(bad);
    CHECK_THROWS_AS(rsim::parse_sweep_axis(bad, "--over"), rsim::InputError);
  }
}

TEST_CASE("every sweep point equals a single run at the same values, bit for bit", "[sweep]") {
  const auto path = rsim::test::source_path("scenarios/pi05_thor.yaml");
  const std::vector<rsim::SweepAxis> axes{
      rsim::parse_sweep_axis("workload.batch=1,3", "--over"),
      rsim::parse_sweep_axis("variant=baseline,nvfp4", "--over")};
  const auto result = rsim::run_sweep(path, {}, axes, "", {}, on_threads(2, false));
  // 2 batches × 2 variants, the last axis fastest.
  REQUIRE(result.points.size() == 4);
  CHECK(result.values(1) == std::vector<std::string>{"1", "nvfp4"});
  CHECK(result.values(2) == std::vector<std::string>{"3", "baseline"});
  for (std::size_t index = 0; index < result.points.size(); ++index) {
    const rsim::SweepPoint& point = result.points[index];
    const std::vector<std::string> values = result.values(index);
    REQUIRE(point.error == 0);
    auto scenario = rsim::load_scenario(
        path,
        {{{"workload.batch", values[0]}}, values[1] == "baseline" ? std::string() : values[1]});
    rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
    const auto run = rsim::analyze(std::move(scenario), std::move(roofs));
    CHECK(point.total.t_lower.si() == run.bounds.total.t_lower.si());
    CHECK(point.total.t_upper.si() == run.bounds.total.t_upper.si());
    CHECK(point.memory.si() == run.footprint.total().si());
    CHECK(point.capacity.si() == run.footprint.capacity.si());
    CHECK(point.fits() == run.footprint.fits());
    CHECK(point.total.bound == run.bounds.total.bound);
    CHECK(result.label(point.total.roof) == rsim::bound_label(run.bounds.total));
  }
}

TEST_CASE("an axis that repeats a value sweeps it twice", "[sweep]") {
  // Two bases with the same values share one loaded scenario; every point is still costed
  // (the repeats as the first), not dropped or crashed on.
  const auto result = sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=2,4",
                                 "plan=shard_d,shard_d,shard_batch", on_threads(1, false));
  REQUIRE(result.points.size() == 6);
  for (std::size_t batch = 0; batch < 2; ++batch) {
    const rsim::SweepPoint& first = result.points[3 * batch];
    const rsim::SweepPoint& repeat = result.points[3 * batch + 1];
    REQUIRE(first.valid());
    REQUIRE(repeat.valid());
    CHECK(repeat.total.t_lower.si() == first.total.t_lower.si());
    CHECK(repeat.memory.si() == first.memory.si());
    CHECK(result.points[3 * batch + 2].valid());
  }
}

TEST_CASE("parallel and serial sweeps print the same thing", "[sweep]") {
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  const std::vector<rsim::SweepAxis> axes{
      rsim::parse_sweep_axis("workload.batch=16..512:log2", "--over"),
      rsim::parse_sweep_axis("plan=shard_d,shard_batch", "--over")};
  auto serial = rsim::sweep_to_json(rsim::run_sweep(path, {}, axes, "", {}, on_threads(1)));
  auto parallel = rsim::sweep_to_json(rsim::run_sweep(path, {}, axes, "", {}, on_threads(2)));
  serial.erase("threads");
  parallel.erase("threads");
  CHECK(serial.dump() == parallel.dump());
  CHECK_FALSE(serial["crossovers"].empty());
}

TEST_CASE("a sweep's roof crossover is the threshold root finder's value", "[sweep]") {
  // quantization_v5e's whole run turns compute-bound at the batch `rsim threshold` finds; the
  // sweep brackets it between grid values and bisects on the same cost model.
  const auto path = rsim::test::source_path("scenarios/quantization_v5e.yaml");
  const auto result = rsim::run_sweep(
      path, {}, {rsim::parse_sweep_axis("workload.batch=1..1024:log2", "--over")}, "", {});
  rsim::ThresholdQuery query;
  query.key = "batch";
  const auto threshold = rsim::threshold_scenario(path, {}, query, "", {});
  REQUIRE(threshold.value);
  REQUIRE(result.crossovers.size() == 1);
  CHECK(result.crossovers.front().what == "memory (hbm) → compute");
  CHECK(result.crossovers.front().at == *threshold.value);
}

TEST_CASE("invalid points are reported, a cancelled sweep keeps what it finished", "[sweep]") {
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  // shard_batch splits the batch over 2 devices: batch 1 does not divide.
  const auto result =
      sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=1,2", "plan=shard_batch");
  CHECK_THAT(result.label(result.points[0].error), Catch::Contains("does not divide"));
  CHECK(result.points[1].valid());
  const std::atomic<bool> cancelled{true};
  const auto stopped =
      rsim::run_sweep(path, {}, {rsim::parse_sweep_axis("workload.batch=2,4", "--over")}, "", {},
                      on_threads(1, true, &cancelled));
  CHECK(stopped.cancelled);
  CHECK_FALSE(stopped.points[0].evaluated);
  CHECK_THROWS_AS(rsim::run_sweep(path, {}, {}, "", {}), rsim::InputError);
  // An axis given twice would leave the point's values ambiguous: refused, naming the key.
  CHECK_THROWS_WITH(rsim::run_sweep(path, {},
                                    {rsim::parse_sweep_axis("workload.batch=2", "--over"),
                                     rsim::parse_sweep_axis("workload.batch=4", "--over")},
                                    "", {}),
                    Catch::Contains("varies workload.batch twice"));
}

TEST_CASE("a sweep of a bad scenario file is one error naming file:line on any thread count",
          "[sweep]") {
  // The baseline is validated with the bases (in parallel): its error, not one per base or point.
  const auto path = std::filesystem::temp_directory_path() / "rsim_sweep_bad_baseline.yaml";
  {
    std::ofstream file(path);
    file << "name: bad\nhardware: h100_sxm\nmodel: llama3_8b\n"
            "workload: {phase: prefill, batch: 1, seq_len: 2048}\nprecision: bf17\n";
  }
  // Cancelled before anything ran (Ctrl-C at once), it is still that error, not an empty sweep.
  const std::atomic<bool> cancelled{true};
  for (const auto* cancel : {static_cast<const std::atomic<bool>*>(nullptr), &cancelled}) {
    for (const std::int64_t threads : {1, 2}) {
      CHECK_THROWS_WITH(
          rsim::run_sweep(path, {},
                          {rsim::parse_sweep_axis("workload.batch=1..64", "--over"),
                           rsim::parse_sweep_axis("precision=bf16,fp8", "--over")},
                          "", {}, on_threads(threads, true, cancel)),
          Catch::Contains("rsim_sweep_bad_baseline.yaml:5:") && Catch::Contains("bf17"));
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("the sweep's CSV: a header, one row per point, errors quoted per RFC 4180", "[sweep]") {
  const auto result =
      sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=1,2", "plan=shard_batch");
  std::ostringstream out;
  rsim::write_sweep_csv(out, result);
  std::istringstream lines(out.str());
  std::string header;
  std::string invalid;
  std::string valid;
  std::getline(lines, header);
  std::getline(lines, invalid);
  std::getline(lines, valid);
  CHECK(header ==
        "workload.batch,plan,t_lower_s,t_expected_s,t_upper_s,t_math_s,t_mem_s,t_net_s,bound,"
        "memory_per_device_bytes,fits,error");
  // Batch 1 does not divide over 2 devices: nine empty figures, then the message.
  CHECK_THAT(invalid, Catch::StartsWith("1,shard_batch,,,,,,,,,,"));
  CHECK_THAT(invalid, Catch::Contains("does not divide"));
  // Batch 2: the figures at 17 significant digits (a double read back is the same double).
  const rsim::SweepFigures& total = result.points[1].total;
  CHECK_THAT(valid, Catch::StartsWith(fmt::format("2,shard_batch,{:.17g},{:.17g},{:.17g},",
                                                  total.t_lower.si(), total.t_expected.si(),
                                                  total.t_upper.si())));
  CHECK(total.t_expected >= total.t_lower);
  CHECK_THAT(valid, Catch::EndsWith(",true,"));
  CHECK(rsim::csv_field("plain") == "plain");
  CHECK(rsim::csv_field("a, \"b\"") == "\"a, \"\"b\"\"\"");
}

TEST_CASE("the sweep chart: one band per series, the bisection's crossover marked", "[sweep]") {
  const auto result = sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=1,16,64,256",
                                 "plan=shard_d,shard_batch");
  const auto chart = rsim::sweep_chart(result);
  REQUIRE(chart.series.size() == 2);
  CHECK(chart.series[0].name == "shard_d");
  // Batch 1 does not divide over shard_batch's 2 devices: the chart keeps x where both exist.
  CHECK(chart.series[0].x == std::vector<double>{16.0, 64.0, 256.0});
  CHECK(chart.log_x);  // 256 / 16 ≥ 8
  const auto fastest = std::find_if(
      result.crossovers.begin(), result.crossovers.end(),
      [](const auto& crossover) { return crossover.kind == rsim::SweepCrossover::Kind::fastest; });
  REQUIRE(fastest != result.crossovers.end());
  REQUIRE(chart.marked.size() == 1);
  CHECK(chart.marked[0].x == static_cast<double>(fastest->at));
  CHECK(chart.marked[0].first == 0);
  CHECK(chart.marked[0].second == 1);
  const std::string svg = rsim::render_series_svg(chart);
  CHECK_THAT(svg, Catch::Contains(fmt::format("crossover at {}", fastest->at)));
  // Issue 25: titled by the scenario's name, axes say what they count, a marker per grid point
  // (2 series × 3 batches), a tick wherever a series' roof changes.
  CHECK(chart.title ==
        "Shard over D vs over batch on 2 TPU v5e chips (How to Scale Your Model, roofline "
        "chapter)");
  CHECK(chart.x_label == "workload.batch (sequences)");
  CHECK(chart.y_label == "time per run, per device");
  CHECK(count_in(svg, "class=\"point\"") == 6);
  std::size_t changes = 0;
  for (const auto& series : chart.series) {
    REQUIRE(series.roofs.size() == series.x.size());
    for (std::size_t i = 1; i < series.roofs.size(); ++i) {
      changes += series.roofs[i] != series.roofs[i - 1] ? 1 : 0;
    }
  }
  CHECK(changes > 0);  // shard_batch leaves the memory roof for compute as the batch grows
  CHECK(count_in(svg, "class=\"roof-change\"") == changes);
}

TEST_CASE("sweep chart points that do not fit are drawn apart and the legend fits its names",
          "[sweep]") {
  rsim::SeriesChart chart;
  chart.x_label = "batch";
  const std::string long_name = std::string(60, 'n');
  chart.series = {{long_name, {1, 2, 4}, {1, 2, 4}, {2, 3, 5}, {true, true, false}, {}}};
  const std::string svg = rsim::render_series_svg(chart);
  CHECK(count_in(svg, "class=\"point\"") == 2);
  CHECK(count_in(svg, "class=\"point unfit\"") == 1);
  CHECK_THAT(svg, Catch::Contains("does not fit in memory"));
  // Width: plot right edge 730 + 40 + 30 + the name's estimated width (60 × 0.6 × 12 = 432).
  CHECK_THAT(svg, Catch::Contains("width=\"1232\""));
}

TEST_CASE("crossovers follow the values' text: reordered and repeated values change nothing",
          "[sweep]") {
  // The finder groups points into lines by their other values' text and walks the lines in that
  // text's order, so listing the series and the sequence lengths in another order, with repeats,
  // finds the same crossovers in the same order (a repeat joins its first's line). Grouping by
  // position in the axis instead would find each repeat's crossovers again, or in another order.
  const auto path = rsim::test::source_path("scenarios/shard_d_vs_batch.yaml");
  const auto crossovers = [&](std::string_view variants, std::string_view seq_lens) {
    const auto result = rsim::run_sweep(
        path, {},
        {rsim::parse_sweep_axis("workload.batch=1..1024:7", "--over"),
         rsim::parse_sweep_axis(fmt::format("workload.seq_len={}", seq_lens), "--over"),
         rsim::parse_sweep_axis(fmt::format("variant={}", variants), "--over")},
        "", {});
    return rsim::sweep_to_json(result)["crossovers"];
  };
  const auto listed = crossovers("baseline,shard_batch,shard_d_D4096", "1,64");
  const auto reordered = crossovers("shard_d_D4096,baseline,shard_batch,baseline", "64,1,64");
  REQUIRE(listed.size() > 10);
  CHECK(reordered.dump() == listed.dump());
}

TEST_CASE("a crossover's search evaluates each batch once and stops at its first invalid series",
          "[sweep]") {
  // Llama 3 70B prefill on 1,024 H100s: TP 4 × DP 256 is the faster at batch 4096 (1.988 s
  // against 1.996 s lower bound), FSDP 1024 at 5120. Their data axes divide only multiples of
  // 256 and of 1024, so between the two grid values only 4352, 4608 and 4864 are valid, for
  // TP 4 × DP 256 alone: the change is at 5120 and the point before it is 4096. Each of the
  // 1,023 batches between is evaluated once for TP 4 × DP 256 (the first series; an invalid one
  // ends the batch), FSDP 1024 too at those three, and both at 4096 and 5120:
  // 1,023 + 3 + 2 · 2 = 1,030 evaluations (4,116 when every scan evaluated every series afresh).
  const auto crossovers = variant_crossovers("scenarios/llama3_70b_1024_h100.yaml",
                                             "4096..5120:1024", "tp4_dp256,fsdp1024");
  REQUIRE(crossovers.size() == 1);
  const rsim::SweepCrossover& crossover = crossovers.front();
  CHECK(crossover.what == "tp4_dp256 → fsdp1024 fastest");
  CHECK(crossover.at == 5120);
  CHECK(crossover.evaluations == 1030);
}

TEST_CASE("a crossover between neighbouring values evaluates each of them once per series",
          "[sweep]") {
  // shard_d_vs_batch on 2 TPU v5e chips: batch sharding needs an even batch, so at 1025 only
  // shard_d_D4096 is valid (it wins there) and at 1024 and 1026 shard_batch wins. Grid values 1
  // apart leave nothing to bisect: each change evaluates its two values once per series, with
  // an invalid point among them (the limit's every series is evaluated, errors included):
  // 2 values × 2 series = 4 evaluations each.
  const auto crossovers = variant_crossovers("scenarios/shard_d_vs_batch.yaml", "1024..1026",
                                             "shard_batch,shard_d_D4096");
  REQUIRE(crossovers.size() == 2);
  CHECK(crossovers[0].what == "shard_batch → shard_d_D4096 fastest");
  CHECK(crossovers[0].at == 1025);
  CHECK(crossovers[1].what == "shard_d_D4096 → shard_batch fastest");
  CHECK(crossovers[1].at == 1026);
  for (const rsim::SweepCrossover& crossover : crossovers) {
    CHECK(crossover.evaluations == 4);
  }
}

TEST_CASE("a sweep cancelled while it loads its scenarios evaluates nothing", "[sweep]") {
  // One scenario is loaded per sequence length (the batch is swept along each), 64 of them,
  // after the baseline: 65 reported as loading progresses. Cancelled (as Ctrl-C would) once 3
  // are in, the loading stops short of 65, no point is evaluated, and the sweep says so.
  std::atomic<bool> cancel{false};
  std::atomic<std::size_t> loaded{0};
  std::atomic<std::size_t> to_load{0};
  rsim::SweepOptions options;
  options.threads = 2;
  options.cancel = &cancel;
  options.loading_progress = [&](std::size_t done, std::size_t total) {
    loaded = std::max<std::size_t>(loaded, done);
    to_load = total;
    if (done >= 3) {
      cancel = true;
    }
  };
  const auto result = sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=2,4",
                                 "workload.seq_len=1..64", options);
  CHECK(result.cancelled);
  CHECK(to_load == 65);
  CHECK(loaded >= 3);
  CHECK(loaded < 65);
  CHECK(result.points.size() == 128);
  CHECK(std::none_of(result.points.begin(), result.points.end(),
                     [](const rsim::SweepPoint& point) { return point.evaluated; }));
  CHECK(result.crossovers.empty());
}

TEST_CASE("a sweep chart with no point in every series says so instead of crashing", "[sweep]") {
  // shard_batch splits the batch over 2 chips: batches 1 and 3 do not divide, so no point is
  // valid and every series of the chart is empty (as after a Ctrl-C while loading). The SVG and
  // the HTML report still render, with a nominal axis and a note, and no NaN coordinate.
  const auto result =
      sweep_over("scenarios/shard_d_vs_batch.yaml", "workload.batch=1,3", "plan=shard_batch");
  REQUIRE_FALSE(result.points[0].valid());
  REQUIRE_FALSE(result.points[1].valid());
  const std::string svg = rsim::render_series_svg(rsim::sweep_chart(result));
  CHECK_THAT(svg, Catch::Contains("no value of workload.batch (sequences) has a point in every "
                                  "series"));
  CHECK_THAT(svg, !Catch::Contains("nan"));
  std::ostringstream html;
  rsim::write_sweep_html(html, result);
  CHECK_THAT(html.str(), Catch::Contains("no value of workload.batch (sequences) has a point"));
}
