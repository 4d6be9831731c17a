// SPDX-License-Identifier: MIT
#include "sim/shard.hpp"

#include "sim/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rsim {
namespace {

// Per tensor axis: the mesh axis it is sharded on ("" = replicated).
using Layout = std::vector<std::string>;

class Sharder {
 public:
  Sharder(const Plan& plan, std::vector<std::string>& notes) : plan_(plan), notes_(notes) {}

  // The layout the rules give a tensor. KV heads that do not divide are replicated, as
  // Megatron does for MQA/GQA; any other axis that does not divide is an error.
  Layout layout(const Tensor& tensor, const Op& op) const {
    Layout result(tensor.axes.size());
    std::vector<std::string> used;
    for (std::size_t index = 0; index < tensor.axes.size(); ++index) {
      const Axis& axis = tensor.axes[index];
      const auto mesh_name = plan_.mesh_axis_for(axis.name, tensor.role == TensorRole::weight);
      if (!mesh_name || std::find(used.begin(), used.end(), *mesh_name) != used.end()) {
        continue;
      }
      const MeshAxis& mesh = *plan_.find_axis(*mesh_name);
      if (mesh.size == 1) {
        continue;
      }
      if (axis.size % mesh.size != 0) {
        if (axis.name == "kv_heads" || axis.name == "group") {
          note(fmt::format("{}: {} {} do not divide over mesh axis '{}' ({}): replicated", op.stage,
                           axis.size, axis.name, mesh.name, mesh.size));
          continue;
        }
        throw InputError(fmt::format(
            "plan '{}': axis '{}' of size {} ({} of {}) does not divide over mesh axis '{}' ({})",
            plan_.name, axis.name, axis.size, tensor.name, op.qualified_name(), mesh.name,
            mesh.size));
      }
      result[index] = *mesh_name;
      used.push_back(*mesh_name);
    }
    return result;
  }

  static Tensor local(Tensor tensor, const Layout& layout, const Plan& plan) {
    for (std::size_t index = 0; index < tensor.axes.size(); ++index) {
      if (!layout[index].empty()) {
        tensor.axes[index].size /= plan.find_axis(layout[index])->size;
      }
    }
    return tensor;
  }

  void note(const std::string& text) const {
    if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) {
      notes_.push_back(text);
    }
  }

  const Plan& plan() const { return plan_; }

 private:
  const Plan& plan_;
  std::vector<std::string>& notes_;
};

std::string axis_on(const Tensor& tensor, const Layout& layout, const std::string& mesh) {
  for (std::size_t index = 0; index < layout.size(); ++index) {
    if (layout[index] == mesh) {
      return tensor.axes[index].name;
    }
  }
  return "";
}

bool has_axis(const std::vector<Tensor>& tensors, const std::string& name) {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const Tensor& tensor) { return tensor.has_axis(name); });
}

Op collective_op(const Op& op, CollectiveKind kind, const std::string& suffix, Bytes bytes,
                 const MeshAxis& mesh, bool in_network_reduction) {
  Op result;
  result.name = fmt::format("{}.{}", op.name, suffix);
  result.stage = op.stage;
  result.block = op.block;
  result.count = op.count;
  result.group = op.group;
  result.kind = OpKind::collective;
  result.compute_path = op.compute_path;
  result.collective.kind = kind;
  result.collective.bytes = bytes;
  result.collective.axes = {mesh.size};
  result.network = mesh.network;
  result.collective.in_network_reduction = in_network_reduction;
  return result;
}

struct ShardedOp {
  std::vector<Op> prefetch;  // weight gathers: they need no activation, so they can run early
  std::vector<Op> before;    // activation gathers the op waits for
  Op op;                     // the per-device op
  std::vector<Op> after;     // collectives that finish its output
};

// The four sharded-matmul cases, per mesh axis, on the activation (0) and weight (1) operands.
ShardedOp shard_matmul(const Op& op, const Sharder& sharder) {
  ShardedOp result;
  result.op = op;
  std::vector<Layout> layouts;
  for (const Tensor& tensor : op.inputs) {
    layouts.push_back(sharder.layout(tensor, op));
  }
  Layout out_layout = sharder.layout(op.outputs.front(), op);
  for (const MeshAxis& mesh : sharder.plan().mesh) {
    if (mesh.size == 1) {
      continue;
    }
    const std::string x_axis = axis_on(op.inputs[0], layouts[0], mesh.name);
    const std::string w_axis = axis_on(op.inputs[1], layouts[1], mesh.name);
    const bool x_contracting = !x_axis.empty() && !has_axis(op.outputs, x_axis);
    const bool w_contracting = !w_axis.empty() && !has_axis(op.outputs, w_axis);
    const auto unshard = [&](std::size_t operand, const std::string& axis) {
      for (std::size_t index = 0; index < layouts[operand].size(); ++index) {
        if (op.inputs[operand].axes[index].name == axis) {
          layouts[operand][index].clear();
        }
      }
    };
    if (x_contracting && w_axis == x_axis) {
      // Case 3: partial sums over `mesh`; reduce-scatter if the output is sharded on it.
      const std::string out_axis = axis_on(op.outputs.front(), out_layout, mesh.name);
      Layout before_scatter = out_layout;
      std::replace(before_scatter.begin(), before_scatter.end(), mesh.name, std::string());
      const Bytes partial =
          Sharder::local(op.outputs.front(), before_scatter, sharder.plan()).bytes();
      result.after.push_back(collective_op(
          op, out_axis.empty() ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter,
          out_axis.empty() ? "all_reduce" : "reduce_scatter", partial, mesh,
          sharder.plan().in_network_reduction));
    } else if (x_contracting) {
      // Case 2: gather the activation's contracting axis.
      unshard(0, x_axis);
      result.before.push_back(
          collective_op(op, CollectiveKind::all_gather, "all_gather_input",
                        Sharder::local(op.inputs[0], layouts[0], sharder.plan()).bytes(), mesh,
                        sharder.plan().in_network_reduction));
    } else if (w_contracting || (!x_axis.empty() && !w_axis.empty() && x_axis != w_axis)) {
      // Case 2 on the weight (FSDP), or case 4 (both non-contracting on one mesh axis).
      unshard(1, w_axis);
      result.prefetch.push_back(
          collective_op(op, CollectiveKind::all_gather, "all_gather_weight",
                        Sharder::local(op.inputs[1], layouts[1], sharder.plan()).bytes(), mesh,
                        sharder.plan().in_network_reduction));
    }
  }
  for (std::size_t index = 0; index < op.inputs.size(); ++index) {
    result.op.inputs[index] = Sharder::local(op.inputs[index], layouts[index], sharder.plan());
  }
  result.op.outputs.front() = Sharder::local(op.outputs.front(), out_layout, sharder.plan());
  return result;
}

ShardedOp shard_local(const Op& op, const Sharder& sharder) {
  ShardedOp result;
  result.op = op;
  for (Tensor& tensor : result.op.inputs) {
    tensor = Sharder::local(tensor, sharder.layout(tensor, op), sharder.plan());
  }
  for (Tensor& tensor : result.op.outputs) {
    tensor = Sharder::local(tensor, sharder.layout(tensor, op), sharder.plan());
  }
  return result;
}

// Fused attention: local tensors, and its shape follows the query's batch and heads.
ShardedOp shard_attention(const Op& op, const Sharder& sharder) {
  ShardedOp result = shard_local(op, sharder);
  const Tensor& query = result.op.inputs.front();
  for (const Axis& axis : query.axes) {
    if (axis.name == "seq" && axis.size != op.attention.query_tokens) {
      throw InputError(
          fmt::format("plan '{}' shards the sequence of {}: context parallelism of "
                      "attention is not modelled",
                      sharder.plan().name, op.qualified_name()));
    }
    if (axis.name == "batch") {
      result.op.attention.batch = axis.size;
    }
    if (axis.name == "heads") {
      result.op.attention.heads = axis.size;
    }
  }
  return result;
}

}  // namespace

ShardedGraph shard_graph(const OpGraph& graph, const Plan& plan) {
  ShardedGraph sharded;
  sharded.graph.stages = graph.stages;
  const Sharder sharder(plan, sharded.notes);
  std::map<OpGraph::Vertex, std::pair<OpGraph::Vertex, OpGraph::Vertex>> ends;
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
    ShardedOp parts = op.kind == OpKind::matmul      ? shard_matmul(op, sharder)
                      : op.kind == OpKind::attention ? shard_attention(op, sharder)
                                                     : shard_local(op, sharder);
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
    for (Op& part : parts.before) {
      append(std::move(part));
    }
    append(std::move(parts.op));
    const std::optional<OpGraph::Vertex> first_compute = previous;
    for (Op& part : parts.after) {
      append(std::move(part));
    }
    // Weight gathers hang off nothing but the op they feed: a schedule may run them ahead.
    const OpGraph::Vertex compute = first_compute ? *first_compute : *first;
    for (Op& part : parts.prefetch) {
      sharded.graph.add_edge(sharded.graph.add_op(std::move(part)), compute, "weight");
    }
    ends[vertex] = {*first, *previous};
    for (auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
      const OpGraph::Vertex producer = boost::source(edge, graph.graph());
      sharded.graph.add_edge(ends.at(producer).second, *first, graph.graph()[edge]);
    }
  }
  return sharded;
}

}  // namespace rsim
