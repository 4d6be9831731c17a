// SPDX-License-Identifier: MIT
// The NVIDIA presets (A100 40/80 GB, H100 PCIe, H200, B200, GB200 NVL72): every expected value is
// typed from the datasheet or spec page named beside it, never from rsim's output.
#include "hardware_fixture.hpp"

#include <catch2/catch.hpp>

using rsim::test::network_of;
using rsim::test::peak_of;
using rsim::test::ridge_of;
using rsim::test::roofs_of;

TEST_CASE("A100 SXM4 40GB matches the A100 datasheet", "[hardware][library]") {
  const auto r = roofs_of("a100_sxm_40gb");
  // NVIDIA A100 datasheet r4 (via glennklockwood.com A100): 40 GB HBM2 at 1,555 GB/s.
  CHECK(r.main_memory().name == "hbm");
  CHECK(r.main_memory().bandwidth->si() == 1555e9);
  CHECK(r.main_memory().capacity.si() == 40e9);
  // Dense tensor peaks (datasheet, sparse / 2): TF32 156, BF16/FP16 312, INT8 624, INT4 1,248;
  // FP32 19.5.
  CHECK(peak_of(r, "tf32") == 156e12);
  CHECK(peak_of(r, "bf16") == 312e12);
  CHECK(peak_of(r, "fp16") == 312e12);
  CHECK(peak_of(r, "int8") == 624e12);
  CHECK(peak_of(r, "int4") == 1248e12);
  CHECK(peak_of(r, "fp32") == 19.5e12);
  CHECK(r.find_path("fp8") == nullptr);  // no FP8 on Ampere
  // bf16 ridge = 312e12 / 1555e9 = 200.6 FLOP/B (datasheet peak / datasheet HBM bandwidth)
  CHECK(ridge_of(r, "bf16") == Approx(312e12 / 1555e9));
  // NVLink 3: 600 GB/s bidirectional = 300 GB/s each way, 8 GPUs per HGX; one 200 Gb/s HDR HCA per
  // GPU.
  CHECK(network_of(r, "nvlink").bandwidth.si() == 300e9);
  CHECK(network_of(r, "nvlink").devices == 8);
  CHECK(network_of(r, "ib").bandwidth.si() == 25e9);
  // DGX A100 (320 GB): 1 TB of DDR4 / 8 GPUs = 128 GiB; PCIe Gen4 x16 = 32 GB/s each way.
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 137'438'953'472.0);
  CHECK(r.host_memory->bandwidth.si() == 32e9);
}

TEST_CASE("A100 SXM4 80GB matches the A100 80GB datasheet", "[hardware][library]") {
  const auto r = roofs_of("a100_sxm_80gb");
  // NVIDIA A100 80GB datasheet: 80 GB HBM2e at 2,039 GB/s (SXM).
  CHECK(r.main_memory().bandwidth->si() == 2039e9);
  CHECK(r.main_memory().capacity.si() == 80e9);
  // The same GA100 peaks as the 40 GB part (datasheet r4, dense).
  CHECK(peak_of(r, "tf32") == 156e12);
  CHECK(peak_of(r, "bf16") == 312e12);
  CHECK(peak_of(r, "fp16") == 312e12);
  CHECK(peak_of(r, "int8") == 624e12);
  CHECK(peak_of(r, "int4") == 1248e12);
  CHECK(r.find_path("fp8") == nullptr);
  // bf16 ridge = 312e12 / 2039e9 = 153.0 FLOP/B
  CHECK(ridge_of(r, "bf16") == Approx(312e12 / 2039e9));
  CHECK(network_of(r, "nvlink").bandwidth.si() == 300e9);
  CHECK(network_of(r, "nvlink").devices == 8);
  CHECK(network_of(r, "ib").bandwidth.si() == 25e9);  // 200 Gb/s HDR per GPU
  CHECK_FALSE(r.host_memory);
}

TEST_CASE("H100 PCIe matches the H100 datasheet PCIe column", "[hardware][library]") {
  const auto r = roofs_of("h100_pcie");
  // NVIDIA H100 datasheet (H100 PCIe): 80 GB HBM2e at 2,000 GB/s.
  CHECK(r.main_memory().bandwidth->si() == 2000e9);
  CHECK(r.main_memory().capacity.si() == 80e9);
  // Datasheet tensor figures are with sparsity: TF32 756, BF16/FP16 1,513, FP8/INT8 3,026; halved.
  CHECK(peak_of(r, "tf32") == 378e12);
  CHECK(peak_of(r, "bf16") == 756.5e12);
  CHECK(peak_of(r, "fp16") == 756.5e12);
  CHECK(peak_of(r, "fp8") == 1513e12);
  CHECK(peak_of(r, "int8") == 1513e12);
  CHECK(peak_of(r, "fp32") == 51e12);
  CHECK(peak_of(r, "fp8_sparse") == 3026e12);
  CHECK(r.find_path("fp4") == nullptr);  // no FP4 on Hopper
  // bf16 ridge = 756.5e12 / 2000e9 = 378.25 FLOP/B
  CHECK(ridge_of(r, "bf16") == Approx(756.5e12 / 2000e9));
  // NVLink bridge: 600 GB/s bidirectional between a pair of cards = 300 GB/s each way, 2 devices.
  CHECK(network_of(r, "nvlink").bandwidth.si() == 300e9);
  CHECK(network_of(r, "nvlink").devices == 2);
  CHECK_FALSE(network_of(r, "nvlink").in_network_reduction);
  CHECK(r.find_network("ib") == nullptr);  // no standard server: no scale-out tier
  CHECK_FALSE(r.host_memory);
}

TEST_CASE("H200 SXM matches the H200 datasheet", "[hardware][library]") {
  const auto r = roofs_of("h200_sxm");
  // NVIDIA H200 datasheet: 141 GB HBM3e at 4.8 TB/s.
  CHECK(r.main_memory().bandwidth->si() == 4.8e12);
  CHECK(r.main_memory().capacity.si() == 141e9);
  // The H100 SXM's GH100 peaks (datasheet BF16 1,979 / FP8 3,958 with sparsity; exact dense
  // figures from glennklockwood.com h100: TF32 494.7, BF16 989.4, FP8 1978.9).
  CHECK(peak_of(r, "tf32") == 494.7e12);
  CHECK(peak_of(r, "bf16") == 989.4e12);
  CHECK(peak_of(r, "fp16") == 989.4e12);
  CHECK(peak_of(r, "fp8") == 1978.9e12);
  CHECK(peak_of(r, "int8") == 1979e12);
  CHECK(peak_of(r, "fp32") == 67e12);
  CHECK(r.find_path("fp4") == nullptr);
  // bf16 ridge = 989.4e12 / 4.8e12 = 206.1 FLOP/B; fp8: 1978.9e12 / 4.8e12 = 412.3
  CHECK(ridge_of(r, "bf16") == Approx(989.4e12 / 4.8e12));
  CHECK(ridge_of(r, "fp8") == Approx(1978.9e12 / 4.8e12));
  // NVLink 4: 900 GB/s bidirectional = 450 GB/s each way, 8 GPUs, NVSwitch SHARP; NDR 400 Gb/s per
  // GPU.
  CHECK(network_of(r, "nvlink").bandwidth.si() == 450e9);
  CHECK(network_of(r, "nvlink").devices == 8);
  CHECK(network_of(r, "nvlink").in_network_reduction);
  CHECK(network_of(r, "ib").bandwidth.si() == 50e9);
  // DGX H200: 2 TB DDR5 as 32 × 64 GiB / 8 GPUs = 256 GiB; PCIe Gen5 x16 = 64 GB/s each way.
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 274'877'906'944.0);
  CHECK(r.host_memory->bandwidth.si() == 64e9);
}

TEST_CASE("B200 matches the HGX B200 specifications", "[hardware][library]") {
  const auto r = roofs_of("b200");
  // NVIDIA Blackwell datasheet, HGX B200 per GPU: 180 GB HBM3E at 7.7 TB/s.
  CHECK(r.main_memory().bandwidth->si() == 7.7e12);
  CHECK(r.main_memory().capacity.si() == 180e9);
  // HGX B200 (8 GPUs, with sparsity): TF32 18, FP16/BF16 36, FP8 72, INT8 72 POPS; FP4 72 PFLOPS
  // without sparsity; FP32 600 TFLOPS. Per GPU dense: / 8 (and / 2 for the sparse ones).
  CHECK(peak_of(r, "tf32") == 1125e12);
  CHECK(peak_of(r, "bf16") == 2250e12);
  CHECK(peak_of(r, "fp16") == 2250e12);
  CHECK(peak_of(r, "fp8") == 4500e12);
  CHECK(peak_of(r, "int8") == 4500e12);
  CHECK(peak_of(r, "fp4") == 9000e12);
  CHECK(peak_of(r, "fp32") == 75e12);
  CHECK(peak_of(r, "fp4_sparse") == 18000e12);  // datasheet per GPU: FP4 18 PFLOPS
  // bf16 ridge = 2250e12 / 7.7e12 = 292.2 FLOP/B; fp4: 9000e12 / 7.7e12 = 1168.8
  CHECK(ridge_of(r, "bf16") == Approx(2250e12 / 7.7e12));
  CHECK(ridge_of(r, "fp4") == Approx(9000e12 / 7.7e12));
  // NVLink 5: 1.8 TB/s bidirectional = 900 GB/s each way, 8 GPUs, NVLink SHARP; CX-7 400 Gb/s per
  // GPU.
  CHECK(network_of(r, "nvlink").bandwidth.si() == 900e9);
  CHECK(network_of(r, "nvlink").devices == 8);
  CHECK(network_of(r, "nvlink").in_network_reduction);
  CHECK(network_of(r, "ib").bandwidth.si() == 50e9);
  // DGX B200: 2 TB in 32 DIMMs / 8 GPUs = 256 GiB; PCIe Gen5 128 GB/s bidirectional = 64 GB/s each
  // way.
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 274'877'906'944.0);
  CHECK(r.host_memory->bandwidth.si() == 64e9);
}

TEST_CASE("GB200 NVL72 matches the Blackwell datasheet GB200 column", "[hardware][library]") {
  const auto r = roofs_of("gb200_nvl72");
  // NVIDIA Blackwell datasheet, GB200 NVL72 per GPU: 186 GB HBM3E at 8 TB/s.
  CHECK(r.main_memory().bandwidth->si() == 8e12);
  CHECK(r.main_memory().capacity.si() == 186e9);
  // Per GPU with sparsity: FP4 20, FP8 10, INT8 10 POPS, FP16/BF16 5, TF32 2.5 PFLOPS; halved.
  CHECK(peak_of(r, "tf32") == 1250e12);
  CHECK(peak_of(r, "bf16") == 2500e12);
  CHECK(peak_of(r, "fp16") == 2500e12);
  CHECK(peak_of(r, "fp8") == 5000e12);
  CHECK(peak_of(r, "int8") == 5000e12);
  CHECK(peak_of(r, "fp4") == 10000e12);
  CHECK(peak_of(r, "fp32") == 80e12);
  // bf16 ridge = 2500e12 / 8e12 = 312.5 FLOP/B; fp4: 10000e12 / 8e12 = 1250
  CHECK(ridge_of(r, "bf16") == Approx(2500e12 / 8e12));
  CHECK(ridge_of(r, "fp4") == Approx(10000e12 / 8e12));
  // One 72-GPU NVLink 5 domain at 900 GB/s each way per GPU (130 TB/s / 72 ≈ 1.8 TB/s
  // bidirectional).
  CHECK(network_of(r, "nvlink").bandwidth.si() == 900e9);
  CHECK(network_of(r, "nvlink").devices == 72);
  CHECK(network_of(r, "nvlink").in_network_reduction);
  CHECK(network_of(r, "ib").bandwidth.si() == 50e9);  // one 400 Gb/s ConnectX-7 per GPU
  // Grace: 480 GB LPDDR5X / 2 GPUs = 240 GB; NVLink-C2C 900 GB/s bidirectional / 2 / 2 GPUs = 225
  // GB/s.
  REQUIRE(r.host_memory);
  CHECK(r.host_memory->capacity.si() == 240e9);
  CHECK(r.host_memory->bandwidth.si() == 225e9);
}
