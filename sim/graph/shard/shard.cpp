// SPDX-License-Identifier: MIT
#include "sim/graph/shard/shard.hpp"

#include "sim/base/error.hpp"
#include "sim/graph/shard/collective_op.hpp"
#include "sim/graph/shard/pipeline.hpp"
#include "sim/graph/shard/reshard.hpp"
#include "sim/graph/shard/shard_ops.hpp"
#include "sim/graph/shard/sharder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace rsim {
namespace {

using shard::collective_op;
using shard::kv_splits;
using shard::Layout;
using shard::place_pipeline;
using shard::reshard;
using shard::shard_attention;
using shard::shard_local;
using shard::shard_matmul;
using shard::shard_routing;
using shard::ShardedOp;
using shard::Sharder;

// A plan that splits the experts must give every device the same number: E % N = 0.
void check_experts(const OpGraph& graph, const Plan& plan) {
  for (const OpGraph::Stage& stage : graph.stages) {
    for (const bool weight : {true, false}) {
      const auto mesh_name = plan.mesh_axis_for(logical_axis::experts, weight);
      const MeshAxis* mesh = mesh_name ? plan.find_axis(*mesh_name) : nullptr;
      if (stage.experts > 0 && mesh != nullptr && stage.experts % mesh->size != 0) {
        throw PlanError(
            PlanProblem::does_not_divide,
            fmt::format(
                "plan '{}': mesh axis '{}' ({} devices) shards the experts of stage '{}', but its "
                "{} experts (num_local_experts) do not divide over it; expected a mesh axis size "
                "that divides {}",
                plan.name, mesh->name, mesh->size, stage.name, stage.experts, stage.experts));
      }
    }
  }
}

// A weight as stored: the expert weights of an MoE stage hold all E experts, even where the
// graph reads only the E_hit a decode step routes to.
Tensor stored_weight(Tensor tensor, const OpGraph& graph, const Op& op) {
  for (const OpGraph::Stage& stage : graph.stages) {
    if (stage.name == op.stage && stage.experts > 0) {
      for (Axis& axis : tensor.axes) {
        axis.size = axis.name == "experts" ? stage.experts : axis.size;
      }
    }
  }
  return tensor;
}

}  // namespace

ShardedGraph shard_graph(const OpGraph& graph, const Plan& plan) {
  check_experts(graph, plan);
  ShardedGraph sharded;
  sharded.graph.stages = graph.stages;
  const Sharder sharder(plan, sharded.notes, kv_splits(graph, plan));
  struct Placed {
    OpGraph::Vertex first;
    OpGraph::Vertex last;
    Tensor output;
    Layout output_layout;
  };
  std::map<OpGraph::Vertex, Placed> placed;
  // An activation gathered for one consumer serves its siblings too (Q and K/V projections read
  // the same gathered input under sequence parallelism): keyed by producer, bytes and tier.
  std::map<std::tuple<OpGraph::Vertex, double, std::string>, OpGraph::Vertex> gathered;
  // In the backward and recompute passes an activation or gradient gathered once serves every
  // matmul of the pass that reads it (Megatron-LM gathers a row-parallel layer's output gradient
  // once for its dgrad and wgrad, a column-parallel layer's input once for its weight gradient
  // and once for the recomputed q and kv): keyed by the pass, the tensor and the op's stage,
  // block and group (the attention and MLP norms' outputs share a name).
  using TensorKey = std::tuple<Pass, std::string, std::string, Block, std::string, double,
                               std::string, std::int64_t>;
  std::map<TensorKey, OpGraph::Vertex> backward_gathers;
  // A weight gathered (FSDP, ZeRO-3) for a layer's recomputation stays for that layer's backward:
  // PyTorch FSDP gathers in the backward pre-hook and the checkpointed forward re-runs inside it,
  // so a recomputed layer gathers its weights twice per step, not three times (issue 21 #3c).
  // Keyed as backward_gathers, with the pass taken as the backward's.
  std::map<TensorKey, OpGraph::Vertex> recompute_weight_gathers;
  // An expert matmul's all-reduced partial sums (its mlp axis split): the combine is linear, so
  // they are reduced after it, over the T token rows instead of the T·k expert rows (vLLM's
  // fused MoE under tensor parallelism).
  std::map<OpGraph::Vertex, std::vector<Op>> deferred_reductions;
  double stored_weights = 0.0;
  double all_weights = 0.0;
  // Pipeline stages each hold their own layers' weights (the busiest stage's share of them).
  const std::optional<std::string> pipeline_axis = plan.pipeline_axis();
  const std::int64_t pipeline_stages =
      pipeline_axis ? plan.find_axis(*pipeline_axis)->size : std::int64_t{1};
  const auto layer_share = [&](const Op& op) {
    for (const OpGraph::Stage& stage : graph.stages) {
      if (stage.name == op.stage) {
        return static_cast<double>(shard::busiest_stage_layers(stage, pipeline_stages)) /
               static_cast<double>(stage.layers);
      }
    }
    return 1.0 / static_cast<double>(pipeline_stages);
  };
  // The input gradients that several dgrads each produce a partial sum of (q's and kv's: both
  // read the attention norm's output), by the last of them: Megatron-LM runs Q, K and V as one
  // fused GEMM, so the partial sums add up locally and are reduced once, after the last.
  using GradientKey = std::tuple<std::string, std::string, Block, std::string, std::int64_t>;
  const auto gradient_key = [](const Op& op) {
    return std::make_tuple(op.outputs.front().name, op.stage, op.block, op.group, op.count);
  };
  const auto input_gradient = [](const Op& op) {
    return op.kind == OpKind::matmul && op.pass == Pass::backward && !op.outputs.empty() &&
           op.outputs.front().role == TensorRole::activation;
  };
  std::map<GradientKey, OpGraph::Vertex> last_dgrad;
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    if (input_gradient(graph.op(vertex))) {
      last_dgrad[gradient_key(graph.op(vertex))] = vertex;
    }
  }
  std::optional<OpGraph::Vertex> boundary;
  Bytes boundary_bytes;
  bool boundary_replicated = false;  // the layer output is whole on every tensor-axis device
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
    if (op.kind != OpKind::embedding_gather && op.pass == Pass::forward) {
      // A gather reads rows of a replicated table; other passes reuse the forward's weights.
      for (const Tensor& tensor : op.inputs) {
        if (tensor.role == TensorRole::weight) {
          const auto count = static_cast<double>(op.count);
          const double share = op.block == Block::layer ? layer_share(op) : 1.0;
          const Tensor stored = stored_weight(tensor, graph, op);
          all_weights += stored.bytes().si() * count;
          stored_weights +=
              sharder.local(stored, sharder.layout(stored, op)).bytes().si() * count * share;
        }
      }
    }
    const bool routing =
        op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::routing &&
        !op.outputs.empty() && !op.inputs.empty() &&
        (op.outputs.front().has_axis("experts") || op.inputs.front().has_axis("experts"));
    ShardedOp parts = op.kind == OpKind::matmul      ? shard_matmul(op, sharder)
                      : op.kind == OpKind::attention ? shard_attention(op, sharder)
                      : routing                      ? shard_routing(op, sharder)
                                                     : shard_local(op, sharder);
    if (op.pass == Pass::optimizer && plan.zero_stage > 0) {
      // ZeRO: the replicas all-gather the weights each updated (V: the whole weight as a
      // replica stores it).
      const MeshAxis& data = *plan.find_axis(*plan.data_axis());
      if (data.size > 1) {
        parts.after.push_back(collective_op(
            op, CollectiveKind::all_gather, CollectiveRole::weight_gather, "all_gather_params",
            parts.op.outputs.front().bytes() * static_cast<double>(data.size), data, plan));
      }
    }
    std::optional<OpGraph::Vertex> previous;
    std::optional<OpGraph::Vertex> first;
    const auto append = [&](Op part) {
      const OpGraph::Vertex added = sharded.graph.add_op(std::move(part));
      if (previous) {
        sharded.graph.add_edge(*previous, added, "");
      }
      first = first ? first : added;
      previous = added;
    };
    // Producers' layouts that differ from what this op needs are resharded first.
    std::vector<std::pair<OpGraph::Vertex, OpGraph::Vertex>> inputs;
    for (auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
      const Placed& producer = placed.at(boost::source(edge, graph.graph()));
      OpGraph::Vertex from = producer.last;
      if (!op.inputs.empty()) {
        for (Op& move : reshard(producer.output, producer.output_layout, op, op.inputs.front(),
                                parts.input_layout, sharder)) {
          const OpGraph::Vertex added = sharded.graph.add_op(std::move(move));
          sharded.graph.add_edge(from, added, graph.graph()[edge]);
          from = added;
        }
      }
      inputs.emplace_back(from, vertex);
    }
    const bool single_producer = boost::in_degree(vertex, graph.graph()) == 1;
    const OpGraph::Vertex producer_vertex =
        single_producer
            ? boost::source(*boost::in_edges(vertex, graph.graph()).first, graph.graph())
            : vertex;
    std::vector<OpGraph::Vertex> shared;
    const bool by_tensor_pass =
        (op.pass == Pass::backward || op.pass == Pass::recompute) && op.inputs.size() == 2;
    const auto tensor_key = [&](const Op& part, std::size_t operand) {
      return TensorKey{op.pass,
                       op.inputs[operand].name,
                       op.stage,
                       op.block,
                       op.group,
                       part.collective.bytes.si(),
                       part.mesh_axis + " over " + part.network,
                       op.count};
    };
    for (Op& part : parts.before) {
      const auto key = std::make_tuple(producer_vertex, part.collective.bytes.si(), part.network);
      const auto by_tensor = tensor_key(part, 0);
      if (by_tensor_pass && backward_gathers.contains(by_tensor)) {
        shared.push_back(backward_gathers.at(by_tensor));
        continue;
      }
      if (single_producer && gathered.contains(key)) {
        shared.push_back(gathered.at(key));
        continue;
      }
      append(std::move(part));
      if (single_producer) {
        gathered[key] = *previous;
      }
      if (by_tensor_pass) {
        backward_gathers[by_tensor] = *previous;
      }
    }
    if (input_gradient(op) && last_dgrad.at(gradient_key(op)) != vertex) {
      // Not the last partial sum of its gradient: the last one's reduction covers it.
      std::erase_if(parts.after, [](const Op& part) {
        return part.role == CollectiveRole::tensor &&
               (part.collective.kind == CollectiveKind::all_reduce ||
                part.collective.kind == CollectiveKind::reduce_scatter);
      });
    }
    if (op.kind == OpKind::matmul && op.outputs.front().has_axis("expert_tokens")) {
      auto& deferred = deferred_reductions[vertex];
      for (auto part = parts.after.begin(); part != parts.after.end();) {
        const bool reduce = part->collective.kind == CollectiveKind::all_reduce;
        if (reduce) {
          deferred.push_back(std::move(*part));
        }
        part = reduce ? parts.after.erase(part) : part + 1;
      }
    }
    if (routing && op.inputs.front().has_axis("experts")) {
      for (auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
        const auto found = deferred_reductions.find(boost::source(edge, graph.graph()));
        if (found == deferred_reductions.end()) {
          continue;
        }
        for (Op& reduction : found->second) {
          reduction.name = op.name + ".all_reduce";
          reduction.group = op.group;
          reduction.collective.bytes = parts.op.outputs.front().bytes();
          parts.after.push_back(std::move(reduction));
        }
      }
    }
    const Tensor output = parts.op.outputs.empty() ? Tensor{} : op.outputs.front();
    append(std::move(parts.op));
    const OpGraph::Vertex compute = *previous;
    for (OpGraph::Vertex gather : shared) {
      sharded.graph.add_edge(gather, compute, "gathered");
    }
    for (Op& part : parts.after) {
      append(std::move(part));
    }
    // Weight gathers hang off nothing but the op they feed: a schedule may run them ahead.
    for (Op& part : parts.prefetch) {
      // A gradient in the weight slot (a weight gradient's dY) may already be gathered.
      const bool gradient = by_tensor_pass && op.inputs[1].role != TensorRole::weight;
      const auto by_tensor = tensor_key(part, 1);
      if (gradient && backward_gathers.contains(by_tensor)) {
        sharded.graph.add_edge(backward_gathers.at(by_tensor), compute, "gathered");
        continue;
      }
      const bool weight = op.inputs[1].role == TensorRole::weight &&
                          (op.pass == Pass::recompute || op.pass == Pass::backward);
      auto weight_key = by_tensor;
      std::get<0>(weight_key) = Pass::backward;
      if (weight && op.pass == Pass::backward && recompute_weight_gathers.contains(weight_key)) {
        sharded.graph.add_edge(recompute_weight_gathers.at(weight_key), compute, "gathered");
        continue;
      }
      const OpGraph::Vertex gather = sharded.graph.add_op(std::move(part));
      sharded.graph.add_edge(gather, compute, "weight");
      if (weight && op.pass == Pass::recompute) {
        recompute_weight_gathers[weight_key] = gather;
      }
      if (gradient) {
        // A gradient exists only once its producers ran: the gather waits for them (another
        // matmul may reuse it).
        for (const auto& [from, unused] : inputs) {
          sharded.graph.add_edge(from, gather, "");
        }
        backward_gathers[by_tensor] = gather;
      }
    }
    for (const auto& [from, unused] : inputs) {
      sharded.graph.add_edge(from, *first, "");
    }
    placed[vertex] = {*first, *previous, output, parts.output_layout};
    if (op.block == Block::layer && op.pass == Pass::forward && !op.outputs.empty()) {
      // The layer's output crosses a pipeline stage boundary.
      boundary = *previous;
      boundary_bytes = sharder.local(output, parts.output_layout).bytes();
      const std::optional<std::string> tensor = plan.mesh_axis_for(logical_axis::mlp, false);
      boundary_replicated =
          tensor &&
          std::none_of(parts.output_layout.begin(), parts.output_layout.end(),
                       [&](const std::vector<std::string>& axes) {
                         return std::find(axes.begin(), axes.end(), *tensor) != axes.end();
                       });
    }
  }
  if (boundary) {
    place_pipeline(sharded, plan, *boundary, boundary_bytes, boundary_replicated);
  }
  sharded.weight_fraction = all_weights > 0.0 ? stored_weights / all_weights : 1.0;
  return sharded;
}

}  // namespace rsim
