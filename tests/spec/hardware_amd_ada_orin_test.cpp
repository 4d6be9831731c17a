// SPDX-License-Identifier: MIT
// The AMD Instinct MI300X / MI325X, NVIDIA L4 / L40S / GeForce RTX 4090 and Jetson AGX Orin 64GB
// presets against the vendor figures they were typed from: every expected value below is typed by
// hand from AMD's CDNA 3 white paper (Table 1; memory, communication and scaling sections), the
// ROCm GPU specifications table, NVIDIA's L4 and L40S datasheets, NVIDIA's Ada architecture white
// paper (v2.02, Appendix A Table 2), the Jetson AGX Orin technical brief and NVIDIA's
// nvpmodel_p3701_0000.conf, never from rsim's output.
#include "hardware_fixture.hpp"

#include <catch2/catch.hpp>

using rsim::test::ridge_of;
using rsim::test::roofs_of;

namespace {

// A figure typed with a decimal point parses as number × prefix: compare within rounding.
Approx exactly(double value) { return Approx(value).epsilon(1e-12); }

}  // namespace

TEST_CASE("AMD Instinct MI300X preset matches the CDNA 3 white paper", "[hardware][library]") {
  const auto r = roofs_of("mi300x");
  // CDNA 3 white paper Table 1 (dense): FP32 vector 163.4, FP16 / BF16 1307.4, FP8 2614.9 TFLOP/s,
  // INT8 2614.9 TOP/s; no FP4 on CDNA 3.
  CHECK(r.find_path("fp32")->peak.si() == exactly(163.4e12));
  CHECK(r.find_path("bf16")->peak.si() == exactly(1307.4e12));
  CHECK(r.find_path("fp16")->peak.si() == exactly(1307.4e12));
  CHECK(r.find_path("fp8")->peak.si() == exactly(2614.9e12));
  CHECK(r.find_path("int8")->peak.si() == exactly(2614.9e12));
  CHECK(r.find_path("tf32")->peak.si() == exactly(653.7e12));  // ROCm mi300.md
  CHECK(r.find_path("fp4") == nullptr);
  // 8 HBM3 stacks × 24 GB = 192 GB at 5.3 TB/s.
  CHECK(r.main_memory().name == "hbm");
  CHECK(r.main_memory().bandwidth->si() == exactly(5.3e12));
  CHECK(r.main_memory().capacity.si() == 192e9);
  // L2: 4 MB per XCD, 8 XCDs, 34.4 TB/s aggregate reads; LDS 64 KiB and VGPRs 512 KiB per CU.
  REQUIRE(r.find_tier("l2"));
  CHECK(r.find_tier("l2")->capacity.si() == 4'194'304.0);
  CHECK(r.find_tier("l2")->count == 8);
  CHECK(r.find_tier("l2")->bandwidth->si() == exactly(34.4e12));
  REQUIRE(r.find_tier("smem"));
  CHECK(r.find_tier("smem")->capacity.si() == 65'536.0);
  CHECK(r.find_tier("smem")->count == 304);
  CHECK(r.find_tier("registers")->capacity.si() == 524'288.0);
  // bf16 ridge = peak / HBM bandwidth = 1307.4e12 / 5.3e12 = 246.68 FLOP/B (white paper figures).
  CHECK(ridge_of(r, "bf16") == Approx(1307.4e12 / 5.3e12));
  CHECK(ridge_of(r, "bf16") == Approx(246.68).epsilon(1e-4));
  // Infinity Fabric: 7 links × 64 GB/s one way = 448 GB/s per GPU, 8 GPUs fully connected.
  const auto* fabric = r.find_network("nvlink");
  REQUIRE(fabric);
  CHECK(fabric->topology == rsim::Topology::switched);
  CHECK(fabric->bandwidth.si() == 448e9);
  CHECK(fabric->devices == 8);
  CHECK_FALSE(fabric->in_network_reduction);
  // Azure ND MI300X v5: 8 × 400 Gb/s NDR per 8 GPUs = 50e9 B/s per GPU; 1850 GiB / 8 host DRAM.
  REQUIRE(r.find_network("ib"));
  CHECK(r.find_network("ib")->bandwidth.si() == 50e9);
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 1850.0 / 8.0 * 1'073'741'824.0);
  CHECK(r.host_memory->bandwidth.si() == 64e9);
}

TEST_CASE("AMD Instinct MI325X preset matches the CDNA 3 white paper", "[hardware][library]") {
  const auto r = roofs_of("mi325x");
  // Same compute as the MI300X (white paper Table 1 lists MI300X | MI325X together).
  CHECK(r.find_path("bf16")->peak.si() == exactly(1307.4e12));
  CHECK(r.find_path("fp16")->peak.si() == exactly(1307.4e12));
  CHECK(r.find_path("fp8")->peak.si() == exactly(2614.9e12));
  CHECK(r.find_path("int8")->peak.si() == exactly(2614.9e12));
  // 8 HBM3E stacks × 32 GB = 256 GB at 6.0 TB/s.
  CHECK(r.main_memory().name == "hbm");
  CHECK(r.main_memory().bandwidth->si() == 6e12);
  CHECK(r.main_memory().capacity.si() == 256e9);
  // bf16 ridge = 1307.4e12 / 6.0e12 = 217.9 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(1307.4e12 / 6e12));
  CHECK(ridge_of(r, "bf16") == Approx(217.9).epsilon(1e-4));
  // fp8 ridge = 2614.9e12 / 6.0e12 = 435.8 FLOP/B.
  CHECK(ridge_of(r, "fp8") == Approx(2614.9e12 / 6e12));
  const auto* fabric = r.find_network("nvlink");
  REQUIRE(fabric);
  CHECK(fabric->bandwidth.si() == 448e9);
  CHECK(fabric->devices == 8);
  // MLPerf v5.0 AMD host: 24 × 96 GiB / 8 GPUs = 288 GiB each.
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 288.0 * 1'073'741'824.0);
}

TEST_CASE("NVIDIA L40S preset matches its datasheet", "[hardware][library]") {
  const auto r = roofs_of("l40s");
  // L40S datasheet (dense | sparse): FP32 91.6, TF32 183 | 366, BF16 / FP16 362.05 | 733,
  // FP8 733 | 1466 TFLOPS, INT8 733 TOPS; 48 GB GDDR6 at 864 GB/s.
  CHECK(r.find_path("fp32")->peak.si() == exactly(91.6e12));
  CHECK(r.find_path("tf32")->peak.si() == 183e12);
  CHECK(r.find_path("bf16")->peak.si() == exactly(362.05e12));
  CHECK(r.find_path("fp16")->peak.si() == exactly(362.05e12));
  CHECK(r.find_path("fp8")->peak.si() == 733e12);
  CHECK(r.find_path("fp8_sparse")->peak.si() == 1466e12);
  CHECK(r.find_path("int8")->peak.si() == 733e12);
  CHECK(r.main_memory().name == "dram");
  CHECK(r.main_memory().bandwidth->si() == 864e9);
  CHECK(r.main_memory().capacity.si() == 48e9);
  CHECK(r.find_tier("smem")->count == 142);
  // bf16 ridge = 362.05e12 / 864e9 = 419.0 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(362.05e12 / 864e9));
  CHECK(ridge_of(r, "bf16") == Approx(419.04).epsilon(1e-4));
  // A PCIe card: no NVLink tier, no standard host.
  CHECK(r.find_network("nvlink") == nullptr);
  CHECK_FALSE(r.host_memory);
}

TEST_CASE("NVIDIA L4 preset matches its datasheet halved to dense", "[hardware][library]") {
  const auto r = roofs_of("l4");
  // L4 datasheet (with sparsity): TF32 120, BF16 / FP16 242, FP8 485 TFLOPS, INT8 485 TOPS;
  // dense is one half. FP32 30.3 TFLOPS; 24 GB GDDR6 at 300 GB/s.
  CHECK(r.find_path("fp32")->peak.si() == exactly(30.3e12));
  CHECK(r.find_path("tf32")->peak.si() == 120e12 / 2);
  CHECK(r.find_path("bf16")->peak.si() == 242e12 / 2);
  CHECK(r.find_path("fp16")->peak.si() == 242e12 / 2);
  CHECK(r.find_path("fp8")->peak.si() == exactly(485e12 / 2));
  CHECK(r.find_path("int8")->peak.si() == exactly(485e12 / 2));
  CHECK(r.main_memory().name == "dram");
  CHECK(r.main_memory().bandwidth->si() == 300e9);
  CHECK(r.main_memory().capacity.si() == 24e9);
  CHECK(r.find_tier("l2")->capacity.si() == 48e6);
  // bf16 ridge = 121e12 / 300e9 = 403.3 FLOP/B; fp8 ridge = 242.5e12 / 300e9 = 808.3 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(121e12 / 300e9));
  CHECK(ridge_of(r, "bf16") == Approx(403.33).epsilon(1e-4));
  CHECK(ridge_of(r, "fp8") == Approx(242.5e12 / 300e9));
  CHECK(r.network.empty());
}

TEST_CASE("GeForce RTX 4090 preset carries the FP32-accumulate tensor rates",
          "[hardware][library]") {
  const auto r = roofs_of("rtx_4090");
  // Ada white paper v2.02 Appendix A Table 2 (dense): BF16 / FP16 with FP32 accumulate 165.2,
  // FP8 with FP32 accumulate 330.3 (not the FP16-accumulate 330.3 / 660.6), TF32 82.6,
  // INT8 660.6 TOPS, FP32 82.6; 24 GB GDDR6X at 1008 GB/s; 72 MiB (73728 KB) L2; 128 SMs.
  CHECK(r.find_path("bf16")->peak.si() == exactly(165.2e12));
  CHECK(r.find_path("fp16")->peak.si() == exactly(165.2e12));
  CHECK(r.find_path("fp8")->peak.si() == exactly(330.3e12));
  CHECK(r.find_path("tf32")->peak.si() == exactly(82.6e12));
  CHECK(r.find_path("fp32")->peak.si() == exactly(82.6e12));
  CHECK(r.find_path("int8")->peak.si() == exactly(660.6e12));
  CHECK(r.main_memory().name == "dram");
  CHECK(r.main_memory().bandwidth->si() == 1008e9);
  CHECK(r.main_memory().capacity.si() == 24e9);
  CHECK(r.find_tier("l2")->capacity.si() == 73728.0 * 1024.0);
  CHECK(r.find_tier("smem")->count == 128);
  // bf16 ridge = 165.2e12 / 1008e9 = 163.9 FLOP/B; fp8 ridge = 330.3e12 / 1008e9 = 327.7 FLOP/B.
  CHECK(ridge_of(r, "bf16") == Approx(165.2e12 / 1008e9));
  CHECK(ridge_of(r, "bf16") == Approx(163.89).epsilon(1e-4));
  CHECK(ridge_of(r, "fp8") == Approx(330.3e12 / 1008e9));
  CHECK(r.network.empty());
}

TEST_CASE("Jetson AGX Orin 64GB preset derives dense rates from sparse INT8 in every mode",
          "[hardware][library]") {
  const auto maxn = roofs_of("orin_agx_64gb");
  CHECK(maxn.mode == "MAXN");
  CHECK(maxn.unified_memory);
  CHECK_FALSE(maxn.host_memory);
  // Technical brief: GPU 170 sparse INT8 TOPS. Dense INT8 = 170 / 2 = 85; FP16 / BF16 = 85 / 2 =
  // 42.5 TFLOP/s; TF32 = 42.5 / 2 = 21.25; FP32 = 2048 cores × 2 × 1.3 GHz = 5.3248 TFLOP/s.
  CHECK(maxn.find_path("int8_sparse")->peak.si() == 170e12);
  CHECK(maxn.find_path("int8")->peak.si() == 170e12 / 2);
  CHECK(maxn.find_path("bf16")->peak.si() == exactly(170e12 / 4));
  CHECK(maxn.find_path("fp16")->peak.si() == exactly(170e12 / 4));
  CHECK(maxn.find_path("tf32")->peak.si() == exactly(170e12 / 8));
  CHECK(maxn.find_path("fp32")->peak.si() == exactly(2048 * 2 * 1.3e9));
  CHECK(maxn.find_path("fp8") == nullptr);  // Ampere: no FP8
  // 64 GB of 256-bit LPDDR5 at 204.8 GB/s (6400 MT/s × 32 B); 4 MB L2; 16 SMs.
  CHECK(maxn.main_memory().name == "dram");
  CHECK(maxn.main_memory().bandwidth->si() == exactly(204.8e9));
  CHECK(maxn.main_memory().capacity.si() == 64e9);
  CHECK(maxn.find_tier("l2")->capacity.si() == 4'194'304.0);
  CHECK(maxn.find_tier("smem")->count == 16);
  // bf16 ridge, MAXN: 42.5e12 / 204.8e9 = 207.5 FLOP/B.
  CHECK(ridge_of(maxn, "bf16") == Approx(42.5e12 / 204.8e9));
  CHECK(ridge_of(maxn, "bf16") == Approx(207.52).epsilon(1e-4));

  // nvpmodel_p3701_0000.conf MODE_50W: all 16 SMs, GPU capped at 816 MHz, EMC unclamped:
  // bf16 = 42.5 × 816 / 1300 = 26.68 TFLOP/s; ridge 26.68e12 / 204.8e9 = 130.3.
  const auto w50 = roofs_of("orin_agx_64gb", "50W");
  CHECK(w50.find_path("bf16")->peak.si() == Approx(42.5e12 * 816.0 / 1300.0));
  CHECK(w50.find_path("int8_sparse")->peak.si() == Approx(170e12 * 816.0 / 1300.0));
  CHECK(w50.main_memory().bandwidth->si() == Approx(204.8e9));
  CHECK(ridge_of(w50, "bf16") == Approx(42.5e12 * 816.0 / 1300.0 / 204.8e9));
  // The shared-memory bandwidth is bytes per clock: 16 × 128 B × 816 MHz.
  CHECK(w50.find_tier("smem")->bandwidth->si() == Approx(16 * 128 * 816e6));

  // MODE_30W: TPC_PG_MASK 240 gates 4 of 8 TPCs (8 SMs left), GPU 612 MHz, EMC unclamped:
  // bf16 = 42.5 × 8/16 × 612/1300 = 10.004 TFLOP/s; fp32 = 8 SMs × 128 × 2 × 612 MHz.
  const auto w30 = roofs_of("orin_agx_64gb", "30W");
  CHECK(w30.find_path("bf16")->peak.si() == Approx(42.5e12 * 8 / 16 * 612 / 1300).epsilon(1e-6));
  CHECK(w30.find_path("int8_sparse")->peak.si() ==
        Approx(170e12 * 8 / 16 * 612 / 1300).epsilon(1e-6));
  CHECK(w30.find_path("fp32")->peak.si() == Approx(8 * 128 * 2 * 612e6).epsilon(1e-6));
  CHECK(w30.main_memory().bandwidth->si() == Approx(204.8e9));
  CHECK(w30.find_tier("smem")->bandwidth->si() == Approx(8 * 128 * 612e6));
  // ridge, 30 W: 10.004e12 / 204.8e9 = 48.85 FLOP/B.
  CHECK(ridge_of(w30, "bf16") == Approx(48.85).epsilon(1e-4));

  // MODE_15W: TPC_PG_MASK 248 gates 5 of 8 TPCs (6 SMs left), GPU 408 MHz, EMC capped at
  // 2133 MHz: LPDDR5 2133 MHz × 2 × 32 B = 136.5 GB/s; bf16 = 42.5 × 6/16 × 408/1300 = 5.002.
  const auto w15 = roofs_of("orin_agx_64gb", "15W");
  CHECK(w15.find_path("bf16")->peak.si() == Approx(42.5e12 * 6 / 16 * 408 / 1300).epsilon(1e-6));
  CHECK(w15.find_path("tf32")->peak.si() == Approx(21.25e12 * 6 / 16 * 408 / 1300).epsilon(1e-6));
  CHECK(w15.main_memory().bandwidth->si() == Approx(2133e6 * 2 * 32));
  CHECK(w15.find_tier("smem")->bandwidth->si() == Approx(6 * 128 * 408e6));
  // ridge, 15 W: 5.002e12 / 136.512e9 = 36.64 FLOP/B.
  CHECK(ridge_of(w15, "bf16") == Approx(42.5e12 * 6 / 16 * 408 / 1300 / (2133e6 * 2 * 32)));
  CHECK(ridge_of(w15, "bf16") == Approx(36.64).epsilon(1e-4));
}
