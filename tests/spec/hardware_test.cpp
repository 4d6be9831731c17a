// SPDX-License-Identifier: MIT
#include "sim/spec/hardware.hpp"

#include "hardware_fixture.hpp"
#include "sim/base/error.hpp"

#include <catch2/catch.hpp>

using rsim::test::ridge_of;
using rsim::test::roofs_of;
using rsim::test::source_path;

TEST_CASE("every shipped hardware preset loads", "[hardware]") {
  for (const auto& entry : std::filesystem::directory_iterator(source_path("hardware"))) {
    INFO(entry.path());
    const auto spec = rsim::load_hardware(entry.path());
    CHECK(!spec.compute.empty());
    for (const auto& mode : spec.modes) {
      CHECK_NOTHROW(rsim::resolve_roofs(spec, mode.name));
    }
  }
}

TEST_CASE("host memory: H100's PCIe and DGX DRAM, none on unified-memory Thor", "[hardware]") {
  // 2 TB of host DRAM as 32 × 64 GiB DIMMs over 8 GPUs = 256 GiB = 274,877,906,944 B each;
  // PCIe Gen5 x16 = 64 GB/s each way (NVIDIA H100 datasheet).
  const auto h100 = roofs_of("h100_sxm");
  REQUIRE(h100.host_memory);
  CHECK(h100.host_memory->capacity.si() == 274'877'906'944.0);
  CHECK(h100.host_memory->bandwidth.si() == 64e9);
  // TPU v5e: 512 GiB per 8-chip host = 64 GiB per chip (Cloud TPU v5e docs); PCIe ~1.5e10 B/s
  // per chip (How to Scale Your Model, TPUs chapter, jax-ml.github.io/scaling-book/tpus).
  const auto v5e = roofs_of("tpu_v5e");
  REQUIRE(v5e.host_memory);
  CHECK(v5e.host_memory->capacity.si() == 68'719'476'736.0);
  CHECK(v5e.host_memory->bandwidth.si() == 1.5e10);
  CHECK_FALSE(roofs_of("thor_t5000").host_memory);
}

TEST_CASE("Thor T5000 ridges from data sheet DS-11945 peaks in both power modes",
          "[hardware][thor]") {
  const auto maxn = roofs_of("thor_t5000", "MAXN");
  const auto watt120 = roofs_of("thor_t5000", "120W");
  // FP32 CUDA, MAXN: 8.064e12 / 273e9 = 29.538 (≈ 29.5)
  CHECK(ridge_of(maxn, "fp32") == Approx(8.064e12 / 273e9));
  CHECK(ridge_of(maxn, "fp32") == Approx(29.5).epsilon(0.002));
  // FP32 CUDA, 120 W: 7.096e12 / 273e9 = 25.993 (≈ 26.0)
  CHECK(ridge_of(watt120, "fp32") == Approx(7.096e12 / 273e9));
  CHECK(ridge_of(watt120, "fp32") == Approx(26.0).epsilon(0.001));
  // FP8 dense, MAXN: 517e12 / 273e9 = 1893.8 (≈ 1894)
  CHECK(ridge_of(maxn, "fp8") == Approx(517e12 / 273e9));
  CHECK(ridge_of(maxn, "fp8") == Approx(1894).epsilon(0.0002));
  // FP8 dense, 120 W: 455e12 / 273e9 = 1666.7 (≈ 1667)
  CHECK(ridge_of(watt120, "fp8") == Approx(1667).epsilon(0.0002));
  // FP8 sparse, MAXN: 1035e12 / 273e9 = 3791.2 (≈ 3791)
  CHECK(ridge_of(maxn, "fp8_sparse") == Approx(3791).epsilon(0.0002));
}

TEST_CASE("a mode scales the peaks it does not list by its clock", "[hardware]") {
  const auto watt120 = roofs_of("thor_t5000", "120W");
  // bf16 is derived (517 / 2 = 258.5 at 1.575 GHz); at 1.386 GHz: 258.5 × 1.386 / 1.575 = 227.48
  CHECK(watt120.find_path("bf16")->peak.si() == Approx(258.5e12 * 1.386 / 1.575));
  // listed figures win: the datasheet's 455, not 517 × 0.88 = 454.96
  CHECK(watt120.find_path("fp8")->peak.si() == Approx(455e12));
  CHECK(watt120.main_memory().bandwidth->si() == Approx(273e9));
  CHECK(roofs_of("thor_t5000").mode == "MAXN");  // the default mode
}

TEST_CASE("TPU v5e and H100 ridges match How to Scale Your Model", "[hardware][scaling_book]") {
  const auto v5e = roofs_of("tpu_v5e");
  // bf16: 1.97e14 / 8.2e11 = 240.24 (scaling book roofline chapter: ≈ 240)
  CHECK(ridge_of(v5e, "bf16") == Approx(1.97e14 / 8.2e11));
  CHECK(ridge_of(v5e, "bf16") == Approx(240).epsilon(0.002));
  // int8 with the book's 8.1e11 of before 2026-05-09: 3.94e14 / 8.1e11 = 486.42 (roofline Q1: 486)
  const auto v5e_seed = roofs_of("tpu_v5e", "", {{}, {{"hbm", rsim::BytesPerSecond(8.1e11)}}});
  CHECK(ridge_of(v5e_seed, "int8") == Approx(486).epsilon(0.001));
  const auto h100 = roofs_of("h100_sxm");
  // datasheet dense bf16: 989.4e12 / 3.35e12 = 295.3 (scaling book roofline Q5: 295)
  CHECK(ridge_of(h100, "bf16") == Approx(295.3).epsilon(0.0005));
  // the book's rounded 1e15 of before 2026-05-09: 1e15 / 3.35e12 = 298.5 (roofline Q5 then: 298)
  const auto h100_seed = roofs_of("h100_sxm", "", {{{"bf16", rsim::FlopsPerSecond(1e15)}}, {}});
  CHECK(ridge_of(h100_seed, "bf16") == Approx(298.5).epsilon(0.0005));
}

TEST_CASE("ridges cover every path against every tier with a bandwidth", "[hardware]") {
  const auto v5e = roofs_of("tpu_v5e");
  // 3 paths × (2 memory tiers with a bandwidth: hbm, vmem + 2 network tiers: ici, dcn)
  const auto v5e_ridges = rsim::ridges(v5e);
  CHECK(v5e_ridges.size() == 12);
  for (const auto& ridge : v5e_ridges) {
    if (ridge.path == "bf16" && ridge.tier == "ici") {
      // the scaling book's network roofline: 1.97e14 / 4.5e10 = 4377 (one-way link)
      CHECK(ridge.network);
      CHECK(ridge.flops_per_byte == Approx(4377.8).epsilon(1e-4));
    }
  }
  const auto thor = roofs_of("thor_t5000");
  // 7 paths × (dram + smem; l2 and registers have no bandwidth figure)
  CHECK(rsim::ridges(thor).size() == 14);
}

TEST_CASE("unknown modes, paths and tiers are input errors listing what exists", "[hardware]") {
  const auto spec = rsim::load_hardware(source_path("hardware/thor_t5000.yaml"));
  CHECK_THROWS_WITH(rsim::resolve_roofs(spec, "60W"),
                    Catch::Contains("no mode '60W' (modes: MAXN, 120W)"));
  CHECK_THROWS_WITH(rsim::resolve_roofs(spec, "", {{{"fp64", rsim::FlopsPerSecond(1)}}, {}}),
                    Catch::Contains("has no compute path 'fp64'"));
  CHECK_THROWS_WITH(
      rsim::resolve_roofs(spec, "", {{}, {{"hbm", rsim::BytesPerSecond(1)}}}),
      Catch::Contains("no memory or network tier 'hbm' (tiers: dram, l2, smem, registers)"));
}
