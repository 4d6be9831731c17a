// SPDX-License-Identifier: MIT
// Parallel plans on the op graph: sharding propagation, inserted collectives, validation.
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/json.hpp"
#include "sim/spec/config.hpp"

#include <catch2/catch.hpp>

namespace {

double sum_flops(const rsim::RunResult& run, const std::vector<rsim::OpKind>& kinds) {
  double total = 0.0;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (std::find(kinds.begin(), kinds.end(), op.kind) != kinds.end()) {
      total += run.table.costs[row].flops.si() * static_cast<double>(op.count);
    }
  }
  return total;
}

rsim::Plan parse(const std::string& yaml, const std::string& hardware) {
  const auto document = rsim::parse_config(yaml, "plan.yaml");
  return rsim::parse_plan(
      document.at("plan"),
      rsim::load_hardware(rsim::test::source_path("hardware/" + hardware + ".yaml")));
}

}  // namespace

TEST_CASE("Megatron TP: two all-reduces per layer of the [B·T, D] activations", "[plan]") {
  const auto run = rsim::test::run_scenario("llama3_70b_tp8_h100");
  std::vector<std::string> collectives;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (op.kind != rsim::OpKind::collective) {
      continue;
    }
    collectives.push_back(op.name);
    CHECK(op.count == 80);  // once per layer
    CHECK(op.collective.kind == rsim::CollectiveKind::all_reduce);
    // batch 8 × 2048 tokens × D 8192 × 2 B (bf16) = 268,435,456 B of partial sums
    CHECK(op.collective.bytes.si() == Approx(268'435'456.0));
    // ring through NVSwitch: 2 · 7/8 · V / 450e9 = 1.0440 ms
    CHECK(run.table.costs[row].t_net.si() == Approx(2 * 7.0 / 8 * 268'435'456.0 / 450e9));
  }
  CHECK(collectives == std::vector<std::string>{"o_proj.all_reduce", "down_proj.all_reduce"});
}

TEST_CASE("every plan conserves the matmul FLOPs", "[plan]") {
  const std::vector<rsim::OpKind> matmuls{rsim::OpKind::matmul};
  const std::vector<rsim::OpKind> both{rsim::OpKind::matmul, rsim::OpKind::attention};
  const auto single = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan", "single"}});
  for (const char* preset : {"megatron_tp", "fsdp", "data_parallel", "shard_d"}) {
    INFO(preset);
    const auto run = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", preset}});
    CHECK(run.scenario.plan.devices() == 8);
    // Σ over the 8 devices of the per-device matmul FLOPs = the single-device FLOPs.
    CHECK(8 * sum_flops(run, matmuls) == Approx(sum_flops(single, matmuls)));
    // Attention too, except under shard_d: nothing shards its heads or batch, so every
    // device computes all of it (8 × the work).
    const double factor = std::string(preset) == "shard_d" ? 8.0 : 1.0;
    CHECK(8 * sum_flops(run, both) ==
          Approx(sum_flops(single, both) +
                 (factor - 1) * sum_flops(single, {rsim::OpKind::attention})));
  }
}

TEST_CASE("FSDP gathers every weight before use and data parallelism sends nothing", "[plan]") {
  const auto fsdp = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "fsdp"}});
  double gathered = 0.0;
  for (std::size_t row = 0; row < fsdp.table.order.size(); ++row) {
    const rsim::Op& op = fsdp.graph.op(fsdp.table.order[row]);
    if (op.kind == rsim::OpKind::collective) {
      CHECK(op.collective.kind == rsim::CollectiveKind::all_gather);
      gathered += op.collective.bytes.si() * static_cast<double>(op.count);
    }
  }
  // The gathered weights are every matmul weight sharded on embed: per layer Q, KV, O, gate/up,
  // down = 2·8192·(8192 + 2048 + 8192 + 3 · 28672) B... plus the LM head [8192, 128256]; at least
  // the 80 layers' 2 · 80 · (2 · 8192² + 2 · 8192 · 1024 + 3 · 8192 · 28672) = 136.9 GB.
  CHECK(gathered > 2.0 * 80 * (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672));
  const auto data =
      rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "data_parallel"}});
  CHECK(data.bounds.total.t_net.si() == 0.0);
}

TEST_CASE("shard over D is network-bound below the critical D and over batch sends nothing",
          "[plan][scaling_book]") {
  const auto by_d = rsim::test::run_scenario("shard_d_vs_batch");
  const auto by_batch =
      rsim::test::run_scenario("shard_d_vs_batch", {{"plan.preset", "shard_batch"}});
  // Gemma 2B: D = 2048 < 2 · 1.97e14 / 4.5e10 = 8755.6, so the all-reduces dominate.
  CHECK(by_d.bounds.total.bound == rsim::Bound::network);
  CHECK(by_d.bounds.total.t_net > by_d.bounds.total.t_math);
  CHECK(by_batch.bounds.total.t_net.si() == 0.0);
  CHECK(by_batch.bounds.total.t_lower < by_d.bounds.total.t_lower);
}

TEST_CASE("MQA under tensor parallelism replicates the KV heads and says so", "[plan]") {
  const auto run = rsim::test::run_scenario("shard_d_vs_batch", {{"plan.preset", "megatron_tp"}});
  REQUIRE(run.notes.size() == 1);
  CHECK_THAT(run.notes.front(),
             Catch::Contains("1 kv_heads do not divide over mesh axis 'model' (2): replicated"));
}

TEST_CASE("plans are validated: divisibility, tiers, domains, rules", "[plan]") {
  // 8 query heads over 16 chips do not divide.
  CHECK_THROWS_WITH(
      rsim::test::run_scenario(
          "shard_d_vs_batch", {{"plan.preset", "megatron_tp"}, {"plan.mesh.model", "16 over ici"}}),
      Catch::Contains("axis 'heads' of size 8 (q_proj.weight of "
                      "decoder/layer/q_proj) does not divide over mesh axis 'model' "
                      "(16)"));
  CHECK_THROWS_WITH(
      parse("plan: {preset: megatron_tp, mesh: {model: 16 over nvlink}}\n", "h100_sxm"),
      "plan.yaml:1:35: error: 'plan.mesh': the mesh puts 16 devices on nvlink, whose "
      "domain is 8 devices");
  CHECK_THROWS_WITH(parse("plan: {preset: megatron_tp, mesh: {model: 8 over ici}}\n", "h100_sxm"),
                    Catch::Contains("NVIDIA H100 SXM5 80GB has no network tier 'ici' (tiers: "
                                    "nvlink, ib)"));
  CHECK_THROWS_WITH(
      parse("plan: {mesh: {model: 8 over nvlink}, rules: {mlp: tensor}}\n", "h100_sxm"),
      Catch::Contains("'plan.rules.mlp': no mesh axis 'tensor' in 'mesh'"));
  CHECK_THROWS_WITH(parse("plan: {mesh: {model: eight}}\n", "h100_sxm"),
                    Catch::Contains("expected \"N over TIER\""));
  CHECK_THROWS_WITH(
      parse("plan: {preset: megatron_tp_dp, mesh: {model: 8 over nvlink}}\n", "h100_sxm"),
      Catch::Contains("preset 'megatron_tp_dp' shards 'batch' over mesh axis 'data', "
                      "which the mesh lacks"));
  CHECK_THROWS_WITH(
      parse("plan: {mesh: {model: 2 over nvlink}}\n", "thor_t5000"),
      Catch::Contains("has no network tier 'nvlink' (tiers: none; it is a single device)"));
}

TEST_CASE("a preset on a one-axis mesh uses that axis whatever its name", "[plan]") {
  const auto plan = parse("plan: {preset: fsdp, mesh: {x: 8 over nvlink}}\n", "h100_sxm");
  CHECK(plan.mesh_axis_for("batch", false) == "x");
  CHECK(plan.mesh_axis_for("embed", true) == "x");
  CHECK_FALSE(plan.mesh_axis_for("embed", false));  // activations keep their embed axis
}

TEST_CASE("critical path: collectives that feed the next op do not overlap, prefetches do",
          "[plan][bounds]") {
  // One device: one stream, so the critical path is the sum of the per-op maxima.
  const auto single = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan", "single"}});
  CHECK(single.bounds.total.t_critical.si() == Approx(single.bounds.total.t_lower.si()));
  // Megatron TP: each all-reduce waits for its matmul and the next op waits for it: no overlap.
  const auto tp = rsim::test::run_scenario("llama3_70b_tp8_h100");
  CHECK(tp.bounds.total.t_critical.si() == Approx(tp.bounds.total.t_lower.si()));
  // FSDP: weight gathers need no activations, so they run while earlier ops compute.
  const auto fsdp = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "fsdp"}});
  CHECK(fsdp.bounds.total.t_critical < fsdp.bounds.total.t_lower);
  CHECK(fsdp.bounds.total.t_critical >= fsdp.bounds.total.t_overlapped);
}

TEST_CASE("a mesh axis over nvlink+ib is a hierarchy of tiers", "[plan]") {
  const auto plan =
      parse("plan: {preset: data_parallel, mesh: {data: 16 over nvlink+ib}}\n", "h100_sxm");
  CHECK(plan.devices() == 16);
  CHECK(plan.mesh.front().network == "nvlink+ib");
  CHECK_THROWS_WITH(parse("plan: {mesh: {data: 12 over nvlink+ib}}\n", "h100_sxm"),
                    Catch::Contains("12 devices do not split into groups of 8 on nvlink"));
  CHECK_THROWS_WITH(parse("plan: {mesh: {data: 16 over nvlink+eth}}\n", "h100_sxm"),
                    Catch::Contains("has no network tier 'eth'"));
  // FSDP over 16 GPUs in 2 nodes: each weight gather is timed on both levels; the node level
  // (7/8 · V / 450e9) is slower than the 2 nodes' 400 GB/s each (1/2 · V / 400e9).
  auto scenario =
      rsim::load_scenario(rsim::test::source_path("tests/data/valid/fsdp_two_nodes.yaml"));
  auto roofs = rsim::scenario_roofs(scenario, "");
  const auto run = rsim::analyze(std::move(scenario), std::move(roofs));
  int collectives = 0;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (op.kind == rsim::OpKind::collective) {
      ++collectives;
      CHECK(op.network == "nvlink+ib");
      CHECK(run.table.costs[row].t_net.si() == Approx(op.collective.bytes.si() * 7 / (8 * 450e9)));
    }
  }
  CHECK(collectives > 0);
}

TEST_CASE("sequence parallelism: reduce-scatter + all-gather in place of each all-reduce",
          "[plan]") {
  const auto tp = rsim::test::run_scenario("llama3_70b_tp8_h100");
  const auto sp =
      rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "sequence_parallel"}});
  std::vector<std::string> layer_collectives;
  for (std::size_t row = 0; row < sp.table.order.size(); ++row) {
    const rsim::Op& op = sp.graph.op(sp.table.order[row]);
    if (op.kind == rsim::OpKind::collective && op.block == rsim::Block::layer) {
      layer_collectives.push_back(std::string(rsim::to_string(op.collective.kind)));
      // each moves the [8, 2048, 8192] bf16 activations: 268,435,456 B
      CHECK(op.collective.bytes.si() == Approx(268'435'456.0));
    }
  }
  // One all-gather serves both Q and K/V projections; O and down reduce-scatter.
  std::sort(layer_collectives.begin(), layer_collectives.end());
  CHECK(layer_collectives ==
        std::vector<std::string>{"all-gather", "all-gather", "reduce-scatter", "reduce-scatter"});
  // A ring all-reduce is a reduce-scatter plus an all-gather: the same network time as TP's.
  double tp_layer_net = 0.0;
  double sp_layer_net = 0.0;
  for (const auto* run : {&tp, &sp}) {
    for (const auto& block : run->bounds.blocks) {
      if (block.block == rsim::Block::layer) {
        (run == &tp ? tp_layer_net : sp_layer_net) = block.totals.t_net.si();
      }
    }
  }
  CHECK(sp_layer_net == Approx(tp_layer_net));
  // Norms and residual adds now touch 1/8 of the activations each: less DRAM time.
  CHECK(sp.bounds.total.t_mem < tp.bounds.total.t_mem);
}

TEST_CASE("run JSON breaks T_net down by tier and names each collective's bytes",
          "[plan][report]") {
  const auto run = rsim::test::run_scenario("llama3_70b_tp8_h100");
  const auto json = rsim::run_to_json(run);
  const auto& totals = json["totals"];
  CHECK(totals["t_net_by_tier_s"]["nvlink"].get<double>() ==
        Approx(totals["t_net_s"].get<double>()));
  // 2 all-reduces × 80 layers × 268,435,456 B
  CHECK(totals["net_bytes_by_tier"]["nvlink"].get<double>() == Approx(160 * 268'435'456.0));
  CHECK(totals["overlap_needed_s"].get<double>() ==
        Approx(totals["t_lower_s"].get<double>() - totals["t_overlapped_s"].get<double>()));
  for (const auto& op : json["ops"]) {
    if (op["kind"] == "collective") {
      CHECK(op["network"] == "nvlink");
      // 80 layers × 268,435,456 B per all-reduce
      CHECK(op["collective_bytes"].get<double>() == Approx(80 * 268'435'456.0));
    }
  }
}

TEST_CASE("weights per device: TP and FSDP store 1/N, data parallelism all", "[plan]") {
  const auto single = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan", "single"}});
  for (const char* preset : {"megatron_tp", "fsdp"}) {
    INFO(preset);
    const auto run = rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", preset}});
    // 1/8 but for the replicated norm scales (81 · 2 · 8192 of 70.55e9 parameters under TP).
    CHECK(run.footprint.weights / single.footprint.weights == Approx(1.0 / 8).epsilon(0.001));
  }
  const auto data =
      rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "data_parallel"}});
  CHECK(data.footprint.weights.si() == Approx(single.footprint.weights.si()));
}

TEST_CASE("memory per device decides whether a plan fits", "[plan][memory]") {
  // Data parallel keeps all of Llama 3 70B on each H100: 70.55e9 × 2 B = 141.1 GB > 80 GB.
  const auto data =
      rsim::test::run_scenario("llama3_70b_tp8_h100", {{"plan.preset", "data_parallel"}});
  CHECK(data.footprint.capacity.si() == Approx(80e9));
  CHECK_FALSE(data.footprint.fits());
  // TP=8: 141.1 / 8 = 17.6 GB of weights, plus the largest op's activations: a norm (not fused
  // here) reads and writes the whole [8, 2048, 8192] bf16 stream, 2 · 268,435,456 B, more than the
  // gate/up projection's 268 MB input + [8, 2048, 2, 3584] output (235 MB). It fits.
  const auto tp = rsim::test::run_scenario("llama3_70b_tp8_h100");
  CHECK(tp.footprint.activations.si() == Approx(2 * 2.0 * 8 * 2048 * 8192));
  CHECK(tp.footprint.fits());
}

TEST_CASE("host_share: unified memory left to the CPU", "[memory]") {
  const auto pi05 = rsim::test::source_path("scenarios/pi05_thor.yaml");
  auto scenario = rsim::load_scenario(pi05, {{{"host_share", "16 GB"}}, ""});
  auto roofs = rsim::scenario_roofs(scenario, "");
  const auto run = rsim::analyze(std::move(scenario), std::move(roofs));
  CHECK(run.footprint.capacity.si() == Approx(128e9 - 16e9));  // 128 GB LPDDR5X − 16 GB
  CHECK_THROWS_WITH(rsim::load_scenario(pi05, {{{"host_share", "200 GB"}}, ""}),
                    Catch::Contains("leaves nothing of the 128 GB of dram"));
  CHECK_THROWS_WITH(rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_h100.yaml"),
                                        {{{"host_share", "1 GB"}}, ""}),
                    Catch::Contains("does not share its memory with the host"));
}

TEST_CASE("vocab_padding pads the vocabulary to a multiple of padding × t", "[plan]") {
  // Megatron-LM's --make-vocab-size-divisible-by 128 (its default) times the tensor-parallel
  // size: GPT-3's 50,257 over t = 8 → ⌈50,257 / 1,024⌉ · 1,024 = 51,200; over t = 1 → 50,304.
  rsim::Plan plan;
  plan.vocab_padding = 128;
  CHECK(rsim::padded_vocab(plan, 50257) == 50304);
  CHECK(rsim::padded_vocab(rsim::Plan{}, 50257) == 50257);
  const auto run = rsim::test::run_scenario(
      "gpt3_175b_train_h100",
      {{"plan",
        "{preset: megatron_3d, mesh: {model: 8 over nvlink, data: 8 over ib, stage: 16 "
        "over ib}, vocab_padding: 128}"}});
  CHECK(run.scenario.model.stages.front().component.vocab_size == 51200);
  CHECK(run.scenario.model.stages.front().component.unpadded_vocab_size == 50257);
  // The LM head now splits over the 8 devices of 'model': 51,200 / 8 = 6,400 rows each.
  bool found = false;
  for (const auto vertex : run.graph.topological_order()) {
    const auto& op = run.graph.op(vertex);
    if (op.kind == rsim::OpKind::matmul && op.block == rsim::Block::head &&
        op.pass == rsim::Pass::forward) {
      for (const auto& tensor : op.inputs) {
        if (tensor.role == rsim::TensorRole::weight) {
          CHECK(tensor.has_axis("vocab"));
          for (const auto& axis : tensor.axes) {
            if (axis.name == "vocab") {
              CHECK(axis.size == 6400);
              found = true;
            }
          }
        }
      }
    }
  }
  CHECK(found);
  // A padding of 0 is not a padding.
  CHECK_THROWS_WITH(rsim::test::run_scenario("gpt3_175b_train_h100", {{"plan.vocab_padding", "0"}}),
                    Catch::Contains("vocab_padding"));
}
