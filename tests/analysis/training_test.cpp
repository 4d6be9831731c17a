// SPDX-License-Identifier: MIT
// A training step: forward, recompute, backward and optimizer passes; memory; pipeline; thresholds.
#include "sim/analysis/training.hpp"

#include "analysis/llama3_8b_training.hpp"
#include "run_fixture.hpp"
#include "sim/base/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace {

using namespace rsim::test::llama3_8b;
using rsim::Op;
using rsim::OpKind;
using rsim::Pass;

struct Sums {
  double matmul_flops[4] = {0, 0, 0, 0};  // by pass
  double attention_flops[4] = {0, 0, 0, 0};
};

Sums sums(const rsim::RunResult& run) {
  Sums result;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    const double flops =
        run.table.costs[row].flops.si() * run.table.counts(static_cast<Eigen::Index>(row));
    const auto pass = static_cast<std::size_t>(op.pass);
    if (op.kind == OpKind::matmul) {
      result.matmul_flops[pass] += flops;
    } else if (op.kind == OpKind::attention) {
      result.attention_flops[pass] += flops;
    }
  }
  return result;
}

}  // namespace

TEST_CASE("training matmul FLOPs are 6 · params · tokens, 8 · with full recomputation",
          "[training]") {
  // 2 sequences × 1024 tokens, one device: tokens T = 2048.
  const double tokens = 2048;
  const std::vector<std::pair<std::string, std::string>> base{
      {"plan", "single"},
      {"workload.global_batch_tokens", "2048"},
      {"workload.seq_len", "1024"},
      {"workload.microbatches", "2"}};
  const Sums none = sums(train_8b(base));
  // Forward 2·P·T (transformers.md); backward dX and dW each 2·P·T: 6·P·T in all over the
  // matmul parameters P = L · 218,103,808 + 525,336,576 = 7,504,658,432.
  const double params = kL * kLayerMatmulParams + kHeadParams;
  const std::size_t forward = static_cast<std::size_t>(Pass::forward);
  const std::size_t backward = static_cast<std::size_t>(Pass::backward);
  const std::size_t recompute = static_cast<std::size_t>(Pass::recompute);
  CHECK(none.matmul_flops[forward] == Approx(2.0 * params * tokens).epsilon(1e-12));
  CHECK(none.matmul_flops[backward] == Approx(4.0 * params * tokens).epsilon(1e-12));
  CHECK(none.matmul_flops[recompute] == 0.0);
  // FMHA forward: 4 · B · N · H · S(S+1)/2 visible causal pairs per layer; its backward 2.5 ×
  // that (FlashAttention-2: 5 matmuls against 2).
  const double attention = kL * 4.0 * 2 * kN * kH * 1024.0 * 1025.0 / 2.0;
  CHECK(none.attention_flops[forward] == Approx(attention).epsilon(1e-12));
  CHECK(none.attention_flops[backward] == Approx(2.5 * attention).epsilon(1e-12));

  auto with_full = base;
  with_full.emplace_back("workload.recompute", "full");
  const Sums full = sums(train_8b(with_full));
  // Full recomputation re-runs every layer's forward (not the head): + 2 · P_layers · T, so
  // 8 · P_layers · T + 6 · P_head · T.
  const double total =
      full.matmul_flops[forward] + full.matmul_flops[recompute] + full.matmul_flops[backward];
  CHECK(total ==
        Approx((8.0 * kL * kLayerMatmulParams + 6.0 * kHeadParams) * tokens).epsilon(1e-12));
  CHECK(full.attention_flops[recompute] == Approx(attention).epsilon(1e-12));

  auto with_selective = base;
  with_selective.emplace_back("workload.recompute", "selective");
  const Sums selective = sums(train_8b(with_selective));
  // Selective re-runs attention only.
  CHECK(selective.matmul_flops[recompute] == 0.0);
  CHECK(selective.attention_flops[recompute] == Approx(attention).epsilon(1e-12));
}

TEST_CASE("training memory: 16 bytes per parameter with Adam, saved activations by recompute",
          "[training][memory]") {
  const auto base = one_device_1024_tokens();
  const rsim::RunResult run = train_8b(base);
  // Llama 3 8B: 8,030,261,248 parameters (HF config); bf16 weights 2 B, bf16 gradients 2 B,
  // Adam's fp32 master copy and two moments 12 B: 16 B per parameter (ZeRO, Rajbhandari et al.
  // 2020 §3.1: 2Ψ + 2Ψ + KΨ with K = 12).
  const double params = 8'030'261'248.0;
  CHECK(run.footprint.weights.si() == Approx(2.0 * params));
  CHECK(run.footprint.gradients.si() == Approx(2.0 * params));
  CHECK(run.footprint.optimizer_state.si() == Approx(12.0 * params));
  // Saved activations, bf16, per token: each layer keeps the outputs of its unfused forward
  // ops: attn_norm D, q_proj N·H = D, kv_proj 2·K·H = 2048, attention D, o_proj D, mlp_norm D,
  // gate_up 2F, down_proj D (rope, the activation and the residuals are fused: nothing of their
  // own) = 6·4096 + 2048 + 28672 = 55,296 elements = 110,592 B; the embedding and the head keep
  // embed_tokens D and final_norm D: (4096 + 4096) · 2 = 16,384 B, and the loss its fp32 softmax
  // over the vocabulary for the backward pass: 128,256 · 4 = 513,024 B. The bf16 logits are not
  // kept: no backward op reads them.
  const double per_layer = (6 * kD + 2 * kK * kH + 2 * kF) * 2;
  const double head = (kD + kD) * 2 + kV * 4;
  CHECK(run.footprint.activations.si() == Approx((kL * per_layer + head) * 1024));
  // Full recomputation keeps each layer's input x (D · 2 B), plus one layer's outputs while
  // that layer is recomputed.
  auto full = base;
  full.emplace_back("workload.recompute", "full");
  const rsim::RunResult recomputed = train_8b(full);
  CHECK(recomputed.footprint.activations.si() == Approx((kL * kD * 2 + per_layer + head) * 1024));
  // Weights + gradients + optimizer alone (128.5 GB) exceed one 80 GB H100.
  CHECK_FALSE(run.footprint.fits());
}

TEST_CASE("pipeline bubble (p − 1)/(m + p − 1) is added to the bounds", "[training][pipeline]") {
  const rsim::RunResult run = train_8b({{"workload.microbatches", "8"}});
  CHECK_FALSE(run.pipeline.has_value());
  // The pp2_tp4 variant: 2 stages × TP 4, 8 microbatches of 8 sequences.
  rsim::Scenario scenario = rsim::load_scenario(
      rsim::test::source_path("scenarios/llama3_8b_train_h100.yaml"), {{}, "pp2_tp4"});
  rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  const rsim::RunResult piped = rsim::analyze(std::move(scenario), std::move(roofs));
  REQUIRE(piped.pipeline.has_value());
  const rsim::PipelineSchedule& schedule = *piped.pipeline;
  // p = 2 stages, m = 8 microbatches: (2 − 1)/(8 + 2 − 1) = 1/9 of the step.
  CHECK(schedule.bubble_fraction == Approx(1.0 / 9.0));
  // Each device idles (p − 1)/m = 1/8 of its forward and backward work.
  CHECK(schedule.bubble_lower.si() == Approx(schedule.work_lower.si() / 8.0));
  // Each device holds 16 of the 32 layers: half the layer ops' instances.
  int sends = 0;
  for (std::size_t row = 0; row < piped.table.order.size(); ++row) {
    const Op& op = piped.graph.op(piped.table.order[row]);
    if (op.name == "down_proj" && op.pass == Pass::forward) {
      CHECK(op.count == 8 * 32 / 2);
    }
    if (op.name == "pipeline.send_activations") {
      // One microbatch's layer output crosses each boundary: 8 sequences × 4096 tokens × D
      // 4096 × 2 B = 268,435,456 B, once per microbatch. Without sequence parallelism it is
      // whole on each of the 4 tensor-axis devices, so each sends a quarter (Megatron's
      // scatter/gather, Narayanan et al. 2021 §4.1): 67,108,864 B ...
      CHECK(op.collective.bytes.si() == Approx(8.0 * 4096 * 4096 * 2 / 4));
      CHECK(op.count == 8);
      ++sends;
    }
    if (op.name == "pipeline.send_activations.gather") {
      // ... and the next stage all-gathers the whole 268,435,456 B over the tensor axis.
      CHECK(op.collective.kind == rsim::CollectiveKind::all_gather);
      CHECK(op.collective.bytes.si() == Approx(8.0 * 4096 * 4096 * 2));
      CHECK(op.collective.axes == std::vector<std::int64_t>{4});
      CHECK(op.count == 8);
      ++sends;
    }
  }
  CHECK(sends == 2);
}

TEST_CASE("training thresholds against the scaling book's closed forms", "[training][thresholds]") {
  // Data parallel over 2 H100s on NVLink (switch, 450 GB/s egress; all-reduce 2(X−1)/X · V/W):
  // per layer the backward pass all-reduces the gradients of its matmul weights, 2 B per
  // parameter, once per step, and computes dX and dW (4 · P_layer FLOPs per token) plus FMHA's
  // backward (2.5 × 4 · b · N · H · S(S+1)/2). T_net does not grow with the tokens T per
  // shard, so the critical T* = T · T_net / T_math (scaling book: B/X > C/W, here with the
  // (X − 1)/X of a switch all-reduce and attention's extra math).
  const rsim::RunResult run = train_8b({{"plan.mesh.model", "1 over nvlink"},
                                        {"workload.global_batch_tokens", "16384"},
                                        {"workload.seq_len", "4096"},
                                        {"workload.microbatches", "2"}});
  REQUIRE(run.training_thresholds.size() == 1);
  const rsim::AxisThreshold& data = run.training_thresholds.front();
  CHECK(data.data);
  CHECK(data.pass == Pass::backward);
  const double peak = 989.4e12;             // H100 SXM bf16 dense (hardware/h100_sxm.yaml)
  const double bandwidth = 450e9;           // NVLink 4 per GPU, one direction
  const double shard_tokens = 16384.0 / 2;  // 2 sequences of 4096 per shard
  CHECK(data.tokens_per_shard == shard_tokens);
  const double t_net = kL * 2.0 * (2 - 1) / 2.0 * (2.0 * kLayerMatmulParams) / bandwidth;
  // 2 microbatches of 1 sequence (b = 1) per shard: attention pairs per sequence S(S+1)/2.
  const double attention_backward = 2.5 * 4.0 * 1 * kN * kH * 4096.0 * 4097.0 / 2.0 * 2;
  const double t_math = kL * (4.0 * kLayerMatmulParams * shard_tokens + attention_backward) / peak;
  CHECK(data.t_net.si() == Approx(t_net).epsilon(1e-9));
  CHECK(data.t_math.si() == Approx(t_math).epsilon(1e-9));
  CHECK(data.critical_tokens_per_shard == Approx(shard_tokens * t_net / t_math).epsilon(1e-9));
  // Without attention's share this is the book's (X − 1)/X · C/W = 0.5 · 989.4e12 / 450e9
  // = 1099 tokens; attention's extra backward math lowers it by its share of T_math.
  CHECK(data.critical_tokens_per_shard < 0.5 * peak / bandwidth);
  CHECK(data.critical_tokens_per_shard > 0.5 * peak / bandwidth * 0.9);

  // Megatron TP over 4 GPUs (the scenario's model axis): the forward pass all-reduces o_proj's
  // and down_proj's outputs [b, S, D] (V = T · D · 2 B) per layer; its math splits Y ways. With
  // the whole forward math T₁ on one device, T_math(Y) = T₁/Y ≥ T_net(Y) = 2 · L · 2(Y−1)/Y · V/W
  // ⟺ Y ≤ 1 + T₁ · W / (4 · L · V) (the book's Y < F · W / C, from the cost model).
  const rsim::RunResult tp = train_8b({{"workload.microbatches", "8"}});
  const rsim::AxisThreshold* tensor = nullptr;
  for (const rsim::AxisThreshold& threshold : tp.training_thresholds) {
    tensor = threshold.data ? tensor : &threshold;
  }
  REQUIRE(tensor != nullptr);
  CHECK(tensor->pass == Pass::forward);
  // 64 sequences, data 2, 8 microbatches: 4 sequences per microbatch per device, 32 per shard.
  const double tokens = 32.0 * 4096;
  const double forward_math =
      kL * (2.0 * kLayerMatmulParams * tokens + 4.0 * 32 * kN * kH * 4096.0 * 4097.0 / 2.0);
  const double t_one = forward_math / peak;
  const double volume = tokens * kD * 2;
  const double largest = std::floor(1.0 + t_one * bandwidth / (4.0 * kL * volume));
  CHECK(tensor->t_math.si() == Approx(t_one / 4.0).epsilon(1e-9));
  CHECK(static_cast<double>(tensor->largest_degree) == largest);
  // The book's F · W / C = 14336 · 450e9 / 989.4e12 = 6.5 for a plain MLP; here 1 + ...: 7.
  CHECK(tensor->largest_degree == 7);
}

TEST_CASE("training input errors name the key", "[training]") {
  const auto load = [](std::vector<std::pair<std::string, std::string>> sets) {
    return rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_train_h100.yaml"),
                               {std::move(sets), ""});
  };
  CHECK_THROWS_WITH(load({{"workload.microbatches", "3"}}),
                    Catch::Contains("64 sequences do not split into 3 equal microbatches"));
  CHECK_THROWS_WITH(load({{"workload.batch", "64"}}),
                    Catch::Contains("give exactly one of 'batch'"));
  CHECK_THROWS_WITH(load({{"workload.global_batch_tokens", "5000"}}),
                    Catch::Contains("not a whole number of 4096-token sequences"));
  CHECK_THROWS_WITH(load({{"workload.recompute", "some"}}),
                    Catch::Contains("none, selective, full"));
  CHECK_THROWS_WITH(load({{"workload.context", "10"}}), Catch::Contains("not a training key"));
  CHECK_THROWS_WITH(load({{"model", "pi05"}}), Catch::Contains("single-stage"));
  CHECK_THROWS_WITH(load({{"workload.phase", "prefill"}, {"workload.microbatches", "2"}}),
                    Catch::Contains("'global_batch_tokens' is for phase: train"));
  // Layers of two kinds (Gemma 2 9B: 21 sliding-window layers of 42, one microbatch) that do not
  // split over 4 stages: where the split puts each kind is unknown.
  rsim::Scenario scenario = load({{"model", "gemma2_9b"},
                                  {"workload.microbatches", "1"},
                                  {"plan.preset", "megatron_3d"},
                                  {"plan.mesh.data", "1 over nvlink"},
                                  {"plan.mesh.stage", "4 over nvlink"},
                                  {"plan.mesh.model", "2 over nvlink"}});
  rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  CHECK_THROWS_WITH(rsim::analyze(std::move(scenario), std::move(roofs)),
                    Catch::Contains("42 layers of stage 'decoder' do not split over mesh axis "
                                    "'stage' (4 stages), and its layers are not all alike"));
}

TEST_CASE("a pipeline whose stages do not divide the layers costs the busiest", "[training]") {
  // Llama 3 8B's 32 layers over 3 stages (TP 2): Megatron's uneven split puts ⌈32/3⌉ = 11 on the
  // busiest stage (10 + 11 + 11), which sets the pace: every layer op runs 11 times per
  // microbatch there (8 microbatches: 88), and the device stores 11/32 of the layers' weights.
  // 32 over 4 stages is the even split: 8 per stage, 64 runs.
  const auto train = [](const std::string& stages) {
    return train_8b({{"plan.preset", "megatron_3d"},
                     {"plan.mesh.data", "1 over nvlink"},
                     {"plan.mesh.stage", stages + " over nvlink"},
                     {"plan.mesh.model", "2 over nvlink"}});
  };
  const rsim::RunResult uneven = train("3");
  const rsim::RunResult even = train("4");
  const auto runs_of = [](const rsim::RunResult& run, const std::string& name) {
    for (const auto vertex : run.table.order) {
      if (run.graph.op(vertex).name == name) {
        return run.graph.op(vertex).count;
      }
    }
    return std::int64_t{-1};
  };
  CHECK(runs_of(uneven, "gate_up_proj") == 11 * 8);
  CHECK(runs_of(even, "gate_up_proj") == 8 * 8);
  REQUIRE(uneven.notes.size() == even.notes.size() + 1);
  CHECK_THAT(uneven.notes.back(),
             Catch::Contains("32 layers do not split evenly over 3 pipeline stages; the busiest "
                             "holds 11"));
  // Weights per device over TP 2: 11 or 8 layers of 218,103,808 / 2 = 109,051,904 parameters
  // and the LM head's 525,336,576 / 2 = 262,668,288 (on every stage of rsim's device graph):
  // (11 · 109,051,904 + 262,668,288) / (8 · 109,051,904 + 262,668,288) = 1.28822 (the norms'
  // 8,192 per layer are 10⁻⁵ of it).
  const double layer = kLayerMatmulParams / 2.0;
  const double head = kHeadParams / 2.0;
  CHECK(uneven.footprint.weights.si() / even.footprint.weights.si() ==
        Approx((11.0 * layer + head) / (8.0 * layer + head)).epsilon(1e-4));
}

TEST_CASE("FSDP + TP: the forward gathers, the best split and the smallest compute-bound batch",
          "[training][thresholds]") {
  // The node's 8 GPUs as FSDP 2 × TP 4, 8 microbatches of 8 sequences × 4096 tokens.
  const rsim::RunResult run = train_8b({{"plan.preset", "fsdp_tp"}});
  REQUIRE(run.fsdp_tp.has_value());
  const rsim::FsdpTpSplit& split = *run.fsdp_tp;
  // Forward: per layer and microbatch each weight (its 1/4 TP shard, 2 B per parameter) is
  // all-gathered over the 2-way data axis: (X − 1)/X · V / W = 0.5 · 2 · 218,103,808 / 4 B
  // / 450e9 B/s = 121.2 µs; × 32 layers × 8 microbatches = 31.02 ms.
  double t_fsdp = 0.0;
  double t_tensor = 0.0;
  for (const rsim::AxisThreshold& threshold : run.training_thresholds) {
    CHECK(threshold.pass == Pass::forward);
    (threshold.data ? t_fsdp : t_tensor) = threshold.t_net.si();
  }
  CHECK(t_fsdp == Approx(0.5 * 2.0 * kLayerMatmulParams / 4.0 / 450e9 * 32 * 8).epsilon(1e-9));
  // Every split X·Y = 8 is costed; the best minimises max(T_FSDP, T_TP) and must beat the
  // plan's own 2 × 4 (whose T_FSDP is the one above and T_TP the tensor axis's); T_TP's
  // all-reduces of [b, S, D] (b = 4 sequences per device) dominate there, so a wider data axis
  // wins. Per split (256 layer-microbatches; T_FSDP = (X−1)/X · 2·P_layer/Y / W, T_TP = two
  // all-reduces 2(Y−1)/Y · (8/X sequences · 4096 · 4096 · 2 B) / W):
  //   1 × 8: 0 and 534 ms; 2 × 4: 31.0 and 229 ms; 4 × 2: 93.1 and 76.4 ms; 8 × 1: 217 and 0 ms
  // → 4 × 2.
  CHECK(split.data * split.tensor == 8);
  CHECK(t_tensor > t_fsdp);
  CHECK(std::max(split.t_fsdp.si(), split.t_tensor.si()) < t_tensor);
  CHECK(split.data == 4);
  // The smallest compute-bound batch per device: T_FSDP / T_math of the split that reaches it,
  // × this step's tokens per device (T_FSDP does not grow with the batch, T_math does); at the
  // plan's own split that is 32,768 · 31.02 ms / T_math.
  CHECK(split.tokens_per_device == Approx(262144.0 / 8));
  CHECK(split.min_tokens_per_device <= split.tokens_per_device * t_fsdp / split.t_math.si());
  CHECK(split.min_tokens_per_device > 0.0);
}

TEST_CASE("DCN threshold across slices: tokens per slice against C/W_dcn",
          "[training][thresholds]") {
  // Llama 2 7B (MHA: D 4096, N = K = 32, H 128, F 11008, L 32) on two v5e slices of 16 chips:
  // TP 16 over ICI inside a slice, data parallel 2 over DCN (fat tree, 3.125e9 B/s per chip).
  const rsim::RunResult run = train_8b({{"model", "llama2_7b"},
                                        {"hardware", "tpu_v5e"},
                                        {"plan.mesh.data", "2 over dcn"},
                                        {"plan.mesh.model", "16 over ici"}});
  const rsim::AxisThreshold* dcn = nullptr;
  for (const rsim::AxisThreshold& threshold : run.training_thresholds) {
    dcn = threshold.data ? &threshold : dcn;
  }
  REQUIRE(dcn != nullptr);
  CHECK(dcn->network == "dcn");
  // Per layer each chip all-reduces its 1/16 of the matmul gradients over the 2 slices:
  // q, o 4096·4096, kv 2·4096·4096, gate_up 2·4096·11008, down 11008·4096 = 202,375,168
  // parameters / 16 · 2 B = 25,296,896 B; 2(X−1)/X · V / W = V / 3.125e9 = 8.095 ms; × 32.
  const double layer_params = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008;
  CHECK(dcn->t_net.si() == Approx(32.0 * layer_params / 16.0 * 2.0 / 3.125e9).epsilon(1e-9));
  // Critical tokens per slice = tokens · T_net / T_math: below the book's C/W_dcn (with the
  // two-slice all-reduce's (X − 1)/X): 0.5 · 1.97e14 / 3.125e9 = 31,520, by attention's share.
  CHECK(dcn->critical_tokens_per_shard ==
        Approx(dcn->tokens_per_shard * dcn->t_net.si() / dcn->t_math.si()));
  CHECK(dcn->critical_tokens_per_shard < 0.5 * 1.97e14 / 3.125e9);
  CHECK(dcn->critical_tokens_per_shard > 0.85 * 0.5 * 1.97e14 / 3.125e9);
}

TEST_CASE("ZeRO-1/2 split the optimizer state and gradients over the data axis",
          "[training][memory][plan]") {
  // The node as TP 4 × DP 2. ZeRO-1: each replica keeps 1/2 of the Adam state; ZeRO-2 also
  // 1/2 of the gradients (Rajbhandari et al. 2020, §5.1–5.2: P_os, P_os+g).
  const rsim::RunResult plain = train_8b({});
  const rsim::RunResult zero1 = train_8b({{"plan.zero_stage", "1"}});
  const rsim::RunResult zero2 = train_8b({{"plan.zero_stage", "2"}});
  CHECK(zero1.footprint.optimizer_state.si() == Approx(plain.footprint.optimizer_state.si() / 2.0));
  CHECK(zero1.footprint.gradients.si() == Approx(plain.footprint.gradients.si()));
  CHECK(zero2.footprint.gradients.si() == Approx(plain.footprint.gradients.si() / 2.0));
  CHECK(zero1.footprint.weights.si() == Approx(plain.footprint.weights.si()));
  // Communication: each weight gradient's all-reduce over 'data' becomes a reduce-scatter of the
  // same V, and the update all-gathers the bf16 weights (V: a replica's whole weight, = the
  // bf16 gradient's bytes): RS + AG moves what the all-reduce did.
  const auto bytes_of = [](const rsim::RunResult& run, const std::string& name) {
    for (std::size_t row = 0; row < run.table.order.size(); ++row) {
      const Op& op = run.graph.op(run.table.order[row]);
      if (op.name == name) {
        return std::make_pair(op.collective.kind, op.collective.bytes.si());
      }
    }
    return std::make_pair(rsim::CollectiveKind::send_recv, 0.0);
  };
  const auto [plain_kind, plain_bytes] = bytes_of(plain, "down_proj.wgrad.all_reduce");
  const auto [zero_kind, zero_bytes] = bytes_of(zero1, "down_proj.wgrad.reduce_scatter");
  const auto [gather_kind, gather_bytes] = bytes_of(zero1, "down_proj.adam.all_gather_params");
  CHECK(plain_kind == rsim::CollectiveKind::all_reduce);
  CHECK(zero_kind == rsim::CollectiveKind::reduce_scatter);
  CHECK(gather_kind == rsim::CollectiveKind::all_gather);
  // down_proj's gradient per replica: F · D / 4 (TP) · 2 B = 14336 · 4096 / 4 · 2 = 29,360,128 B.
  CHECK(plain_bytes == Approx(kF * kD / 4 * 2));
  CHECK(zero_bytes == Approx(plain_bytes));
  CHECK(gather_bytes == Approx(plain_bytes));

  const auto load = [](std::vector<std::pair<std::string, std::string>> sets) {
    return rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_train_h100.yaml"),
                               {std::move(sets), ""});
  };
  CHECK_THROWS_WITH(load({{"plan.zero_stage", "3"}}), Catch::Contains("weight_rules"));
  CHECK_THROWS_WITH(load({{"plan.zero_stage", "1"}, {"plan.preset", "megatron_tp"}}),
                    Catch::Contains("needs a 'batch' rule"));
}

TEST_CASE("FMHA backward bytes do not grow with the query heads per KV head",
          "[training][attention]") {
  // Issue 21 #2: one causal layer, batch 1, sequence 8192, 16 query heads of 128 on an H100.
  // At 1, 4 and 16 query heads per KV head the FLOPs are the same, and fewer KV heads mean fewer
  // K/V bytes: the backward's lower bound may not grow with G (it was 0.70 / 1.00 / 3.34 ms when
  // O and dO were counted as K/V re-reads per query tile).
  // FLOPs: forward causal 4·s²·N·H / 2 = 4 · 8192² · 16 · 128 / 2 = 2.749e11; backward × 2.5
  // = 6.872e11 → 0.6946 ms at 989.4 TFLOP/s, compute-bound for every G.
  const auto dir = std::filesystem::temp_directory_path() / "rsim_gqa_backward";
  std::filesystem::create_directories(dir);
  double first = 0.0;
  for (const int group : {1, 4, 16}) {
    const auto model = dir / (group == 1 ? "m1.yaml" : group == 4 ? "m4.yaml" : "m16.yaml");
    {
      std::ofstream file(model);
      file << "name: gqa\nsource: test\narchitecture: decoder\nhidden_size: 2048\n"
              "num_hidden_layers: 1\nnum_attention_heads: 16\nnum_key_value_heads: "
           << 16 / group
           << "\nhead_dim: 128\nintermediate_size: 8192\nhidden_act: silu\ngated_mlp: true\n"
              "norm: rmsnorm\nvocab_size: 32000\ntie_word_embeddings: false\n"
              "attention_bias: false\nmlp_bias: false\nposition_embedding: rope\n";
    }
    const auto scenario = dir / "s.yaml";
    {
      std::ofstream file(scenario);
      file << "name: gqa\nhardware: " << rsim::test::source_path("hardware/h100_sxm.yaml").string()
           << "\nmodel: " << model.string()
           << "\nworkload: {phase: train, batch: 1, seq_len: 8192, optimizer: adam}\n"
              "precision: bf16\nfusion: {attention: fused, into_matmul: []}\n";
    }
    rsim::Scenario loaded = rsim::load_scenario(scenario);
    rsim::Roofs roofs = rsim::scenario_roofs(loaded, "");
    const rsim::RunResult run = rsim::analyze(std::move(loaded), std::move(roofs));
    double backward = 0.0;
    for (std::size_t row = 0; row < run.table.order.size(); ++row) {
      const Op& op = run.graph.op(run.table.order[row]);
      if (op.kind == OpKind::attention && op.pass == Pass::backward) {
        backward = run.table.costs[row].t_lower.si();
      }
    }
    INFO("query heads per KV head " << group);
    CHECK(backward == Approx(4.0 * 8192.0 * 8192.0 * 16 * 128 / 2 * 2.5 / 989.4e12).epsilon(1e-3));
    if (group == 1) {
      first = backward;
    }
    CHECK(backward <= first * (1 + 1e-9));
  }
}

TEST_CASE("a fused Adam moves 28 B per bf16 parameter", "[training]") {
  // With bf16 weights and an fp32 master copy, a fused Adam (Apex / Transformer Engine
  // FusedAdam, Megatron-LM's optimizer) reads the bf16 gradient (2 B) and the fp32 master copy,
  // m and v (12 B), and writes m, v and the master copy (12 B) and the bf16 weight (2 B): 28 B
  // per parameter. It never reads the bf16 weight (issue 21 #6: rsim counted 30 B).
  const rsim::RunResult run = train_8b({{"workload.microbatches", "8"}});
  int updates = 0;
  for (const auto vertex : run.graph.topological_order()) {
    const auto& op = run.graph.op(vertex);
    if (op.pass != Pass::optimizer || op.kind != rsim::OpKind::elementwise) {
      continue;
    }
    double bytes = 0.0;
    for (const auto& tensor : op.inputs) {
      bytes += tensor.bytes().si();
    }
    for (const auto& tensor : op.outputs) {
      bytes += tensor.bytes().si();
    }
    const auto& weight = op.outputs.front();
    REQUIRE(weight.dtype == rsim::DType::bf16);
    CHECK(bytes == Approx(28.0 * weight.bytes().si() / 2.0));
    ++updates;
  }
  CHECK(updates > 0);
}

TEST_CASE("full recomputation's working set is held once, not per microbatch in flight",
          "[training][pipeline]") {
  // The pp2_tp4 variant with full recomputation: 2 stages, 8 microbatches of 8 sequences, so
  // min(m, p) = 2 microbatches in flight on the first stage. Each keeps its 16 layers' inputs:
  // 8 × 4096 tokens × D 4096 × 2 B = 268,435,456 B per layer (whole on each tensor device
  // without sequence parallelism) × 16 × 2 = 8,589,934,592 B. The recomputed layer's outputs
  // exist once, while the backward runs that layer of one microbatch (issue 21 #4: they were
  // counted per microbatch in flight, as if both recomputed at once).
  rsim::Scenario scenario =
      rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_train_h100.yaml"),
                          {{{"workload.recompute", "full"}}, "pp2_tp4"});
  rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  const rsim::RunResult run = rsim::analyze(std::move(scenario), std::move(roofs));
  REQUIRE(run.training_memory);
  const auto& memory = *run.training_memory;
  CHECK(memory.in_flight == 2.0);
  CHECK(memory.layers == 16.0);
  CHECK(memory.layer_saved.si() == Approx(268'435'456.0));
  CHECK((memory.saved_activations - memory.recompute_working - memory.head).si() ==
        Approx(268'435'456.0 * 16 * 2));
  CHECK(memory.recompute_working.si() > 0.0);
}
