// SPDX-License-Identifier: MIT
// The ops a training step adds beside each matmul's dgrad and wgrad: attention dropout, the loss,
// both operands' gradients of an unfused attention's GEMMs, FP8 operand casts, FP32 gradients.
#include "analysis/llama3_8b_training.hpp"
#include "run_fixture.hpp"
#include "sim/cost/op_cost.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>

namespace {

using namespace rsim::test::llama3_8b;
using rsim::Op;

}  // namespace

TEST_CASE("attention dropout writes the dropped probabilities and a mask", "[training]") {
  // Megatron GPT 1.7B on A100s (validation/scenarios/megatron_a100_gpt_1_7b.yaml): unfused
  // attention, attention dropout 0.1. Per device a microbatch of 16 sequences, 24 heads,
  // 2048 × 2048 scores: 16 · 24 · 2048² = 1,610,612,736 probabilities, read (2 B fp16) and
  // written with a 1-byte mask: 5 B each.
  const auto load = [](std::vector<std::pair<std::string, std::string>> sets) {
    rsim::Scenario scenario = rsim::load_scenario(
        rsim::test::source_path("validation/scenarios/megatron_a100_gpt_1_7b.yaml"),
        {std::move(sets), ""});
    rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
    return rsim::analyze(std::move(scenario), std::move(roofs));
  };
  const auto bytes_of = [](const rsim::RunResult& run, const std::string& name) {
    return op_bytes(run, name).second;
  };
  const double scores = 16.0 * 24.0 * 2048.0 * 2048.0;
  const auto unfused = load({});
  CHECK(bytes_of(unfused, "attention_dropout") == Approx(scores * 5.0));
  CHECK(bytes_of(unfused, "attention_dropout.recompute") == Approx(scores * 5.0));  // full
  // A fused attention draws the mask on chip: no op of its own.
  CHECK(bytes_of(load({{"fusion.attention", "fused"}}), "attention_dropout") < 0.0);
}

TEST_CASE("eager attention copies Q, K, V and O to the GEMMs' layout and back", "[training]") {
  // One 1,024-token sequence of Llama 3 8B in bf16. Eager PyTorch copies Q (1,024 · 32 heads ·
  // 128 = 4,194,304 elements) before Q·Kᵀ and K and V (1,024 · 8 KV heads · 128 = 1,048,576
  // each), expanded to the 32 query heads (repeat_kv: 4,194,304 each): reads (4,194,304 + 2 ·
  // 1,048,576) · 2 B = 12,582,912 B, writes (4,194,304 + 2 · 4,194,304) · 2 B = 25,165,824 B,
  // 37,748,736 B in all; O (4,194,304 elements) back after P·V: 16,777,216 B. Each copy's
  // backward copies the gradients back (the expanded ones summed): the same bytes. Megatron's
  // unfused attention copies nothing.
  auto sets = one_device_1024_tokens();
  sets.emplace_back("fusion.attention", "eager");
  const rsim::RunResult eager = train_8b(sets);
  const double q = 1024.0 * kN * kH;
  const double kv = 1024.0 * kK * kH;
  const double copies = (q + 2.0 * kv) * 2.0 + (q + 2.0 * kv * 4.0) * 2.0;
  CHECK(op_bytes(eager, "attention_layout") == std::pair{rsim::Pass::forward, copies});
  CHECK(op_bytes(eager, "attention_layout.backward") == std::pair{rsim::Pass::backward, copies});
  // Q·Kᵀ reads the expanded K: 4,194,304 · 2 B.
  for (const auto vertex : eager.table.order) {
    if (eager.graph.op(vertex).name == "attention_scores") {
      CHECK(eager.graph.op(vertex).inputs[1].bytes().si() == Approx(q * 2.0));
    }
  }
  CHECK(op_bytes(eager, "attention_output_layout") == std::pair{rsim::Pass::forward, q * 4.0});
  CHECK(op_bytes(eager, "attention_output_layout.backward") ==
        std::pair{rsim::Pass::backward, q * 4.0});
  sets.back().second = "unfused";
  const rsim::RunResult unfused = train_8b(sets);
  CHECK(op_bytes(unfused, "attention_layout").second < 0.0);
  CHECK(op_bytes(unfused, "attention_output_layout").second < 0.0);
  // Four ops more per layer, the same FLOPs.
  CHECK(eager.graph.size() == unfused.graph.size() + 4);
  CHECK(eager.bounds.total.flops.si() == Approx(unfused.bounds.total.flops.si()));
}

TEST_CASE("context parallelism splits attention's queries and gathers K and V", "[training]") {
  // One 1,024-token sequence of Llama 3 8B with its sequence split over 4 devices
  // (rules: seq → context). Causal attention load-balanced in 8 chunks: each device attends 256
  // queries after 384 keys on average, 256 · 384 + 256 · 257 / 2 = 131,200 pairs, a quarter of
  // the sequence's 1,024 · 1,025 / 2 = 524,800; at 2 · (128 + 128) FLOPs per pair and head,
  // 32 heads: 2,149,580,800 FLOPs per layer. Each pass first gathers K and V (1,024 tokens ·
  // 8 KV heads · 128 · 2 B each: 4,194,304 B); the backward pass reduce-scatters dK and dV
  // (2,097,152 B each).
  auto sets = one_device_1024_tokens();
  sets.front() = {"plan", "{mesh: {context: 4 over nvlink}, rules: {seq: context}}"};
  const rsim::RunResult run = train_8b(sets);
  const auto find = [&](const std::string& name) -> const Op* {
    for (const auto vertex : run.table.order) {
      if (run.graph.op(vertex).name == name) {
        return &run.graph.op(vertex);
      }
    }
    return nullptr;
  };
  const Op* attention = find("attention");
  REQUIRE(attention != nullptr);
  CHECK(attention->attention.query_tokens == 256);
  CHECK(attention->attention.cached_tokens == 384);
  CHECK(rsim::op_flops(*attention).si() == Approx(2.0 * 32 * 256 * 131200));
  for (const std::string name : {"attention.kv_all_gather", "attention.backward.kv_all_gather"}) {
    INFO(name);
    const Op* gather = find(name);
    REQUIRE(gather != nullptr);
    CHECK(gather->collective.bytes.si() == Approx(2.0 * 1024 * kK * kH * 2.0));
    CHECK(gather->role == rsim::CollectiveRole::sequence);
  }
  for (const std::string name :
       {"attention.backward.dk_reduce_scatter", "attention.backward.dv_reduce_scatter"}) {
    INFO(name);
    const Op* scatter = find(name);
    REQUIRE(scatter != nullptr);
    CHECK(scatter->collective.bytes.si() == Approx(1024 * kK * kH * 2.0));
  }
  // 1,028 tokens split 4 ways do not make 8 equal chunks.
  sets.emplace_back("workload.seq_len", "1028");
  sets.emplace_back("workload.global_batch_tokens", "1028");
  CHECK_THROWS_WITH(train_8b(sets), Catch::Contains("1028 tokens of decoder's attention do not "
                                                    "split into 8 chunks"));
}

TEST_CASE("training's loss reads the logits and keeps their softmax in fp32", "[training]") {
  // One device, one microbatch of 1,024 tokens: the logits are 1,024 × 128,256 bf16. The loss
  // reads them (2 B) and writes the fp32 softmax (4 B) the backward pass reads (4 B) to write
  // the logits' gradient (2 B): 6 B per logit each way.
  const auto base = one_device_1024_tokens();
  const rsim::RunResult run = train_8b(base);
  const double logits = 1024.0 * kV;
  const auto [forward_pass, forward_bytes] = op_bytes(run, "loss");
  const auto [backward_pass, backward_bytes] = op_bytes(run, "loss.backward");
  CHECK(forward_pass == rsim::Pass::forward);
  CHECK(backward_pass == rsim::Pass::backward);
  CHECK(forward_bytes == Approx(logits * 6.0));
  CHECK(backward_bytes == Approx(logits * 6.0));
  // At 3.35 TB/s (H100 SXM HBM3) the pair's lower bound is 2 · 6 · 131,334,144 B / 3.35e12 B/s
  // = 470.5 µs.
  double t_lower = 0.0;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const std::string& name = run.graph.op(run.table.order[row]).name;
    if (name == "loss" || name == "loss.backward") {
      t_lower += run.table.times.row(static_cast<Eigen::Index>(row)).maxCoeff();
    }
  }
  CHECK(t_lower == Approx(2.0 * 6.0 * logits / 3.35e12).epsilon(1e-3));
  // Fused into the LM head (Liger's fused linear cross-entropy) the logits never reach DRAM.
  auto fused = base;
  fused.emplace_back("fusion.into_matmul", "[loss]");
  const rsim::RunResult fused_run = train_8b(fused);
  for (std::size_t row = 0; row < fused_run.table.order.size(); ++row) {
    const rsim::Op& op = fused_run.graph.op(fused_run.table.order[row]);
    if (op.name == "loss" || op.name == "loss.backward") {
      CHECK(fused_run.table.costs[row].ideal_bytes.si() == 0.0);
    }
  }
  // Nor does the step keep them: unfused, the loss keeps its fp32 softmax (4 B per logit) and
  // the bf16 logits are freed; fused (beside the scenario's own fusions), neither is kept.
  // Per token, bf16: each layer's unfused outputs (training_test.cpp, "training memory")
  // (6·D + 2·K·H + 2·F) · 2 B, and at the head embed_tokens and final_norm 2·D · 2 B.
  auto fused_too = base;
  fused_too.emplace_back("fusion.into_matmul", "[activation, residual, rope, loss]");
  const double per_layer = (6 * kD + 2 * kK * kH + 2 * kF) * 2;
  const double without_loss = (kL * per_layer + 2 * kD * 2) * 1024;
  CHECK(train_8b(fused_too).footprint.activations.si() == Approx(without_loss));
  CHECK(run.footprint.activations.si() == Approx(without_loss + logits * 4.0));
  // It reads the logits the head wrote, at their width whatever the policy.
  for (const std::string precision : {"fp8", "{policy: fp8, activations: bf16, outputs: fp32}"}) {
    auto with = base;
    with.emplace_back("precision", precision);
    const rsim::RunResult quantized = train_8b(with);
    const rsim::Op* head = nullptr;
    const rsim::Op* loss = nullptr;
    for (const auto vertex : quantized.table.order) {
      const rsim::Op& op = quantized.graph.op(vertex);
      head = op.name == "lm_head" ? &op : head;
      loss = op.name == "loss" ? &op : loss;
    }
    REQUIRE(head != nullptr);
    REQUIRE(loss != nullptr);
    CHECK(loss->inputs.front().dtype == head->outputs.front().dtype);
  }
  // Inference has no loss.
  CHECK(op_bytes(rsim::test::run_scenario("llama3_8b_h100", {}), "loss").second < 0.0);
}

TEST_CASE("each engine's loss kernels move their own bytes", "[training]") {
  // The same 1,024 × 128,256 bf16 logits, per logit (loss.hpp):
  //   torch (cross_entropy(logits.float())): cast 2 + 4, log_softmax's three reads of the fp32
  //     row and its write 3·4 + 4 → 22 B; backward: zero fill 4, log_softmax's backward (two
  //     reads of the gradient, one of the output, one write) 4·4, cast back 4 + 2 → 26 B.
  //     The H200's kernels (validation/measured/h200/kernels.csv, batch 1 × 4,096): the
  //     log_softmax forward moved 16 B per logit in 2.015 ms, 4.2 TB/s of the 4.8.
  //   megatron (cross_entropy.py on logits.float()): cast 2 + 4, max 4, sub_ 4 + 4, exp 4 + 4,
  //     sum 4, div_ 4 + 4 → 38 B; backward: mul_ 4 + 4, cast back 4 + 2 → 14 B.
  const double logits = 1024.0 * kV;
  const auto base = one_device_1024_tokens();
  const rsim::RunResult single = train_8b(base);
  for (const auto& [engine, forward, backward] :
       {std::tuple{"torch", 22.0, 26.0}, std::tuple{"megatron", 38.0, 14.0}}) {
    CAPTURE(engine);
    auto sets = base;
    sets.emplace_back("fusion.loss", engine);
    const rsim::RunResult run = train_8b(sets);
    CHECK(op_bytes(run, "loss").second == Approx(logits * forward));
    CHECK(op_bytes(run, "loss.backward").second == Approx(logits * backward));
    // The same FLOPs, and the memory table keeps only the fp32 tensor the backward reads.
    double flops = 0.0;
    double single_flops = 0.0;
    for (std::size_t row = 0; row < run.table.order.size(); ++row) {
      flops += run.table.costs[row].flops.si();
      single_flops += single.table.costs[row].flops.si();
    }
    CHECK(flops == Approx(single_flops).epsilon(1e-12));
    CHECK(run.footprint.activations.si() == single.footprint.activations.si());
  }
  // An engine that is not one is named with the choices.
  auto wrong = base;
  wrong.emplace_back("fusion.loss", "apex");
  CHECK_THROWS_WITH(train_8b(wrong), Catch::Contains("single_pass") && Catch::Contains("megatron"));
}

TEST_CASE("an unfused attention's backward computes both operands' gradients", "[training]") {
  // Llama 3 8B, one 1,024-token sequence on one device, attention unfused: Q·Kᵀ is 32 heads ×
  // 1,024² scores × 128 deep, 2 · 32 · 1024² · 128 = 8,589,934,592 FLOPs per layer, and so is
  // P·V. Their backward passes are two GEMMs each of the same size: dQ = dS·K and dK = dSᵀ·Q,
  // dP = dO·Vᵀ and dV = Pᵀ·dO (Kᵀ and V are activations, not weights: no wgrad).
  auto sets = one_device_1024_tokens();
  sets.emplace_back("fusion.attention", "unfused");
  const rsim::RunResult run = train_8b(sets);
  const auto flops_of = [&](const std::string& name) {
    for (std::size_t row = 0; row < run.table.order.size(); ++row) {
      if (run.graph.op(run.table.order[row]).name == name) {
        return run.table.costs[row].flops.si();
      }
    }
    return -1.0;
  };
  const double gemm = 2.0 * 32.0 * 1024.0 * 1024.0 * 128.0;
  for (const std::string op : {"attention_scores", "attention_values"}) {
    CHECK(flops_of(op) == Approx(gemm));
    CHECK(flops_of(op + ".dgrad") == Approx(gemm));
    CHECK(flops_of(op + ".dgrad_rhs") == Approx(gemm));
    CHECK(flops_of(op + ".wgrad") < 0.0);
  }
  // A weight's matmul has its wgrad and no second operand gradient.
  CHECK(flops_of("o_proj.dgrad_rhs") < 0.0);
  CHECK(flops_of("o_proj.wgrad") > 0.0);
}

TEST_CASE("FP8 training casts each GEMM operand and its transpose", "[training][precision]") {
  // Transformer Engine's FP8 recipe: activations stay BF16 between modules; each GEMM casts X in
  // the forward pass and dY in the backward pass to FP8 and writes the FP8 transpose the other
  // GEMM reads (Hopper's FP8 GEMMs are TN only): read 2 B, write 1 + 1 B per element.
  const auto te = train_8b({{"precision", "{policy: fp8, activations: bf16, outputs: bf16}"}});
  const auto& bytes_of = op_bytes;
  // down_proj's X is the MLP activation: tokens × F/4 (TP 4) per device, 2 + 1 + 1 B each;
  // its dY is tokens × D (down_proj's output, replicated over TP before its all-reduce's
  // gradient), 2 + 1 + 1 B each. Tokens per microbatch and device: 262,144 / 8 / 2 = 16,384.
  const double tokens = 262144.0 / 8.0 / 2.0;
  const auto [x_pass, x_bytes] = bytes_of(te, "down_proj.quantize");
  const auto [dy_pass, dy_bytes] = bytes_of(te, "down_proj.dgrad_quantize");
  CHECK(x_pass == rsim::Pass::forward);
  CHECK(dy_pass == rsim::Pass::backward);
  CHECK(x_bytes == Approx(tokens * kF / 4.0 * 4.0));
  CHECK(dy_bytes == Approx(tokens * kD * 4.0));
  // Full recomputation casts X again in its pass; without it there is no such op.
  CHECK(bytes_of(te, "down_proj.recompute_quantize").second < 0.0);
  const auto recomputed =
      train_8b({{"precision", "{policy: fp8, activations: bf16, outputs: bf16}"},
                {"workload.recompute", "full"}});
  const auto [again_pass, again_bytes] = bytes_of(recomputed, "down_proj.recompute_quantize");
  CHECK(again_pass == rsim::Pass::recompute);
  CHECK(again_bytes == Approx(x_bytes));
  // Nothing to cast where the activations are already FP8 or the GEMMs run in BF16.
  CHECK(bytes_of(train_8b({{"precision", "fp8"}}), "down_proj.quantize").second < 0.0);
  CHECK(bytes_of(train_8b({}), "down_proj.quantize").second < 0.0);
}

TEST_CASE("FP32 gradients double the gradients' memory and their reduction",
          "[training][memory][precision]") {
  // Megatron-LM accumulates and all-reduces a BF16 run's gradients in FP32
  // (megatron/training/arguments.py: "bfloat16 requires gradient accumulation and all-reduce to
  // be done in fp32"): 4 B per gradient instead of 2, in memory and on the data axis.
  const rsim::RunResult bf16 = train_8b({});
  const rsim::RunResult fp32 = train_8b({{"precision", "{policy: bf16, gradients: fp32}"}});
  CHECK(fp32.footprint.gradients.si() == Approx(2.0 * bf16.footprint.gradients.si()));
  CHECK(fp32.footprint.weights.si() == Approx(bf16.footprint.weights.si()));
  const auto reduction = [](const rsim::RunResult& run) {
    for (const auto vertex : run.table.order) {
      const Op& op = run.graph.op(vertex);
      if (op.name == "down_proj.wgrad.all_reduce") {
        return op.collective.bytes.si();
      }
    }
    return 0.0;
  };
  // down_proj's gradient per replica: F · D / 4 (TP) · 4 B = 14336 · 4096 / 4 · 4.
  CHECK(reduction(fp32) == Approx(kF * kD / 4 * 4));
  CHECK(reduction(bf16) == Approx(kF * kD / 4 * 2));
}
