// SPDX-License-Identifier: MIT
// Collective times against the scaling book's worked answers (sharding.md, gpus.md), each
// derived from its formula in a comment.
#include "sim/cost/collectives.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"

#include <catch2/catch.hpp>

using rsim::CollectiveKind;

namespace {

const rsim::NetworkTier& tier_of(const rsim::Roofs& roofs, const std::string& name) {
  return *roofs.find_network(name);
}

rsim::Collective collective(CollectiveKind kind, double bytes, std::vector<std::int64_t> axes,
                            bool wraparound = true) {
  rsim::Collective result;
  result.kind = kind;
  result.bytes = rsim::Bytes(bytes);
  result.axes = std::move(axes);
  result.wraparound = wraparound;
  return result;
}

// TPU v4p: 4.5e10 B/s one way per link, wraparound on its 4×4×4 cube, ~1 µs per hop.
rsim::NetworkTier v4p_ici() {
  rsim::NetworkTier tier;
  tier.name = "ici";
  tier.topology = rsim::Topology::torus;
  tier.bandwidth = rsim::BytesPerSecond(4.5e10);
  tier.wraparound_size = 4;
  tier.hop_latency = rsim::Seconds(1e-6);
  return tier;
}

}  // namespace

TEST_CASE("v5e all-gather over an axis of 4: with and without wraparound", "[collectives]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  const auto& ici = tier_of(v5e, "ici");
  // sharding.md Pop Quiz 2: AllGather_Y(bf16[E_Y, F]), E = 2048, F = 8192, Y = 4:
  // V = 2048 · 8192 · 2 = 33,554,432 B. Ideal bidirectional ring: V / W_bidi = V / 9e10 = 372.8 µs
  // (the book rounds V to 34e6: 377 µs).
  const double volume = 2048.0 * 8192 * 2;
  const auto ideal =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {4}), ici);
  CHECK(ideal.time.si() == Approx(volume / 9e10));
  // v5e has no wraparound on an axis of 4: 3 hops of the 8.4 MB shard at 4.5e10 = 559 µs
  // (book: 560 µs; measured 680 µs).
  const auto open =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {4}, false), ici);
  CHECK(open.time.si() == Approx(3 * (volume / 4) / 4.5e10));
  CHECK(open.hops == 3);
  // E = F = 256: V = 131,072 B, shard 32 kB → 0.73 µs per hop < 1 µs: latency-bound, 3 hops = 3 µs.
  const auto small = rsim::collective_cost(
      collective(CollectiveKind::all_gather, 256.0 * 256 * 2, {4}, false), ici);
  CHECK(small.latency_bound);
  CHECK(small.time.si() == Approx(3e-6));
}

TEST_CASE("v4p collectives of sharding.md Q2 and Q3", "[collectives]") {
  const auto ici = v4p_ici();
  // Q2 (1): AllGather_X(bf16[B_X, D_Y]), B = 1024, D = 4096, X = Y = 4: the gathered array is
  // 2BD / Y = 2,097,152 B; V / W_bidi = 2,097,152 / 9e10 = 23.3 µs (book: 23 µs).
  CHECK(
      rsim::collective_cost(collective(CollectiveKind::all_gather, 2.0 * 1024 * 4096 / 4, {4}), ici)
          .time.si() == Approx(2.0 * 1024 * 4096 / 4 / 9e10));
  // Q2 (2): AllGather_XY: V = 2BD over two axes: V / (2 · W_bidi) = 8,388,608 / 1.8e11 = 46.6 µs.
  CHECK(
      rsim::collective_cost(collective(CollectiveKind::all_gather, 2.0 * 1024 * 4096, {4, 4}), ici)
          .time.si() == Approx(2.0 * 1024 * 4096 / 1.8e11));
  // Q2 (3): AllReduce_Z(bf16[B_X, D_Y]{U_Z}): V = 2BD / 16 = 524,288 B; 2V / W_bidi = 11.65 µs.
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_reduce, 2.0 * 1024 * 4096 / 16, {4}),
                              ici)
            .time.si() == Approx(2 * 524'288.0 / 9e10));
  // Q3: AllGather_X(bf16[B_X]), B = 128: 256 B in 2 hops, latency-bound: 2 µs.
  const auto tiny = rsim::collective_cost(collective(CollectiveKind::all_gather, 256.0, {4}), ici);
  CHECK(tiny.latency_bound);
  CHECK(tiny.time.si() == Approx(2e-6));
  // All-to-all on a bidirectional ring: V / (4 · W_bidi) = 1 GB / 3.6e11 (large enough that the
  // hops' latency does not matter).
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_to_all, 1e9, {4}), ici).time.si() ==
        Approx(1e9 / (4 * 9e10)));
  // ...and on a 4 × 4 torus: V · max(4, 4) / (4 · 16 · W_bidi) = 1e9 · 4 / (64 · 9e10).
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_to_all, 1e9, {4, 4}), ici).time.si() ==
        Approx(1e9 * 4 / (64 * 9e10)));
}

TEST_CASE("H100 collectives inside an NVSwitch node (gpus.md)", "[collectives]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  const auto& nvlink = tier_of(h100, "nvlink");
  // Pop quiz: AllGather(bf16[B_X, F]), B = 1024, F = 16384 on 8 GPUs: V = 33,554,432 B;
  // (N − 1)/N · V / W = 7/8 · 33,554,432 / 450e9 = 65.2 µs (book: 65 µs).
  const double volume = 2.0 * 1024 * 16384;
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {8}), nvlink)
            .time.si() == Approx(7.0 / 8 * volume / 450e9));
  // Quiz 2 Q3: bf16[D_X, F], D = 4096, F = 65,536: 536,870,912 B · 7/8 / 450e9 = 1.04 ms.
  CHECK(
      rsim::collective_cost(collective(CollectiveKind::all_gather, 2.0 * 4096 * 65536, {8}), nvlink)
          .time.si() == Approx(1.04e-3).epsilon(0.005));
  // All-reduce: twice the all-gather without SHARP; V / W with it.
  auto all_reduce = collective(CollectiveKind::all_reduce, volume, {8});
  CHECK(rsim::collective_cost(all_reduce, nvlink).time.si() ==
        Approx(2 * 7.0 / 8 * volume / 450e9));
  all_reduce.in_network_reduction = true;
  CHECK(rsim::collective_cost(all_reduce, nvlink).time.si() == Approx(volume / 450e9));
  // All-to-all: V · (N − 1) / (W · N²) = V · 7 / (450e9 · 64).
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_to_all, volume, {8}), nvlink)
            .time.si() == Approx(volume * 7 / (450e9 * 64)));
  // Across nodes over InfiniBand, per-GPU NDR: 400 Gb/s = 50 GB/s; 2 nodes: 1/2 · V / 5e10.
  const auto& ib = tier_of(h100, "ib");
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {2}), ib).time.si() ==
        Approx(0.5 * volume / 5e10));
}

TEST_CASE("collectives reject impossible shapes", "[collectives]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  CHECK_THROWS_AS(rsim::collective_cost(collective(CollectiveKind::all_gather, 1e6, {16}),
                                        tier_of(h100, "nvlink")),
                  rsim::InputError);  // 16 GPUs exceed an 8-GPU NVLink domain
  CHECK_THROWS_AS(rsim::collective_cost(collective(CollectiveKind::all_gather, 1e6, {1}),
                                        tier_of(h100, "nvlink")),
                  rsim::InputError);
}

TEST_CASE("scaling book: a D-sharded matmul on 2 v5e chips escapes the network roof above D = 8755",
          "[collectives][scaling_book]") {
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  rsim::MatmulPlan plan;
  plan.devices = 2;
  plan.shard = rsim::MatmulSharding::contract;
  plan.network = "ici";
  const std::int64_t batch = 1024;
  const std::int64_t width = 16384;
  const auto result = rsim::analyze_matmul(
      {batch, 8192, width, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16"}, v5e,
      plan);
  // T_math = 2BDF / (2 · 1.97e14) = BDF / 1.97e14 per chip.
  CHECK(result.cost.t_math.si() == Approx(1024.0 * 8192 * 16384 / 1.97e14));
  // T_comms = 2BF / 4.5e10: each chip's bf16 partial sums [B, F] cross the link (roofline.md).
  CHECK(result.t_net.si() == Approx(2.0 * batch * width / 4.5e10));
  // Compute-bound iff D/2 > 1.97e14 / 4.5e10 = 4377.8, i.e. D > 8755.6, whatever B is.
  REQUIRE(result.critical_d);
  CHECK(*result.critical_d == Approx(2 * 1.97e14 / 4.5e10));
  CHECK(result.bound == rsim::Bound::network);  // D = 8192 < 8755.6
  // Sharding the batch instead needs no communication at all.
  plan.shard = rsim::MatmulSharding::batch;
  const auto by_batch = rsim::analyze_matmul(
      {batch, 8192, width, rsim::DType::bf16, rsim::DType::bf16, rsim::DType::bf16, "bf16"}, v5e,
      plan);
  CHECK(by_batch.t_net.si() == 0.0);
  CHECK_FALSE(by_batch.collective);
  // FLOPs are conserved: each of 2 devices does half.
  CHECK(by_batch.cost.flops.si() * 2 == Approx(2.0 * batch * 8192 * width));
  CHECK(result.cost.flops.si() * 2 == Approx(2.0 * batch * 8192 * width));
}

TEST_CASE("hierarchical collectives: the slowest level sets the time (gpus.md)", "[collectives]") {
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  const std::vector<const rsim::NetworkTier*> tiers{h100.find_network("nvlink"),
                                                    h100.find_network("ib")};
  const double volume = 1e9;
  // 2 nodes × 8 GPUs: node level V · 7/(8 · 450e9) = V / 514e9; across nodes the node's 8 NICs
  // together (8 × 50 GB/s = 400 GB/s): V · 1/(2 · 400e9) = V / 800e9. The node level is slower.
  const auto two_nodes =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {16}), tiers);
  CHECK(two_nodes.time.si() == Approx(volume * 7 / (8 * 450e9)));
  // 32 nodes (a scalable unit): across nodes V · 31/(32 · 400e9) = V / 413e9 now dominates.
  const auto unit =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {256}), tiers);
  CHECK(unit.time.si() == Approx(volume * 31 / (32 * 400e9)));
  CHECK_THAT(unit.algorithm, Catch::Contains("hierarchical: nvlink ×8"));
}

TEST_CASE("GPU networks have latency: NCCL's per-step figure over a tree's steps",
          "[collectives]") {
  // Issue 21 #7: a 1 kB all-reduce over 8 H100s cost 3.9 ns (bandwidth only). The NVLink tier's
  // hop latency is NCCL's per-step NVLink figure, 0.6 µs (tuning.cc hwLat, ring LL); the lower
  // bound counts the fewest steps any algorithm takes: a tree's 2·⌈log2 8⌉ = 6 for an
  // all-reduce (the ring's 2·(8 − 1) = 14 is not a floor): 3.6 µs.
  const auto h100 = rsim::test::preset_roofs("h100_sxm");
  const auto& nvlink = tier_of(h100, "nvlink");
  const auto small =
      rsim::collective_cost(collective(CollectiveKind::all_reduce, 1e3, {8}), nvlink);
  CHECK(small.hops == 14);
  CHECK(small.latency_time.si() == Approx(6 * 0.6e-6));
  CHECK(small.time.si() == Approx(3.6e-6));
  CHECK(small.latency_bound);
  // An all-gather over 8: ⌈log2 8⌉ = 3 steps (ring: 7), 1.8 µs.
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_gather, 1e3, {8}), nvlink)
            .latency_time.si() == Approx(3 * 0.6e-6));
  // Over 2 nodes of InfiniBand: one step each way, 2 × 2.7 µs (tuning.cc hwLat[NET], ring LL).
  CHECK(rsim::collective_cost(collective(CollectiveKind::all_reduce, 1e3, {2}), tier_of(h100, "ib"))
            .latency_time.si() == Approx(2 * 2.7e-6));
  // 32 nodes: a tree's 2·⌈log2 32⌉ = 10 steps, not the ring's 62: 27 µs.
  CHECK(
      rsim::collective_cost(collective(CollectiveKind::all_reduce, 1e3, {32}), tier_of(h100, "ib"))
          .latency_time.si() == Approx(10 * 2.7e-6));
}

TEST_CASE("a mesh axis of a whole v5e-256 slice runs over both torus dimensions", "[collectives]") {
  // Issue 21 #3b. 256 chips on one mesh axis of a 16 × 16 v5e slice (tpu_v5e.yaml: wraparound on
  // axes of 16) are the torus's two axes of 16, not one ring of 256: an all-gather moves V over
  // both axes' bidirectional links at once, V / (2 axes × 2 × 4.5e10 B/s) = V / 1.8e11
  // (sharding.md: several axes, V / Σ W_axis), in 8 + 8 hops; a ring of 256 would take V / 9e10 and
  // 128 hops.
  const auto v5e = rsim::test::preset_roofs("tpu_v5e");
  const auto& ici = tier_of(v5e, "ici");
  const double volume = 1e9;
  const auto slice =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {256}), ici);
  CHECK(slice.bandwidth_time.si() == Approx(volume / 1.8e11));
  CHECK(slice.hops == 16);
  // The same as the mesh written as two axes of 16.
  const auto two_axes =
      rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {16, 16}), ici);
  CHECK(two_axes.time.si() == slice.time.si());
  // An axis of 16 is one ring with wraparound: ⌊16/2⌋ = 8 hops, V / 9e10.
  const auto row = rsim::collective_cost(collective(CollectiveKind::all_gather, volume, {16}), ici);
  CHECK(row.bandwidth_time.si() == Approx(volume / 9e10));
}
