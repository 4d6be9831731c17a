// SPDX-License-Identifier: MIT
// The MLP half of a block: a dense MLP, or a mixture of experts with its router and shared
// experts.
#include "sim/graph/elementwise_flops.hpp"
#include "sim/graph/stage_builder.hpp"

#include <algorithm>

namespace rsim {

// Up (gate and up as one matmul, the usual fused GEMM; gate_up = 2), activation, down: a dense
// MLP of `width`, its ops named with `prefix`.
OpGraph::Vertex StageBuilder::add_mlp(const std::string& prefix, std::int64_t width,
                                      const std::vector<OpGraph::Vertex>& producers) {
  const std::int64_t tokens = stage_.tokens;
  const Axis mlp{"mlp", width};
  std::vector<Axis> up_weight{embed(), mlp};
  std::vector<Axis> up_out{batch(), seq(tokens), mlp};
  if (spec_.gated_mlp) {
    up_weight.insert(up_weight.begin() + 1, Axis{"gate_up", 2});
    up_out.insert(up_out.begin() + 2, Axis{"gate_up", 2});
  }
  const std::int64_t up_features = (spec_.gated_mlp ? 2 : 1) * width;
  add(matmul(prefix + (spec_.gated_mlp ? "gate_up_proj" : "up_proj"), "mlp",
             activation("x_norm", {batch(), seq(tokens), embed()}),
             weight(prefix + "up.weight", up_weight), up_out, spec_.mlp_bias ? up_features : 0),
      producers);
  const double act_flops =
      activation_flops(spec_.activation) + (spec_.gated_mlp ? kGateMultiplyFlops : 0.0);
  add(elementwise(prefix + "mlp_act", ElementwiseKind::activation, act_flops,
                  {activation("up", up_out)}, activation("hidden", {batch(), seq(tokens), mlp})),
      previous());
  return add(matmul(prefix + "down_proj", "mlp", activation("hidden", {batch(), seq(tokens), mlp}),
                    weight(prefix + "down_proj.weight", {mlp, embed()}),
                    {batch(), seq(tokens), embed()}, spec_.mlp_bias ? spec_.hidden_size : 0),
             previous());
}

void StageBuilder::add_mlp_block(const std::string& prefix) {
  const OpGraph::Vertex block_input = *last_;
  // A parallel block (GPT-J) feeds its MLP the attention's normed input: no second norm. The
  // two branches' sums stay two residual adds, as x + attn(x') + mlp(x') takes.
  if (!spec_.parallel_residual) {
    add_norm(prefix + "mlp_norm");
  }
  add_mlp("", spec_.intermediate_size, previous());
  if (spec_.post_norms) {
    add_norm(prefix + "post_mlp_norm");
  }
  add_residual(prefix + "mlp_residual", block_input);
}

// The shared experts as one MLP of their total width (DeepSeekMoE's n_shared_experts ×
// moe_intermediate_size) and, in Qwen2-MoE, their sigmoid gate: a [D, 1] linear.
OpGraph::Vertex StageBuilder::add_shared_experts(const std::vector<Axis>& token_axes,
                                                 OpGraph::Vertex normed) {
  OpGraph::Vertex shared = add_mlp("shared_", spec_.shared_expert_intermediate_size, {normed});
  if (spec_.shared_expert_gate) {
    add(matmul("shared_expert_gate", "router", activation("x_norm", token_axes),
               weight("shared_expert_gate.weight", {embed(), {"gate", 1}}),
               {batch(), seq(stage_.tokens), {"gate", 1}}, 0),
        {normed});
    graph_.add_edge(shared, *last_, "shared_out");
    shared = *last_;
  }
  return shared;
}

// Mixture of experts (Mixtral's MixtralSparseMoeBlock): a router matmul [D, E] and top-k per
// token, a dispatch that copies each token to its k experts' rows, the expert MLPs as batched
// matmuls over an `experts` axis (weights and activations), and a combine that sums each
// token's k expert outputs weighted by its router probabilities. T = batch · seq tokens make
// T·k expert rows, routed evenly (capacity factor 1): the experts hit are E_hit = min(E, T·k)
// (a decode step with few tokens reads only their weights), each running
// ⌈T·k / E_hit⌉ rows (the expert capacity; exact when E_hit divides T·k).
void StageBuilder::add_moe_block(const std::string& prefix) {
  const std::int64_t tokens = stage_.tokens;
  const std::int64_t k = spec_.experts_per_token;
  const OpGraph::Vertex block_input = *last_;
  add_norm(prefix + "mlp_norm");
  const OpGraph::Vertex normed = *last_;
  const std::vector<Axis> token_axes{batch(), seq(tokens), embed()};
  const Axis router{"router", spec_.num_experts};
  const Axis topk{"topk", k};
  add(matmul("router", "router", activation("x_norm", token_axes),
             weight("router.weight", {embed(), router}), {batch(), seq(tokens), router}, 0),
      {normed});
  // Softmax over the E logits (kSoftmaxFlops each) and k passes of a max over them (E
  // compares each), per token; counted per output element (k per token).
  // Grouped routing (DeepSeek-V3's noaux_tc) first scores each group by its top two experts (two
  // compares per expert) and keeps the best routing_groups_per_token groups (that many passes
  // over the group scores).
  const auto experts_total = static_cast<double>(spec_.num_experts);
  const double grouping =
      spec_.routing_groups > 0
          ? 2.0 * experts_total +
                static_cast<double>(spec_.routing_groups_per_token * spec_.routing_groups)
          : 0.0;
  const double topk_flops = ((kSoftmaxFlops + static_cast<double>(k)) * experts_total + grouping) /
                            static_cast<double>(k);
  const OpGraph::Vertex gates =
      add(elementwise("router_topk", ElementwiseKind::routing, topk_flops,
                      {activation("router_logits", {batch(), seq(tokens), router})},
                      activation("gates", {batch(), seq(tokens), topk})),
          previous());
  const std::int64_t assignments = batch_ * tokens * k;
  const std::int64_t experts_hit = std::min(spec_.num_experts, assignments);
  const Axis experts{"experts", experts_hit};
  const Axis rows{"expert_tokens", (assignments + experts_hit - 1) / experts_hit};
  const Axis mlp{"mlp", spec_.expert_intermediate_size()};
  // Dispatch: a copy of the rows (no arithmetic).
  add(elementwise(
          "dispatch", ElementwiseKind::routing, 0.0,
          {activation("x_norm", token_axes), activation("gates", {batch(), seq(tokens), topk})},
          activation("expert_in", {experts, rows, embed()})),
      {normed, gates});
  std::vector<Axis> up_weight{experts, embed(), mlp};
  std::vector<Axis> up_out{experts, rows, mlp};
  if (spec_.gated_mlp) {
    up_weight.insert(up_weight.begin() + 2, Axis{"gate_up", 2});
    up_out.insert(up_out.begin() + 2, Axis{"gate_up", 2});
  }
  const std::int64_t up_features = (spec_.gated_mlp ? 2 : 1) * spec_.expert_intermediate_size();
  // Expert biases, if any, are per expert: E_hit × features.
  add(matmul(spec_.gated_mlp ? "expert_gate_up_proj" : "expert_up_proj", "experts",
             activation("expert_in", {experts, rows, embed()}),
             weight("experts.up.weight", up_weight), up_out,
             spec_.mlp_bias ? experts_hit * up_features : 0),
      previous());
  const double act_flops =
      activation_flops(spec_.activation) + (spec_.gated_mlp ? kGateMultiplyFlops : 0.0);
  add(elementwise("expert_act", ElementwiseKind::activation, act_flops,
                  {activation("expert_up", up_out)},
                  activation("expert_hidden", {experts, rows, mlp})),
      previous());
  add(matmul("expert_down_proj", "experts", activation("expert_hidden", {experts, rows, mlp}),
             weight("experts.down.weight", {experts, mlp, embed()}), {experts, rows, embed()},
             spec_.mlp_bias ? experts_hit * spec_.hidden_size : 0),
      previous());
  std::vector<OpGraph::Vertex> combined{*last_, gates};
  std::vector<Tensor> combine_inputs{activation("expert_out", {experts, rows, embed()}),
                                     activation("gates", {batch(), seq(tokens), topk})};
  // Combine: per output element k products with the gates and k − 1 sums; one more sum with
  // the shared experts' output (and a product with their gate).
  double combine_flops = static_cast<double>(2 * k - 1);
  if (spec_.shared_expert_intermediate_size > 0) {
    combined.push_back(add_shared_experts(token_axes, normed));
    combine_inputs.push_back(activation("shared_out", token_axes));
    combine_flops += spec_.shared_expert_gate ? 2.0 : 1.0;
  }
  add(elementwise("combine", ElementwiseKind::routing, combine_flops, std::move(combine_inputs),
                  activation("branch", token_axes)),
      combined);
  if (spec_.post_norms) {
    add_norm(prefix + "post_mlp_norm");
  }
  add_residual(prefix + "mlp_residual", block_input);
}

}  // namespace rsim
