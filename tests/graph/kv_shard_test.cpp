// SPDX-License-Identifier: MIT
// KV-cache sharding "heads first, then batch" under tensor parallelism with more devices than KV
// heads: Llama 3 70B (K = 8 KV heads, N = 64 query heads, G = 8) over a TPU v5e 4×4 slice run as
// one 16-way tensor axis (variant bf16_tp16 of scenarios/llama3_70b_decode_v5e.yaml: batch 32,
// an 8192-token prompt, 512 decode steps, bf16 weights and KV cache).
#include "run_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

// Llama 3 70B (models/llama3_70b.yaml): L = 80 layers, K = 8 KV heads of H = 128.
constexpr double kLayers = 80.0;
constexpr double kKvHeads = 8.0;
constexpr double kHeadDim = 128.0;
// K and V, bf16: 2 · L · K · H · 2 B = 327,680 B per token of one sequence.
constexpr double kKvBytesPerToken = 2.0 * kLayers * kKvHeads * kHeadDim * 2.0;

rsim::RunResult tp16(std::vector<std::pair<std::string, std::string>> sets = {}) {
  rsim::Scenario scenario =
      rsim::load_scenario(rsim::test::source_path("scenarios/llama3_70b_decode_v5e.yaml"),
                          {std::move(sets), "bf16_tp16"});
  rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  return rsim::analyze(std::move(scenario), std::move(roofs));
}

std::vector<const rsim::Op*> ops_named(const rsim::RunResult& run, const std::string& suffix) {
  std::vector<const rsim::Op*> result;
  for (const rsim::OpGraph::Vertex vertex : run.table.order) {
    const rsim::Op& op = run.graph.op(vertex);
    if (op.name.ends_with(suffix)) {
      result.push_back(&op);
    }
  }
  return result;
}

std::size_t row_of(const rsim::RunResult& run, const rsim::Op* op) {
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    if (&run.graph.op(run.table.order[row]) == op) {
      return row;
    }
  }
  FAIL("op not in the table");
  return 0;
}

}  // namespace

TEST_CASE("Llama 3 70B on 16 v5e chips: the KV cache split 8 KV heads × 2 batch halves",
          "[decode][kv_shard]") {
  const auto run = tp16();
  // Y = 16 chips, K = 8 KV heads: 8 groups of Y/K = 2 chips, each group one KV head; the 32
  // sequences split in 2 halves of 16 over each group's chips.
  // The cache each step reads (its first step, 8192 cached tokens): per chip
  // 2 (K, V) · L 80 · K 8 · H 128 · 8192 tokens · 32 sequences · 2 B / 16 = 5,368,709,120 B.
  // Before this change the 8 KV heads were replicated wholesale: every chip read all 16 × that,
  // 85,899,345,920 B (each layer's attention read 1.074 GB).
  const double read_per_chip = 2.0 * kLayers * kKvHeads * kHeadDim * 8192 * 32 * 2.0 / 16.0;
  CHECK(read_per_chip == 5'368'709'120.0);
  double cache_read = 0.0;
  const auto attention = ops_named(run, "attention");
  REQUIRE(attention.size() == 1);
  for (const rsim::Tensor& tensor : attention.front()->inputs) {
    if (tensor.role == rsim::TensorRole::kv_cache && tensor.has_axis("kv_seq")) {
      // [batch 32 / 2, kv_seq 8192, kv_heads 8 / 8, head_dim 128]
      CHECK(tensor.shape() == "[batch=16, kv_seq=8192, kv_heads=1, head_dim=128]");
      cache_read += tensor.bytes().si() * static_cast<double>(attention.front()->count);
    }
  }
  CHECK(cache_read == read_per_chip);
  // Attention per chip: G = 8 query heads of its KV head × 16 sequences (the same FLOPs as the
  // 4 heads × 32 sequences of a heads-only split): 4 · 16 · 8 · 128 · 8193 keys.
  CHECK(attention.front()->attention.batch == 16);
  CHECK(attention.front()->attention.heads == 8);
  const std::size_t row = row_of(run, attention.front());
  CHECK(run.table.costs[row].flops.si() == 4.0 * 16 * 8 * 128 * 8193);
  // Bytes per layer: the cached K and V, 2 · 16 · 8192 · 128 · 2 B = 67,108,864, plus q and the
  // output [16, 1, 8, 128] (32,768 B each) and the new token's k and v [16, 1, 1, 128]
  // (4,096 B each): 67,182,592 B (a 1/16 of the 1.074 GB read before). Intensity
  // 4·16·8·128·8193 / 67,182,592 = 7.99 ≈ G = 8 (it was 0.5: 4 query heads against 8 KV heads).
  CHECK(run.table.costs[row].bytes.si() == Approx(67'108'864.0 + 2 * 32'768.0 + 2 * 4'096.0));
  CHECK(run.table.costs[row].intensity == Approx(7.99).epsilon(1e-3));
  // The memory table holds the request's last step, 8192 + 512 = 8704 tokens per sequence:
  // 32 · 8704 · 327,680 B / 16 = 5,704,253,440 B per chip (was 32 · 8704 · 327,680 B =
  // 91,268,055,040 B: 570 % of a 16 GB chip, reported DOES NOT FIT).
  CHECK(run.footprint.kv_cache.si() == 32.0 * 8704 * kKvBytesPerToken / 16.0);
  CHECK(run.footprint.fits());
  CHECK(std::any_of(run.notes.begin(), run.notes.end(), [](const std::string& note) {
    return note.find(
               "the KV cache is split 8 × 2 ways (KV heads × sequences: 1/16 of it per "
               "device)") != std::string::npos;
  }));
}

TEST_CASE("the KV split moves the queries and the attention output by all-to-all",
          "[decode][kv_shard]") {
  const auto run = tp16();
  // q arrives sharded by query heads over the 16 chips: chip m = 2k + j holds heads 4m … 4m + 3,
  // half of KV head k's group of 8, for all 32 sequences. Attention on chip (k, j) needs the
  // group's 8 heads for sequence half j: the 2 chips of the group swap halves, an all-to-all over
  // 2 chips of V = the group's whole q, 32 sequences · 8 heads · 128 · 2 B = 65,536 B. The output
  // goes back for o_proj (heads over 16, all sequences) by the inverse all-to-all, the same V.
  // kv_proj needs none: x_norm is replicated over the tensor axis, so each chip computes its KV
  // head's K and V and keeps its half of the sequences (a local slice).
  for (const std::string name : {"attention.reshard_all_to_all", "o_proj.reshard_all_to_all"}) {
    const auto found = ops_named(run, name);
    REQUIRE(found.size() == 1);
    const rsim::Op& op = *found.front();
    CHECK(op.collective.kind == rsim::CollectiveKind::all_to_all);
    CHECK(op.collective.bytes.si() == 32.0 * 8 * 128 * 2);
    CHECK(op.collective.axes == std::vector<std::int64_t>{2});
    CHECK(op.mesh_axis == "model");
    CHECK(op.network == "ici");
    CHECK(op.count == 80);
    // v5e ICI (hardware/tpu_v5e.yaml): 4.5e10 B/s one way per link, 1 µs per hop. A bidirectional
    // ring of 2: V · 2 / (4 · 2 · 2 · 4.5e10) = 182 ns of bandwidth, 1 hop of latency: 1 µs.
    CHECK(run.table.costs[row_of(run, &op)].t_net.si() == Approx(1e-6));
  }
  CHECK(ops_named(run, "kv_proj.reshard_all_to_all").empty());
  CHECK(ops_named(run, "kv_cache_write.reshard_all_to_all").empty());
}

TEST_CASE("each KV head's projection is stored on its 2 chips, not on all 16",
          "[decode][kv_shard]") {
  const auto run = tp16();
  // Parameters (tests/analysis/decode_test.cpp): 70,553,706,496 in all; the graph's weights leave
  // out the embedding table (a decode step gathers rows of it), 1,050,673,152: 69,503,033,344. Per
  // chip: kv_proj 80 · 2 · D 8192 · K 8 · H 128 = 1,342,177,280 over 8 (one KV head per group), the
  // norms 80 · 2 · 8192 + 8192 = 1,318,912 replicated, the rest over 16:
  // (69,503,033,344 − 1,342,177,280 − 1,318,912) / 16 + 1,342,177,280 / 8 + 1,318,912
  // = 4,429,062,144. The footprint charges every parameter at that share, in bf16.
  const double graph_weights = 69'503'033'344.0;
  const double kv_proj = 1'342'177'280.0;
  const double norms = 1'318'912.0;
  const double per_chip = (graph_weights - kv_proj - norms) / 16.0 + kv_proj / 8.0 + norms;
  CHECK(per_chip == 4'429'062'144.0);
  CHECK(run.footprint.weights.si() == Approx(70'553'706'496.0 * 2.0 * per_chip / graph_weights));
}

TEST_CASE("a batch that does not divide over a KV head's chips keeps the cache on them",
          "[decode][kv_shard]") {
  const auto run = tp16({{"workload.batch", "3"}});
  // 3 sequences do not split over 2 chips: each KV head's cache stays on both chips of its group
  // (Megatron's replication of a KV head on the chips of its query heads): 1/8 of the cache per
  // chip, 3 · 8704 · 327,680 B / 8 = 1,069,547,520 B, and no all-to-all (attention keeps the
  // queries' heads split: 4 heads against 1 KV head per chip).
  CHECK(run.footprint.kv_cache.si() == 3.0 * 8704 * kKvBytesPerToken / 8.0);
  CHECK(ops_named(run, "reshard_all_to_all").empty());
  const auto attention = ops_named(run, "attention");
  REQUIRE(attention.size() == 1);
  CHECK(attention.front()->attention.batch == 3);
  CHECK(attention.front()->attention.heads == 4);
  CHECK(std::any_of(run.notes.begin(), run.notes.end(), [](const std::string& note) {
    return note.find(
               "3 sequences per device do not divide over the 2 devices that share each "
               "KV head: the KV cache is replicated on them (1/8 of it per device)") !=
           std::string::npos;
  }));
}

TEST_CASE("with a data axis the cache splits over data and the KV head's chips",
          "[decode][kv_shard]") {
  // 2 data replicas × 16-way TP (32 chips): 16 sequences per replica, 8 per chip of each group.
  // Per chip: 32 · 8704 · 327,680 B / 32 = 2,852,126,720 B.
  const auto run = tp16({{"plan.preset", "megatron_tp_dp"},
                         {"plan.mesh.data", "2 over ici"},
                         {"plan.mesh.model", "16 over ici"}});
  CHECK(run.footprint.kv_cache.si() == 32.0 * 8704 * kKvBytesPerToken / 32.0);
  const auto attention = ops_named(run, "attention");
  REQUIRE(attention.size() == 1);
  CHECK(attention.front()->attention.batch == 8);
  // The all-to-all's V: one replica's group q, 16 sequences · 8 heads · 128 · 2 B = 32,768 B.
  const auto exchange = ops_named(run, "attention.reshard_all_to_all");
  REQUIRE(exchange.size() == 1);
  CHECK(exchange.front()->collective.bytes.si() == 16.0 * 8 * 128 * 2);
}

TEST_CASE("MHA under tensor parallelism is untouched by the KV split", "[decode][kv_shard]") {
  // Llama 2 7B: 32 KV heads = 32 query heads divide over 16 chips: 2 of each per chip, the
  // whole batch, no note and no all-to-all. KV per chip at the last step:
  // 32 sequences · 8704 · 2 · 32 layers · 32 heads · 128 · 2 B / 16 = 18,253,611,008 B.
  // (The op tables of the shipped scenarios, their variants and this one were compared with the
  // binary before the change: identical JSON.)
  const auto run = tp16({{"model", "llama2_7b"}});
  CHECK(run.notes.empty());
  CHECK(ops_named(run, "reshard_all_to_all").empty());
  CHECK(run.footprint.kv_cache.si() == 32.0 * 8704 * 2 * 32 * 32 * 128 * 2 / 16.0);
  const auto attention = ops_named(run, "attention");
  REQUIRE(attention.size() == 1);
  CHECK(attention.front()->attention.batch == 32);
  CHECK(attention.front()->attention.heads == 2);
}

TEST_CASE("the KV split takes the decode step from 121 ms to 20 ms", "[decode][kv_shard]") {
  const auto run = tp16();
  // Each chip reads per step its weights, 4,429,062,144 graph parameters (above) · 2 B =
  // 8,858,124,288 B, and its KV cache, 5,368,709,120 B (above): 14,226,833,408 B at 8.2e11 B/s
  // = 17.35 ms. Before, the KV cache alone was 85,899,345,920 B per chip (104.8 ms) and the step
  // 121.4 ms. Per layer the collectives add two all-reduces of [32, 8192] bf16 over 16 chips (a
  // bidirectional ring: 2 · 8 hops of 1 µs = 16 µs, latency-bound) and the two 1 µs all-to-alls:
  // 80 · 34 µs = 2.72 ms. The lower bound sums per-op maxima, so it is at least 20.07 ms; the
  // rest is the activations the ops move (< 2 %).
  const double floor = (4'429'062'144.0 * 2.0 + 5'368'709'120.0) / 8.2e11 + 80.0 * 34e-6;
  CHECK(floor == Approx(20.07e-3).epsilon(1e-3));
  CHECK(run.bounds.total.t_lower.si() >= floor);
  CHECK(run.bounds.total.t_lower.si() <= floor * 1.02);
  CHECK(run.bounds.total.t_net.si() == Approx(80.0 * 34e-6));
  CHECK(run.bounds.total.bound == rsim::Bound::memory);
}
