// SPDX-License-Identifier: MIT
// The TPU v4, v5p and v6e presets against the vendor figures they were typed from: every expected
// value below is copied by hand from Google Cloud's TPU system-architecture pages
// (cloud.google.com/tpu/docs/v4, /v5p, /v6e), Google's v5p launch post and the JAX scaling book
// (jax-ml/scaling-book tpus.md), never from rsim's output.
#include "hardware_fixture.hpp"

#include <catch2/catch.hpp>

using rsim::test::ridge_of;
using rsim::test::roofs_of;

TEST_CASE("TPU v4 preset matches Google Cloud and the scaling book", "[hardware][library]") {
  const auto r = roofs_of("tpu_v4");
  // cloud.google.com/tpu/docs/v4: 275 teraflops per chip (bf16 or int8); HBM2 32 GiB, 1200 GBps.
  CHECK(r.find_path("bf16")->peak.si() == 275e12);
  CHECK(r.find_path("int8")->peak.si() == 275e12);
  CHECK(r.find_path("fp8") == nullptr);  // no FP8 before Ironwood
  CHECK(r.main_memory().name == "hbm");
  CHECK(r.main_memory().bandwidth->si() == 1200e9);
  CHECK(r.main_memory().capacity.si() == 34'359'738'368.0);  // 32 GiB
  // VMEM 16 MiB per TensorCore, 2 TensorCores (jax tpu_info.py).
  REQUIRE(r.find_tier("vmem"));
  CHECK(r.find_tier("vmem")->capacity.si() == 16'777'216.0);
  CHECK(r.find_tier("vmem")->count == 2);
  // bf16 ridge = peak / HBM bandwidth = 275e12 / 1.2e12 = 229.2 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(275e12 / 1.2e12));
  CHECK(ridge_of(r, "bf16") == Approx(229.17).epsilon(1e-4));
  // ICI: scaling book tpus.md, v4p 4.5e10 B/s one-way per link; 4096-chip pod (16x16x16); 4x4x4
  // cubes with wraparound. DCN: 6.25e9 B/s per TPU.
  const auto* ici = r.find_network("ici");
  REQUIRE(ici);
  CHECK(ici->topology == rsim::Topology::torus);
  CHECK(ici->bandwidth.si() == 4.5e10);
  CHECK(ici->devices == 4096);
  CHECK(ici->wraparound_size == 4);
  REQUIRE(r.find_network("dcn"));
  CHECK(r.find_network("dcn")->bandwidth.si() == 6.25e9);
}

TEST_CASE("TPU v5p preset matches Google Cloud and the scaling book", "[hardware][library]") {
  const auto r = roofs_of("tpu_v5p");
  // cloud.google.com/tpu/docs/v5p: 459 TFLOPs bf16; 95 GiB HBM, 2765 GBps. v5p launch post /
  // scaling book: 918 TOPs int8.
  CHECK(r.find_path("bf16")->peak.si() == 459e12);
  CHECK(r.find_path("int8")->peak.si() == 918e12);
  CHECK(r.find_path("fp8") == nullptr);  // Cloud's "FP8 459" is the bf16 MXU rate
  CHECK(r.main_memory().bandwidth->si() == 2765e9);
  CHECK(r.main_memory().capacity.si() == 102'005'473'280.0);  // 95 GiB
  // VPU: 2 cores × 8 × 128 × 4 ALUs × 1.75 GHz (scaling book: 7e12 per core).
  CHECK(r.find_path("fp32")->peak.si() == Approx(2 * 7.168e12));
  REQUIRE(r.find_tier("vmem"));
  CHECK(r.find_tier("vmem")->capacity.si() == 67'108'864.0);  // 64 MiB per core
  CHECK(r.find_tier("vmem")->count == 2);
  // bf16 ridge = 459e12 / 2.765e12 = 166.0 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(459e12 / 2.765e12));
  CHECK(ridge_of(r, "bf16") == Approx(166.0).epsilon(1e-3));
  // Host: 448 GB per 4-chip VM; PCIe 1.6e10 B/s per TPU (scaling book).
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 112e9);
  CHECK(r.host_memory->bandwidth.si() == 1.6e10);
  // ICI: 9e10 B/s one-way per link; 8960-chip pod (16x20x28). DCN: 50 Gbps per chip.
  const auto* ici = r.find_network("ici");
  REQUIRE(ici);
  CHECK(ici->topology == rsim::Topology::torus);
  CHECK(ici->bandwidth.si() == 9e10);
  CHECK(ici->devices == 8960);
  CHECK(ici->wraparound_size == 4);
  REQUIRE(r.find_network("dcn"));
  CHECK(r.find_network("dcn")->bandwidth.si() == 50e9 / 8);
}

TEST_CASE("TPU v6e preset matches Google Cloud and the scaling book", "[hardware][library]") {
  const auto r = roofs_of("tpu_v6e");
  // cloud.google.com/tpu/docs/v6e: 918 TFLOPs bf16, 1836 TOPs int8, 1640 GBps HBM; 32 GiB
  // (34.4e9 B in jax tpu_info.py).
  CHECK(r.find_path("bf16")->peak.si() == 918e12);
  CHECK(r.find_path("int8")->peak.si() == 1836e12);
  CHECK(r.find_path("fp8") == nullptr);  // no FP8 MXU mode before Ironwood
  CHECK(r.main_memory().bandwidth->si() == 1640e9);
  CHECK(r.main_memory().capacity.si() == 34'359'738'368.0);  // 32 GiB
  REQUIRE(r.find_tier("vmem"));
  CHECK(r.find_tier("vmem")->capacity.si() == 134'217'728.0);  // 128 MiB
  // bf16 ridge = 918e12 / 1.64e12 = 559.8 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(918e12 / 1.64e12));
  CHECK(ridge_of(r, "bf16") == Approx(559.76).epsilon(1e-4));
  // Host: 1536 GiB per 8-chip host = 192 GiB per chip; PCIe 3.2e10 B/s (scaling book).
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 206'158'430'208.0);
  CHECK(r.host_memory->bandwidth.si() == 3.2e10);
  // ICI: 9e10 B/s one-way per link, 16x16 torus with wraparound on axes of 16. DCN: 12.5e9 B/s.
  const auto* ici = r.find_network("ici");
  REQUIRE(ici);
  CHECK(ici->topology == rsim::Topology::torus);
  CHECK(ici->bandwidth.si() == 9e10);
  CHECK(ici->devices == 256);
  CHECK(ici->wraparound_size == 16);
  REQUIRE(r.find_network("dcn"));
  CHECK(r.find_network("dcn")->bandwidth.si() == 1.25e10);
}
