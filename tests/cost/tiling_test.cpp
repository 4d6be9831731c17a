// SPDX-License-Identifier: MIT
#include "sim/cost/tiling.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tile_candidates.hpp"
#include "sim/cost/tile_search.hpp"
#include "sim/spec/config.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

using rsim::DType;

namespace {

rsim::GemmShape bf16_gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return rsim::GemmShape{1.0, m, n, k, 2.0, 2.0, 2.0, 4.0};
}

rsim::Op matmul(std::int64_t batch, std::int64_t contract, std::int64_t out, DType dtype,
                const std::string& path) {
  return rsim::make_matmul({batch, contract, out, dtype, dtype, dtype, path, false});
}

const rsim::TierCost& tier_of(const rsim::OpCost& cost, const std::string& name) {
  for (const rsim::TierCost& tier : cost.tiers) {
    if (tier.tier == name) {
      return tier;
    }
  }
  FAIL("no tier " << name);
  return cost.tiers.front();
}

}  // namespace

TEST_CASE("tiled traffic follows s_x·M·K·⌈N/bn⌉ + s_w·K·N·⌈M/bm⌉ + s_o·M·N", "[tiling]") {
  const auto shape = bf16_gemm(1024, 1024, 1024);
  // 128×128×32: X re-read ⌈1024/128⌉ = 8 times: 2·1024·1024·8 = 16,777,216; W likewise;
  // the output once: 2·1024² = 2,097,152. Footprint 2·(128·32·2 + 32·128·2) + 128·128·4 = 98,304.
  const auto square = rsim::gemm_traffic(shape, {128, 128, 32});
  CHECK(square.bytes.si() == Approx(16'777'216.0 * 2 + 2'097'152.0));
  CHECK(square.footprint.si() == Approx(98'304.0));
  CHECK_FALSE(square.x_resident);
  // 256×64×64: X ⌈1024/64⌉ = 16 times (33,554,432), W ⌈1024/256⌉ = 4 times (8,388,608).
  const auto wide = rsim::gemm_traffic(shape, {256, 64, 64});
  CHECK(wide.bytes.si() == Approx(33'554'432.0 + 8'388'608.0 + 2'097'152.0));
  // M = 1000 is not a multiple of 128: W is re-read ⌈1000/128⌉ = 8 times (the last block is
  // partial); X 2·1000·1024·8 = 16,384,000, W 2·1024·1024·8 = 16,777,216, out 2·1000·1024.
  const auto ragged = rsim::gemm_traffic(bf16_gemm(1000, 1024, 1024), {128, 128, 32});
  CHECK(ragged.bytes.si() == Approx(16'384'000.0 + 16'777'216.0 + 2'048'000.0));
  // A tile larger than the matrix is clamped to it, and both operands are then resident.
  const auto whole = rsim::gemm_traffic(bf16_gemm(64, 64, 64), {128, 128, 128});
  CHECK(whole.tile == rsim::Tile{64, 64, 64});
  CHECK((whole.x_resident && whole.w_resident));
  CHECK(whole.bytes.si() == Approx(rsim::ideal_traffic(bf16_gemm(64, 64, 64)).si()));
}

TEST_CASE("tiled intensity approaches bm·bn/(bm+bn) for bf16 (scaling book footnote)", "[tiling]") {
  // M = N = K = 8192, tile 256×128×64: FLOPs 2·8192³ = 1,099,511,627,776; bytes
  // 2·8192²·(8192/128 + 8192/256) + 2·8192² = 12,884,901,888 + 134,217,728 = 13,019,119,616;
  // intensity 84.45, within 1.1 % of bm·bn/(bm+bn) = 32768/384 = 85.33 (the output term).
  const auto traffic = rsim::gemm_traffic(bf16_gemm(8192, 8192, 8192), {256, 128, 64});
  CHECK(traffic.bytes.si() == Approx(13'019'119'616.0));
  const double intensity = 1'099'511'627'776.0 / traffic.bytes.si();
  CHECK(intensity == Approx(84.45).epsilon(1e-3));
  CHECK(intensity == Approx(256.0 * 128.0 / (256.0 + 128.0)).epsilon(0.011));
}

TEST_CASE("rsim matmul --tile: a small tile pulls a compute-bound matmul under the HBM roof",
          "[tiling]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  // X[4096, 4096]·W[4096, 4096] bf16: ideal intensity 2·4096³ / (2·3·4096²) = 4096/3 = 1365.3,
  // above v5e's 240.2 ridge: compute-bound when VMEM holds big tiles.
  const auto best = rsim::analyze_matmul(
      {4096, 4096, 4096, DType::bf16, DType::bf16, DType::bf16, "bf16", false}, v5e);
  CHECK(best.cost.ideal_intensity == Approx(4096.0 / 3.0));
  CHECK(best.bound == rsim::Bound::compute);
  // A 32×32×128 tile in VMEM re-reads X and W 4096/32 = 128 times each:
  // bytes = 2·4096²·128·2 + 2·4096² = 8,623,489,024; intensity 1.374e11 / 8.62e9 = 15.94.
  rsim::TileChoices tiles;
  tiles.by_tier = {{"vmem", {32, 32, 128}}};
  const auto tiny = rsim::analyze_matmul(
      {4096, 4096, 4096, DType::bf16, DType::bf16, DType::bf16, "bf16", false}, v5e, {}, tiles);
  CHECK(tiny.cost.bytes.si() == Approx(8'623'489'024.0));
  CHECK(tiny.cost.intensity == Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 8'623'489'024.0));
  CHECK(tiny.bound == rsim::Bound::memory);
  CHECK(tiny.cost.bound_tier == "hbm");
}

TEST_CASE("a tile that does not fit its tier is refused with the numbers", "[tiling]") {
  const auto thor = rsim::test::preset_roofs("thor_t5000");
  rsim::TileChoices tiles;
  tiles.origin = "--tile";
  // 512×512 fp32 accumulators alone are 512·512·4 = 1 MiB > 228 KiB of SMEM.
  tiles.by_tier = {{"smem", {512, 512, 128}}};
  const rsim::MatmulShape shape{968, 2048, 16384, DType::fp8, DType::fp8, DType::fp8, "fp8", false};
  CHECK_THROWS_AS(rsim::analyze_matmul(shape, thor, {}, tiles), rsim::InputError);
  CHECK_THROWS_WITH(rsim::analyze_matmul(shape, thor, {}, tiles),
                    Catch::Contains("tile 512×512×128") && Catch::Contains("one smem holds") &&
                        Catch::Contains("--tile"));
  // Main memory holds no tile.
  tiles.by_tier = {{"dram", {64, 64, 64}}};
  CHECK_THROWS_WITH(rsim::analyze_matmul(shape, thor, {}, tiles),
                    Catch::Contains("no on-chip tier 'dram'"));
  CHECK_THROWS_AS(rsim::parse_tile("128,0,64", "--tile"), rsim::InputError);
  CHECK_THROWS_AS(rsim::parse_tile("128,256", "--tile"), rsim::InputError);
  CHECK(rsim::parse_tile("128x256x64", "--tile") == rsim::Tile{128, 256, 64});
}

TEST_CASE("an operand that fits L2 is read from DRAM once and a small L2 re-reads it", "[tiling]") {
  // π0.5's prefix GEMM on Thor: X[968, 2048]·W[2048, 16384] in FP8. Ideal bytes 1,982,464 +
  // 33,554,432 + 15,859,712 = 51,396,608. X (1.98 MB) stays in Thor's 32 MiB L2 with a
  // 968×N_t×2048 tile, so W streams through once: DRAM serves exactly the ideal bytes.
  auto thor = rsim::test::preset_roofs("thor_t5000");
  const auto op = matmul(968, 2048, 16384, DType::fp8, "fp8");
  const auto cost = rsim::cost_op(op, thor);
  CHECK(cost.bytes.si() == Approx(51'396'608.0));
  CHECK(tier_of(cost, "dram").operand_resident);
  CHECK(tier_of(cost, "dram").tile->bm == 968);
  // With a 1 MiB L2 (X no longer fits) the best tile re-reads an operand: more DRAM bytes.
  thor.memory[1].capacity = rsim::Bytes(1024.0 * 1024.0);
  const auto small_l2 = rsim::cost_op(op, thor);
  CHECK(small_l2.bytes.si() > 51'396'608.0 * 1.5);
  CHECK(small_l2.ideal_bytes.si() == Approx(51'396'608.0));
}

TEST_CASE("π0.5's prefix GEMM on Thor with a CUTLASS-sized SMEM tile", "[tiling]") {
  // 128×256×64 FP8 tile: footprint 2·(128·64 + 64·256)·1 + 128·256·4 = 180,224 B ≤ 228 KiB
  // (233,472 B). L2 serves X ⌈16384/256⌉ = 64 times, W ⌈968/128⌉ = 8 times, the output once:
  // 1,982,464·64 + 33,554,432·8 + 15,859,712 = 411,172,864 B; at 20 × 128 B × 1.575 GHz =
  // 4.032 TB/s of SMEM bandwidth the SMEM side is far from DRAM's 188 µs.
  const auto thor = rsim::test::preset_roofs("thor_t5000");
  rsim::TileChoices tiles;
  tiles.by_tier = {{"smem", {128, 256, 64}}};
  const auto cost = rsim::cost_op(matmul(968, 2048, 16384, DType::fp8, "fp8"), thor, tiles);
  const auto& l2 = tier_of(cost, "l2");
  CHECK(l2.tile == rsim::Tile{128, 256, 64});
  CHECK(l2.bytes.si() == Approx(411'172'864.0));
  CHECK_FALSE(l2.timed);  // Thor's L2 bandwidth is not published
  CHECK(
      rsim::gemm_traffic(rsim::GemmShape{1.0, 968, 16384, 2048, 1.0, 1.0, 1.0, 4.0}, {128, 256, 64})
          .footprint.si() == Approx(180'224.0));
  // DRAM still holds the op: 51,396,608 / 273e9 = 188.3 µs.
  CHECK(cost.bound_tier == "dram");
  CHECK(cost.t_mem.si() == Approx(51'396'608.0 / 273e9));
}

TEST_CASE("more on-chip capacity never raises the traffic", "[tiling]") {
  const std::vector<rsim::GemmShape> shapes{
      bf16_gemm(968, 16384, 2048), bf16_gemm(50, 2048, 1024), bf16_gemm(4096, 4096, 4096),
      rsim::GemmShape{8.0, 968, 968, 256, 1.0, 1.0, 1.0, 4.0}};
  for (const auto& shape : shapes) {
    double previous = std::numeric_limits<double>::infinity();
    for (double capacity = 4096.0; capacity <= 256.0 * 1024 * 1024; capacity *= 2.0) {
      const auto best =
          rsim::best_gemm_tile(shape, rsim::TileBudget{rsim::Bytes(capacity), std::nullopt});
      REQUIRE(best);
      CHECK(best->footprint.si() <= capacity);
      CHECK(best->bytes.si() <= previous);
      CHECK(best->bytes.si() >= rsim::ideal_traffic(shape).si() * (1.0 - 1e-12));
      previous = best->bytes.si();
    }
  }
}

TEST_CASE("FMHA traffic: K/V once per query tile, causal tiles read only visible keys",
          "[tiling]") {
  rsim::FlashShape shape;
  shape.instances = 1.0;
  shape.group = 1;
  shape.query_tokens = 1000;
  shape.head_dim = 64;
  shape.query_output_bytes = rsim::Bytes(256'000.0);  // Q and O: 2 × 1000 × 64 × 2 B
  shape.key_value_bytes = rsim::Bytes(256'000.0);     // K and V likewise
  // Bidirectional, query tile 128: ⌈1000/128⌉ = 8 passes over K/V.
  const auto bidirectional = rsim::flash_traffic(shape, {128, 64, 64});
  CHECK(bidirectional.bytes.si() == Approx(256'000.0 + 8.0 * 256'000.0));
  // Causal: tile t sees min((t+1)·128, 1000) keys: 128·(1+…+7) + 1000 = 4584 of 1000 → 4.584.
  shape.causal = true;
  const auto causal = rsim::flash_traffic(shape, {128, 64, 64});
  CHECK(causal.bytes.si() == Approx(256'000.0 + 4.584 * 256'000.0));
  // A K/V tile spanning every key keeps the head's K and V resident: read once.
  const auto resident = rsim::flash_traffic(shape, {128, 1000, 64});
  CHECK(resident.x_resident);
  CHECK(resident.bytes.si() == Approx(512'000.0));
  // Footprint of the 128×64 tile: Q 128·64·2 + K,V 2·2·64·64·2 + S 128·64·4 + O 128·64·4
  // = 16,384 + 32,768 + 32,768 + 32,768 = 114,688.
  CHECK(bidirectional.footprint.si() == Approx(114'688.0));
  // A 300-key window: tile t reads from its first query's window start to its last query,
  // min((t+1)·128, 300 + 127 = 427) keys: 128 + 256 + 384 + 4 · 427 (tiles 3–6); the last tile,
  // queries 896–999, keys 597–999: 403 → 768 + 1708 + 403 = 2879 of 1000 → 2.879.
  shape.window = 300;
  const auto windowed = rsim::flash_traffic(shape, {128, 64, 64});
  CHECK(windowed.bytes.si() == Approx(256'000.0 + 2.879 * 256'000.0));
  // The closed form against a count tile by tile, with keys cached before the pass too.
  for (const std::int64_t cached : {0, 50, 299, 1000}) {
    for (const std::int64_t bm : {16, 128, 1000}) {
      INFO("cached " << cached << ", bm " << bm);
      shape.cached_tokens = cached;
      double keys = 0.0;
      for (std::int64_t first = 0; first < shape.query_tokens; first += bm) {
        const std::int64_t last = std::min(first + bm, shape.query_tokens) - 1;
        keys += static_cast<double>(cached + last -
                                    std::max<std::int64_t>(0, cached + first - 300 + 1) + 1);
      }
      const double tiles = std::ceil(1000.0 / static_cast<double>(bm));
      CHECK(rsim::tile_candidates::windowed_keys_read(shape, bm, tiles) == Approx(keys));
    }
  }
}

TEST_CASE("scenario tiles: a CUTLASS tile in the π0.5 variant, bad tiers refused", "[tiling]") {
  auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/pi05_thor.yaml"),
                                      {{}, "cutlass_128x256"});
  REQUIRE(scenario.tiles.find("smem") != nullptr);
  CHECK(*scenario.tiles.find("smem") == rsim::Tile{128, 256, 64});
  rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  const auto run = rsim::analyze(std::move(scenario), std::move(roofs));
  bool checked = false;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (op.kind == rsim::OpKind::matmul) {
      CHECK(tier_of(run.table.costs[row], "l2").tile ==
            rsim::Tile{std::min<std::int64_t>(128, rsim::gemm_shape(op).m),
                       std::min<std::int64_t>(256, rsim::gemm_shape(op).n),
                       std::min<std::int64_t>(64, rsim::gemm_shape(op).k)});
      checked = true;
    }
  }
  CHECK(checked);
  const auto bad = rsim::test::source_path("tests/data/invalid/scenario_tile_tier.yaml");
  CHECK_THROWS_WITH(rsim::load_scenario(bad), Catch::Contains("scenario_tile_tier.yaml:") &&
                                                  Catch::Contains("no on-chip tier 'dram'"));
}

TEST_CASE("on-chip bandwidths marked clocked scale with the mode's clock", "[tiling]") {
  const auto spec = rsim::load_hardware(rsim::test::source_path("hardware/thor_t5000.yaml"));
  // 120 W: 4.032e12 × 1.386 / 1.575 = 3.548e12 B/s of SMEM; DRAM stays at 273 GB/s.
  const auto roofs = rsim::resolve_roofs(spec, "120W");
  CHECK(roofs.find_tier("smem")->bandwidth->si() == Approx(4.032e12 * 1.386 / 1.575));
  CHECK(roofs.find_tier("dram")->bandwidth->si() == Approx(273e9));
}

TEST_CASE("π0.5's prefix on Thor: the L2 keeps DRAM traffic at the read-once ideal", "[tiling]") {
  // Every prefix matmul has M = 968 tokens; its FP8 activation (968 × ≤ 16384 B ≤ 15.9 MB, with
  // a K-slice of W and the accumulators) fits the 32 MiB L2 as a resident block, so each weight
  // streams from DRAM once: tiled DRAM bytes = ideal bytes. SMEM-sized tiles (≤ 256 wide) alone
  // could not do that: L2 serves several times the ideal.
  const auto run = rsim::test::run_scenario("pi05_thor");
  for (const auto& stage : run.bounds.stages) {
    INFO(stage.stage);
    CHECK(stage.totals.bytes.si() == Approx(stage.totals.ideal_bytes.si()));
    REQUIRE(stage.totals.bytes_by_tier.size() == 4);
    CHECK(stage.totals.bytes_by_tier[0].first == "dram");
    CHECK(stage.totals.bytes_by_tier[1].first == "l2");
    CHECK(stage.totals.bytes_by_tier[1].second.si() > stage.totals.ideal_bytes.si());
    CHECK(stage.totals.bound_tier == "dram");
  }
}

TEST_CASE("GPU tiles keep accumulators in registers and L2 tiles are one wave of every SM",
          "[tiling]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  const auto cost = rsim::cost_op(matmul(8192, 8192, 8192, DType::bf16, "bf16"), h100);
  // SMEM tile 256×256×64: slices 2·(256·64 + 64·256)·2 B = 131,072 ≤ 228 KiB, accumulators
  // 256·256·4 = 262,144 ≤ 256 KiB of registers (in SMEM with them it could not fit). L2 serves
  // X ⌈8192/256⌉ = 32 times and W 32 times: 2·8192²·(32 + 32) + 2·8192² = 8,724,152,320 B.
  const auto& l2 = tier_of(cost, "l2");
  CHECK(l2.tile == rsim::Tile{256, 256, 64});
  CHECK(l2.bytes.si() == Approx(8'724'152'320.0));
  // The L2 tile is the region one wave computes at once: its accumulators fill the registers of
  // all 132 SMs (132 × 256 KiB = 34.6 MB ≥ 4096·2048·4 = 33.5 MB). HBM serves X 8192/2048 = 4
  // times, W 8192/4096 = 2 times: 2·8192²·(4 + 2 + 1) = 939,524,096 B.
  const auto& hbm = tier_of(cost, "hbm");
  CHECK(hbm.tile == rsim::Tile{4096, 2048, 256});
  CHECK(hbm.bytes.si() == Approx(939'524'096.0));
  // At the 9.7 TB/s of L2 measured on the GH100 die (gpu-benches h200.txt) the L2 side takes
  // 8.724e9 / 9.7e12 = 0.899 ms, below T_math = 2·8192³ / 989.4e12 = 1.111 ms: compute-bound,
  // as cuBLAS runs it (at 5.5 TB/s the bound was 1.586 ms, above measured 8192³ GEMMs).
  CHECK(tier_of(cost, "l2").time.si() == Approx(8'724'152'320.0 / 9.7e12));
  CHECK(cost.t_lower.si() == Approx(2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12));
  CHECK(cost.bound_tier.empty());
}

TEST_CASE("an accumulator tier must be a memory tier inside the one it serves", "[tiling]") {
  auto document = rsim::load_config_file(rsim::test::source_path("hardware/thor_t5000.yaml"));
  document.set_path("memory.smem.accumulators", "tmem", {"test", 1, 1});
  CHECK_THROWS_WITH(rsim::parse_hardware(document),
                    Catch::Contains("'tmem' is not a memory tier inside smem"));
}
