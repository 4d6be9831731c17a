// SPDX-License-Identifier: MIT
#include "sim/graph/shard/shard_ops.hpp"

#include "sim/base/error.hpp"
#include "sim/graph/shard/collective_op.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace rsim::shard {
namespace {

bool has_axis(const std::vector<Tensor>& tensors, const std::string& name) {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const Tensor& tensor) { return tensor.has_axis(name); });
}

void clear_axis(Layout& layout, const Tensor& tensor, const std::string& axis,
                const std::string& mesh) {
  for (std::size_t index = 0; index < layout.size(); ++index) {
    if (tensor.axes[index].name == axis) {
      std::erase(layout[index], mesh);
    }
  }
}

}  // namespace

ShardedOp shard_matmul(const Op& op, const Sharder& sharder) {
  ShardedOp result;
  result.op = op;
  std::vector<Layout> layouts;
  for (const Tensor& tensor : op.inputs) {
    layouts.push_back(sharder.layout(tensor, op));
  }
  const Tensor& output = op.outputs.front();
  Layout rules_out = sharder.layout(output, op);
  std::vector<Layout*> all{&rules_out};
  for (Layout& layout : layouts) {
    all.push_back(&layout);
  }
  const std::vector<MeshAxis> units = sharder.units(all);
  result.input_layout = layouts[0];
  Layout out_layout(output.axes.size());
  const auto shard_output = [&](const std::string& axis, const std::string& mesh) {
    for (std::size_t index = 0; index < output.axes.size(); ++index) {
      if (output.axes[index].name == axis && !contains(out_layout[index], mesh)) {
        out_layout[index].push_back(mesh);
      }
    }
  };
  std::vector<std::pair<std::size_t, std::string>> reductions;  // in result.after, mesh axis
  for (const MeshAxis& mesh : units) {
    if (mesh.size == 1) {
      continue;
    }
    const std::string x_axis = axis_on(op.inputs[0], layouts[0], mesh.name);
    const std::string w_axis = axis_on(op.inputs[1], layouts[1], mesh.name);
    const bool x_contracting = !x_axis.empty() && !has_axis(op.outputs, x_axis);
    const bool w_contracting = !w_axis.empty() && !has_axis(op.outputs, w_axis);
    if (x_contracting && w_axis == x_axis) {
      // Case 3: partial sums over `mesh`; reduce-scatter if the rules shard an output axis on
      // it (Megatron sequence parallelism), else all-reduce.
      // The partial sums' bytes are set once every mesh axis has sharded the output (below).
      const std::string out_axis = axis_on(output, rules_out, mesh.name);
      // Under ZeRO each data replica updates 1/d of the weights: their gradients are
      // reduce-scattered over the data axis (the update all-gathers the new weights after).
      const Plan& plan = sharder.plan();
      const bool zero_gradient = plan.zero_stage > 0 && op.pass == Pass::backward &&
                                 output.role == TensorRole::weight && plan.data_axis() == mesh.name;
      const bool scatter = !out_axis.empty() || zero_gradient;
      // A weight's gradient summed over the replicas, or an activation's partial sums.
      const CollectiveRole role = op.pass == Pass::backward && output.role == TensorRole::weight
                                      ? CollectiveRole::gradient_reduction
                                      : CollectiveRole::tensor;
      result.after.push_back(
          collective_op(op, scatter ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                        role, scatter ? "reduce_scatter" : "all_reduce", Bytes(0.0), mesh, plan,
                        sharder.mesh_of(mesh.name)));
      reductions.emplace_back(result.after.size() - 1, mesh.name);
      // A gradient summed over a step's microbatches is reduced once per step.
      result.after.back().count = op.count / op.accumulated;
      if (!out_axis.empty()) {
        shard_output(out_axis, mesh.name);
      }
      continue;
    }
    // Weights sharded by weight_rules (FSDP) are sharded for storage only: gathered before use.
    const auto& storage = sharder.plan().weight_rules;
    const bool storage_only =
        std::find(storage.begin(), storage.end(), std::pair{w_axis, mesh.name}) != storage.end();
    if ((w_contracting && !x_contracting) || (storage_only && x_axis != w_axis)) {
      // Case 2 on the weight, or a storage-sharded weight: gather it before use.
      clear_axis(layouts[1], op.inputs[1], w_axis, mesh.name);
      result.prefetch.push_back(collective_op(op, CollectiveKind::all_gather,
                                              CollectiveRole::weight_gather, "all_gather_weight",
                                              sharder.local(op.inputs[1], layouts[1]).bytes(), mesh,
                                              sharder.plan(), sharder.mesh_of(mesh.name)));
    } else if (x_contracting || (!x_axis.empty() && !w_axis.empty() && x_axis != w_axis)) {
      // Case 2 on the activation's contracting axis, or case 4 (both operands sharded on this
      // mesh axis along different non-contracting axes): gather the activation, keeping the
      // weight sharded.
      clear_axis(layouts[0], op.inputs[0], x_axis, mesh.name);
      result.before.push_back(collective_op(op, CollectiveKind::all_gather, CollectiveRole::tensor,
                                            "all_gather_input",
                                            sharder.local(op.inputs[0], layouts[0]).bytes(), mesh,
                                            sharder.plan(), sharder.mesh_of(mesh.name)));
    }
    // Case 1: a non-contracting axis sharded on an operand stays sharded in the output.
    for (std::size_t operand = 0; operand < 2; ++operand) {
      const std::string axis = axis_on(op.inputs[operand], layouts[operand], mesh.name);
      if (!axis.empty() && has_axis(op.outputs, axis)) {
        shard_output(axis, mesh.name);
      }
    }
  }
  for (std::size_t index = 0; index < op.inputs.size(); ++index) {
    result.op.inputs[index] = sharder.local(op.inputs[index], layouts[index]);
  }
  // V of a reduction: the output as every other mesh axis leaves it on one device, before this
  // axis scatters it (an output sharded on a later mesh axis shrinks the partial sums too).
  for (const auto& [index, mesh_name] : reductions) {
    Layout unreduced = out_layout;
    for (auto& entry : unreduced) {
      std::erase(entry, mesh_name);
    }
    result.after[index].collective.bytes = sharder.local(output, unreduced).bytes();
  }
  result.op.outputs.front() = sharder.local(output, out_layout);
  result.output_layout = out_layout;
  return result;
}

ShardedOp shard_local(const Op& op, const Sharder& sharder, bool attention) {
  ShardedOp result;
  result.op = op;
  for (std::size_t index = 0; index < op.inputs.size(); ++index) {
    const Layout layout = sharder.layout(op.inputs[index], op, attention);
    result.op.inputs[index] = sharder.local(op.inputs[index], layout);
    if (index == 0) {
      result.input_layout = layout;
    }
  }
  for (std::size_t index = 0; index < op.outputs.size(); ++index) {
    const Layout layout = sharder.layout(op.outputs[index], op, attention);
    result.op.outputs[index] = sharder.local(op.outputs[index], layout);
    if (index == 0) {
      result.output_layout = layout;
    }
  }
  return result;
}

ShardedOp shard_attention(const Op& op, const Sharder& sharder) {
  ShardedOp result = shard_local(op, sharder, true);
  AttentionShape& shape = result.op.attention;
  for (const Axis& axis : result.op.inputs.front().axes) {
    if (axis.name == "batch") {
      shape.batch = axis.size;
    }
    if (axis.name == "heads") {
      shape.heads = axis.size;
    }
  }
  // Context parallelism: the queries' sequence split c ways (Sharder::layout), every device
  // attends its S/c queries to all S keys.
  const auto seq_of = [](const Tensor& tensor) {
    for (const Axis& axis : tensor.axes) {
      if (axis.name == "seq") {
        return axis.size;
      }
    }
    return std::int64_t{0};
  };
  const Tensor& query = op.inputs.front();
  const std::int64_t tokens = seq_of(query);
  const std::int64_t local = seq_of(result.op.inputs.front());
  if (local == tokens || local == 0) {
    return result;
  }
  const std::int64_t ways = tokens / local;
  if (shape.mask == AttentionMask::causal) {
    // Load-balanced as Megatron-LM's context parallelism and Llama 3's (§3.3.2) split it: the
    // sequence in 2c chunks, device i holding chunks i and 2c − 1 − i, so each computes
    // S(S + 1)/(2c) pairs: S/c queries after S(c − 1)/(2c) keys on average (op_cost's
    // visible_pairs: Q·C + Q(Q + 1)/2 with Q = S/c, C = S(c − 1)/(2c)).
    if (tokens % (2 * ways) != 0) {
      throw PlanError(PlanProblem::does_not_divide,
                      fmt::format("plan '{}': the {} tokens of {}'s attention do not split into "
                                  "{} chunks (2 per device of its {}-way context parallelism)",
                                  sharder.plan().name, tokens, op.stage, 2 * ways, ways));
    }
    shape.cached_tokens = tokens / (2 * ways) * (ways - 1);
  } else {
    shape.cached_tokens = tokens - local;
  }
  shape.query_tokens = local;
  // Every pass gathers K and V from the sequence's shards first (Llama 3's all-gather, §3.3.2;
  // Megatron-LM's ring passes as many bytes, again in the backward pass); the backward pass's K
  // and V gradients are partial sums over the devices' queries, reduce-scattered back.
  const Layout layout = sharder.layout(query, op, true);
  for (const MeshAxis& mesh : sharder.plan().mesh) {
    if (mesh.size == 1 || axis_on(query, layout, mesh.name) != "seq") {
      continue;
    }
    result.before.push_back(collective_op(
        op, CollectiveKind::all_gather, CollectiveRole::sequence, "kv_all_gather",
        result.op.inputs[1].bytes() + result.op.inputs[2].bytes(), mesh, sharder.plan()));
    if (op.pass == Pass::backward) {
      for (std::size_t index = 1; index < result.op.outputs.size(); ++index) {
        result.after.push_back(
            collective_op(op, CollectiveKind::reduce_scatter, CollectiveRole::sequence,
                          fmt::format("{}_reduce_scatter", index == 1 ? "dk" : "dv"),
                          result.op.outputs[index].bytes(), mesh, sharder.plan()));
      }
    }
  }
  return result;
}

ShardedOp shard_routing(const Op& op, const Sharder& sharder) {
  const bool dispatch = op.outputs.front().has_axis("experts");
  ShardedOp result = shard_local(op, sharder);
  const Tensor& tokens = dispatch ? op.inputs.front() : op.outputs.front();
  const Tensor& rows = dispatch ? op.outputs.front() : op.inputs.front();
  const Layout token_layout = sharder.layout(tokens, op);
  const Layout row_layout = sharder.layout(rows, op);
  const Tensor local_rows = sharder.local(rows, row_layout);
  for (const MeshAxis& mesh : sharder.plan().mesh) {
    if (mesh.size > 1 && !axis_on(tokens, token_layout, mesh.name).empty() &&
        axis_on(rows, row_layout, mesh.name) == "experts") {
      Op exchange =
          collective_op(op, CollectiveKind::all_to_all, CollectiveRole::expert, "all_to_all",
                        local_rows.bytes() * static_cast<double>(mesh.size), mesh, sharder.plan());
      (dispatch ? result.after : result.before).push_back(std::move(exchange));
    }
  }
  return result;
}

}  // namespace rsim::shard
