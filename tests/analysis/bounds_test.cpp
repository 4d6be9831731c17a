// SPDX-License-Identifier: MIT
#include "sim/analysis/bounds.hpp"

#include "run_fixture.hpp"

#include <catch2/catch.hpp>

namespace {

// A made-up accelerator with round numbers: 1e12 FLOP/s bf16, 1e9 B/s HBM.
rsim::Roofs round_roofs() {
  rsim::Roofs roofs;
  roofs.hardware = "round";
  roofs.vector_path = "bf16";
  rsim::ComputePath path;
  path.name = "bf16";
  path.peak = rsim::FlopsPerSecond(1e12);
  roofs.compute.push_back(path);
  rsim::MemoryTier tier;
  tier.name = "hbm";
  tier.bandwidth = rsim::BytesPerSecond(1e9);
  roofs.memory.push_back(tier);
  return roofs;
}

rsim::Op square_matmul(std::int64_t batch, std::int64_t width, std::int64_t count,
                       const std::string& stage) {
  auto op = rsim::make_matmul(
      {batch, width, width, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16"});
  op.count = count;
  op.stage = stage;
  op.block = rsim::Block::layer;
  return op;
}

}  // namespace

TEST_CASE("graph bounds: Σmax, Σsum and max(ΣT_math, ΣT_mem), weighted by count", "[bounds]") {
  rsim::OpGraph graph;
  // A: B = D = F = 1000: FLOPs 2e9 → T_math 2 ms; bytes 2 · 3e6 = 6e6 → T_mem 6 ms.
  const auto a = graph.add_op(square_matmul(1000, 1000, 1, "s1"));
  // B (× 3): B = 1, D = F = 1000: FLOPs 2e6 → 2 µs; bytes 2 · (1000 + 1e6 + 1000) = 2,004,000
  // → 2.004 ms.
  const auto b = graph.add_op(square_matmul(1, 1000, 3, "s1"));
  // C: B = D = F = 10,000: FLOPs 2e12 → 2 s; bytes 2 · 3e8 = 6e8 → 0.6 s (compute-bound).
  const auto c = graph.add_op(square_matmul(10000, 10000, 1, "s2"));
  graph.add_edge(a, b, "x");
  graph.add_edge(b, c, "x");
  graph.stages = {{"s1", 1, 1}, {"s2", 1, 1}};
  const auto table = rsim::cost_graph(graph, round_roofs());
  const auto bounds = rsim::compute_bounds(graph, table);
  const auto& total = bounds.total;
  // ΣT_math = 2 ms + 3 · 2 µs + 2 s = 2.002006 s
  CHECK(total.t_math.si() == Approx(2.002006));
  // ΣT_mem = 6 ms + 3 · 2.004 ms + 0.6 s = 0.612012 s
  CHECK(total.t_mem.si() == Approx(0.612012));
  // Σmax = 6 ms + 3 · 2.004 ms + 2 s = 2.012012 s
  CHECK(total.t_lower.si() == Approx(2.012012));
  // Σsum = 8 ms + 3 · 2.006 ms + 2.6 s = 2.614018 s
  CHECK(total.t_upper.si() == Approx(2.614018));
  // max(ΣT_math, ΣT_mem) = 2.002006 s
  CHECK(total.t_overlapped.si() == Approx(2.002006));
  CHECK(total.bound == rsim::Bound::compute);
  REQUIRE(bounds.stages.size() == 2);
  // Stage s1 alone: lower = 6 + 6.012 = 12.012 ms, memory-bound.
  CHECK(bounds.stages[0].totals.t_lower.si() == Approx(0.012012));
  CHECK(bounds.stages[0].totals.bound == rsim::Bound::memory);
}

TEST_CASE("π0.5 on Thor: stage bounds add up and order as overlapped ≤ lower ≤ upper",
          "[bounds][pi05]") {
  const auto result = rsim::test::run_scenario("pi05_thor");
  double lower = 0.0;
  double upper = 0.0;
  for (const auto& stage : result.bounds.stages) {
    lower += stage.totals.t_lower.si();
    upper += stage.totals.t_upper.si();
    CHECK(stage.totals.t_overlapped <= stage.totals.t_lower);
    CHECK(stage.totals.t_lower <= stage.totals.t_upper);
  }
  CHECK(result.bounds.total.t_lower.si() == Approx(lower));
  CHECK(result.bounds.total.t_upper.si() == Approx(upper));
  // The action expert reads its 430,098,464 fp8 weights in each of 10 steps: 4.301 GB at
  // 273 GB/s is 15.75 ms, a floor under the action stage's memory time.
  const auto& action = result.bounds.stages[2];
  CHECK(action.stage == "action");
  CHECK(action.totals.t_mem.si() > 4'300'984'640.0 / 273e9);
  CHECK(action.totals.bound == rsim::Bound::memory);
}
