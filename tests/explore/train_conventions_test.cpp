// SPDX-License-Identifier: MIT
// What a training step's graph and schedule do as the frameworks do: Megatron-LM's tensor
// reductions, FSDP's gathers under recomputation and prefetch, and tensor overlap held to the
// NVLink domain (issue 21).
#include "run_fixture.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;

// Llama 2 7B (tests/data/train/llama2_7b_train.yaml), 512 sequences in one microbatch with no
// recomputation, under `plan`: with the weight prefetch off, then on.
std::pair<rsim::RunResult, rsim::RunResult> without_and_with_prefetch(const Sets& plan) {
  const auto run = [&](bool prefetch) {
    Sets sets = plan;
    sets.insert(sets.end(), {{"workload.batch", "512"},
                             {"workload.microbatches", "1"},
                             {"workload.recompute", "none"},
                             {"workload.overlap_weights", prefetch ? "true" : "false"}});
    return rsim::test::run_train("llama2_7b_train.yaml", std::move(sets));
  };
  return {run(false), run(true)};
}

// Σ count × (lower bound, or expected time) of the weight gathers `keep` selects.
template <typename Keep>
double weight_gathers(const rsim::RunResult& run, const Keep& keep, bool expected = false) {
  double total = 0.0;
  for (Eigen::Index row = 0; row < run.table.times.rows(); ++row) {
    const auto& op = run.graph.op(run.table.order[static_cast<std::size_t>(row)]);
    if (op.role == rsim::CollectiveRole::weight_gather && keep(op)) {
      total += (expected ? run.table.expected(row) : run.table.times.row(row).maxCoeff()) *
               run.table.counts(row);
    }
  }
  return total;
}

}  // namespace

TEST_CASE("tensor overlap hides collectives inside the NVLink domain only", "[search][train]") {
  // The plan above run as a scenario with workload.overlap_tensor: over NVLink the collective
  // matmuls hide the 323 tensor collectives, 323 × 2.330169 µs = 0.752645 ms (derived above).
  // Transformer Engine's Userbuffers work on peer memory over NVLink only (TransformerEngine
  // issue 1071), so the same axis over InfiniBand, or across nodes, keeps every one exposed.
  const auto overlapped = [](const std::string& tensor_network) {
    return rsim::test::run_train("llama2_7b_train.yaml",
                                 {{"plan.preset", "megatron_3d_sp"},
                                  {"plan.mesh.model", "2 over " + tensor_network},
                                  {"plan.mesh.data", "4 over nvlink"},
                                  {"workload.microbatches", "1"},
                                  {"workload.recompute", "none"},
                                  {"workload.overlap_tensor", "true"}});
  };
  const auto nvlink = overlapped("nvlink");
  REQUIRE(nvlink.step);
  CHECK(nvlink.step->tensor_hidden == Approx(0.752645e-3).epsilon(1e-6));
  for (const std::string network : {"ib", "nvlink+ib"}) {
    CAPTURE(network);
    const auto outside = overlapped(network);
    REQUIRE(outside.step);
    CHECK(outside.step->tensor_hidden == 0.0);
    CHECK(outside.step->step_expected > nvlink.step->step_expected);
  }
}

TEST_CASE("prefetched weight gathers hide under the previous layer's compute", "[search][train]") {
  // Llama 2 7B under FSDP over 8 GPUs on NVLink, 512 sequences × 128 tokens: each device runs
  // 64 × 128 = 8,192 tokens, a forward pass of ≈ 2 · 6.7e9 · 8,192 = 110 TFLOP (≈ 111 ms at
  // 989.4 TFLOP/s), far above its weight gathers: a layer's 202,383,360 parameters × 2 B × 7/8
  // / 450e9 B/s = 787.0 µs, 25.2 ms over 32 layers. So each pass exposes only its first
  // layer's share, G/ℓ, and the prefetch hides (1 − 1/32) of every pass's gathers.
  const auto [after, prefetched] =
      without_and_with_prefetch({{"plan.preset", "fsdp"}, {"plan.mesh.data", "8 over nvlink"}});
  REQUIRE(after.step);
  REQUIRE(prefetched.step);
  const double layer_gathers = weight_gathers(prefetched, [](const rsim::Op& op) {
    return op.block == rsim::Block::layer && op.pass == rsim::Pass::forward;
  });
  const double gathers = weight_gathers(prefetched, [](const rsim::Op&) { return true; });
  CHECK(layer_gathers == Approx(32 * 202'383'360.0 * 2.0 * 7.0 / 8.0 / 450e9).epsilon(1e-4));
  CHECK(after.step->weights_hidden == 0.0);
  CHECK(prefetched.step->weights_hidden == Approx(gathers * (1.0 - 1.0 / 32.0)));
  CHECK(prefetched.step->step_expected < after.step->step_expected);
  // The bound already hides every collective under the device work: unchanged.
  CHECK(prefetched.bounds.total.t_lower.si() == after.bounds.total.t_lower.si());
}

TEST_CASE("ZeRO-1's updated-weight gathers are prefetched under the next forward pass", "[train]") {
  // Megatron's distributed optimizer with --overlap-param-gather: the all-gathers of the
  // updated weights run layer by layer under the next step's forward pass, which (64 × 128
  // tokens, ≈ 111 ms of compute; the FSDP case above) covers all but the first layer's share:
  // hidden = G·(1 − 1/32), each second of it saving (1 − 0.15) (NVLink's processor_usage).
  const auto [after, prefetched] =
      without_and_with_prefetch({{"plan.preset", "data_parallel"},
                                 {"plan.mesh", "{data: 8 over nvlink}"},
                                 {"plan.zero_stage", "1"}});
  REQUIRE(after.step);
  REQUIRE(prefetched.step);
  const auto updated = [](const rsim::Op& op) { return op.pass == rsim::Pass::optimizer; };
  const double gathers = weight_gathers(prefetched, updated);
  const double gathers_expected = weight_gathers(prefetched, updated, true);
  REQUIRE(gathers > 0.0);
  CHECK(after.step->weights_hidden == 0.0);
  CHECK(prefetched.step->weights_hidden == Approx(gathers * (1.0 - 1.0 / 32.0)));
  CHECK(after.step->step_expected - prefetched.step->step_expected ==
        Approx(gathers_expected * (1.0 - 1.0 / 32.0) * (1.0 - 0.15)));
}

TEST_CASE("ZeRO pads an optimizer state the data axis does not divide", "[train][plan]") {
  // Megatron's distributed optimizer shards a flat buffer padded to a multiple of d
  // (megatron/core/distributed/param_and_grad_buffer.py): D = 4096 does not divide over 3
  // replicas, yet each keeps a third of the state (the padding, < d elements per buffer, is
  // not counted); the update op of each replica covers ⌈4096 / 3⌉ = 1366 of the 4096 rows.
  const auto over3 = [](int zero_stage) {
    return rsim::test::run_train("llama2_7b_train.yaml",
                                 {{"plan.preset", "data_parallel"},
                                  {"plan.mesh", "{data: 3 over ib}"},
                                  {"plan.zero_stage", std::to_string(zero_stage)},
                                  {"workload.batch", "6"}});
  };
  const auto plain = over3(0);
  const auto zero1 = over3(1);
  CHECK(zero1.footprint.optimizer_state.si() == Approx(plain.footprint.optimizer_state.si() / 3.0));
  std::map<std::string, double> whole_inputs;
  for (const auto vertex : plain.table.order) {
    const auto& op = plain.graph.op(vertex);
    if (op.pass == rsim::Pass::optimizer && !op.inputs.empty()) {
      whole_inputs[op.qualified_name()] = op.inputs.front().bytes().si();
    }
  }
  int updates = 0;
  for (const auto vertex : zero1.table.order) {
    const auto& op = zero1.graph.op(vertex);
    if (op.pass == rsim::Pass::optimizer && op.kind != rsim::OpKind::collective &&
        op.block == rsim::Block::layer && whole_inputs.count(op.qualified_name()) == 1) {
      INFO(op.qualified_name());
      CHECK(op.inputs.front().bytes().si() ==
            Approx(whole_inputs[op.qualified_name()] * 1366.0 / 4096.0));
      ++updates;
    }
  }
  CHECK(updates >= 5);
  bool noted = false;
  for (const std::string& note : zero1.notes) {
    noted = noted || note.find("the optimizer state is padded") != std::string::npos;
  }
  CHECK(noted);
}

TEST_CASE("tensor parallelism all-reduces twice per layer and pass as Megatron-LM does",
          "[train]") {
  // Megatron-LM's tensor parallelism without sequence parallelism (Shoeybi et al. 2019, Fig. 3):
  // per layer, forward all-reduces after the attention's and the MLP's row-parallel matmuls (the
  // g operators) and backward before their column-parallel inputs (the f operators): QKV is one
  // GEMM there, so q's and kv's input-gradient partial sums are reduced once (issue 21 #6).
  const auto run =
      rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "megatron_3d"},
                                                     {"plan.mesh.model", "2 over nvlink"},
                                                     {"plan.mesh.data", "4 over nvlink"},
                                                     {"workload.microbatches", "1"},
                                                     {"workload.recompute", "none"}});
  std::map<rsim::Pass, std::int64_t> reductions;
  for (const auto vertex : run.graph.topological_order()) {
    const auto& op = run.graph.op(vertex);
    if (op.role == rsim::CollectiveRole::tensor && op.block == rsim::Block::layer &&
        op.collective.kind == rsim::CollectiveKind::all_reduce) {
      reductions[op.pass] += op.count;
    }
  }
  CHECK(reductions[rsim::Pass::forward] == 2 * 32);
  CHECK(reductions[rsim::Pass::backward] == 2 * 32);
}

TEST_CASE("FSDP gathers a recomputed layer's weights twice per step, not three times", "[train]") {
  // PyTorch FSDP gathers a layer's weights in its forward and again in its backward pre-hook;
  // activation checkpointing re-runs the layer's forward inside that backward, on the weights
  // just gathered (issue 21 #3c). So full recomputation adds no weight gather: the layers'
  // gathers per step are the same with and without it.
  const auto gathers = [](const std::string& recompute) {
    const auto run =
        rsim::test::run_train("llama2_7b_train.yaml", {{"plan.preset", "fsdp"},
                                                       {"plan.mesh.data", "8 over nvlink"},
                                                       {"workload.microbatches", "1"},
                                                       {"workload.recompute", recompute}});
    std::map<rsim::Pass, std::int64_t> count;
    for (const auto vertex : run.graph.topological_order()) {
      const auto& op = run.graph.op(vertex);
      if (op.role == rsim::CollectiveRole::weight_gather && op.block == rsim::Block::layer) {
        count[op.pass] += op.count;
      }
    }
    return count;
  };
  const auto none = gathers("none");
  const auto full = gathers("full");
  // The 5 matmul weights of a Llama layer (q, kv, o, gate_up, down) each gathered once forward
  // and once backward, × 32 layers: 160 + 160.
  CHECK(none.at(rsim::Pass::forward) == 5 * 32);
  CHECK(none.at(rsim::Pass::backward) == 5 * 32);
  CHECK(full.at(rsim::Pass::forward) + full.at(rsim::Pass::recompute) +
            (full.contains(rsim::Pass::backward) ? full.at(rsim::Pass::backward) : 0) ==
        none.at(rsim::Pass::forward) + none.at(rsim::Pass::backward));
}
