// SPDX-License-Identifier: MIT
#include "sim/graph/shard.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace rsim {
namespace {

// Per tensor axis: the mesh axes it is sharded on, outer first (empty = replicated). An entry may
// name a part of a mesh axis (see KvSplit) and more than one unit: the batch of a KV cache is split
// over 'data' and over the devices that share one KV head on 'model'.
using Layout = std::vector<std::vector<std::string>>;

bool contains(const std::vector<std::string>& units, const std::string& unit) {
  return std::find(units.begin(), units.end(), unit) != units.end();
}

// K KV heads over a tensor-parallel mesh axis of Y devices, K < Y and Y % K = 0 (Llama 3 70B: 8
// over 16). Megatron keeps the G = N/K query heads of each KV head's group on Y/K devices and
// replicates that KV head on them; the devices of the axis, m = k·(Y/K) + j, are then K outer
// groups (k: the KV head and its query heads) of Y/K inner devices (j). A KV cache split
// "heads first, then batch" (MaxText's cache sharding; scaling book inference.md shards the
// cache over kv_heads and, when they run out, over the batch) stores on device (k, j) KV head k
// of the j-th slice of the sequences: 1/Y of the cache per device instead of 1/K. Attention
// against it runs where it is: over kv_heads (K ways) × batch (Y/K ways).
struct KvSplit {
  std::string mesh;           // the mesh axis the kv_heads rule names
  std::int64_t kv_heads = 1;  // K
  MeshAxis heads_part;        // K outer device groups: one KV head (and its G query heads) each
  MeshAxis batch_part;        // Y/K inner devices: the ones that share a KV head
};

// The KV splits a plan needs for a graph: one per distinct K (stages may differ) that does not
// divide the kv_heads rule's mesh axis but divides its size.
std::vector<KvSplit> kv_splits(const OpGraph& graph, const Plan& plan) {
  std::vector<KvSplit> result;
  const std::optional<std::string> mesh_name = plan.mesh_axis_for(logical_axis::kv_heads, false);
  if (!mesh_name) {
    return result;
  }
  const MeshAxis& mesh = *plan.find_axis(*mesh_name);
  for (OpGraph::Vertex vertex = 0; vertex < graph.size(); ++vertex) {
    for (const auto* tensors : {&graph.op(vertex).inputs, &graph.op(vertex).outputs}) {
      for (const Tensor& tensor : *tensors) {
        for (const Axis& axis : tensor.axes) {
          const std::int64_t heads = axis.size;
          if (axis.name != "kv_heads" || heads >= mesh.size || mesh.size % heads != 0 ||
              std::any_of(result.begin(), result.end(),
                          [&](const KvSplit& split) { return split.kv_heads == heads; })) {
            continue;
          }
          KvSplit split{mesh.name, heads, mesh, mesh};
          split.heads_part.name = fmt::format("{}({} kv_heads)", mesh.name, heads);
          split.heads_part.size = heads;
          split.batch_part.name = fmt::format("{}({} per kv_head)", mesh.name, mesh.size / heads);
          split.batch_part.size = mesh.size / heads;
          result.push_back(std::move(split));
        }
      }
    }
  }
  return result;
}

// An op that reads keys cached by an earlier step or stage (a decode step's attention, π0.5's
// suffix against the prefix): its longest kv_seq outnumbers its queries.
bool attends_to_cache(const Op& op) {
  std::int64_t keys = 0;
  std::int64_t queries = 0;
  for (const auto* tensors : {&op.inputs, &op.outputs}) {
    for (const Tensor& tensor : *tensors) {
      for (const Axis& axis : tensor.axes) {
        keys = axis.name == "kv_seq" ? std::max(keys, axis.size) : keys;
        queries = axis.name == "seq" ? std::max(queries, axis.size) : queries;
      }
    }
  }
  return op.kind == OpKind::attention ? op.attention.cached_tokens > 0 : keys > queries;
}

class Sharder {
 public:
  Sharder(const Plan& plan, std::vector<std::string>& notes, std::vector<KvSplit> splits)
      : plan_(plan), notes_(notes), splits_(std::move(splits)) {}

  // The layout the rules give a tensor. Rules are taken in their order, so earlier rules win a
  // mesh axis (heads before seq: Megatron sequence parallelism keeps heads sharded in attention);
  // a mesh axis shards one axis of a tensor. KV heads that do not divide but divide the axis size
  // take its KvSplit's outer part (query groups its inner part); the ops that write or read a KV
  // cache take "heads first, then batch": kv_heads and heads the outer part, batch the inner
  // part, when the batch divides over it. Other KV heads and query groups that do not divide are
  // replicated, as Megatron does for MQA/GQA; any other axis that does not divide is an error.
  // `attention` ignores sequence rules: attention sees whole sequences.
  Layout layout(const Tensor& tensor, const Op& op, bool attention = false) const {
    Layout result(tensor.axes.size());
    std::vector<std::string> used;  // mesh axes and parts of them
    std::vector<std::string> decided;
    const KvSplit* split = split_of(op);
    const bool by_batch = split != nullptr && splits_batch(op, *split);
    const auto taken = [&](const std::string& unit) {
      if (contains(used, unit)) {
        return true;
      }
      // A whole mesh axis and its parts exclude each other.
      return std::any_of(splits_.begin(), splits_.end(), [&](const KvSplit& other) {
        const bool part = unit == other.heads_part.name || unit == other.batch_part.name;
        return (part && contains(used, other.mesh)) ||
               (unit == other.mesh &&
                (contains(used, other.heads_part.name) || contains(used, other.batch_part.name)));
      });
    };
    const auto take = [&](std::size_t index, const MeshAxis& unit) {
      if (unit.size > 1) {
        result[index].push_back(unit.name);
      }
      used.push_back(unit.name);
    };
    const auto assign = [&](const std::vector<std::pair<std::string, std::string>>& rules) {
      for (const auto& [logical, mesh_name] : rules) {
        const auto found = std::find_if(tensor.axes.begin(), tensor.axes.end(),
                                        [&](const Axis& axis) { return axis.name == logical; });
        if (found == tensor.axes.end() ||
            std::find(decided.begin(), decided.end(), logical) != decided.end() ||
            (attention && (logical == "seq" || logical == "kv_seq"))) {
          continue;
        }
        decided.push_back(logical);
        const auto index = static_cast<std::size_t>(found - tensor.axes.begin());
        if (split != nullptr && split->mesh == mesh_name) {
          // KV heads (and, where the cache is split by batch, the query heads of their groups)
          // go to the outer part; query groups, where the batch does not take it, the inner.
          if ((logical == "kv_heads" && found->size == split->kv_heads) ||
              (logical == "heads" && by_batch)) {
            if (!taken(split->heads_part.name)) {
              take(index, split->heads_part);
            }
            continue;
          }
          if (logical == "group" && !by_batch && !taken(split->batch_part.name) &&
              found->size % split->batch_part.size == 0) {
            take(index, split->batch_part);
            continue;
          }
        }
        if (mesh_name.empty() || taken(mesh_name)) {
          continue;
        }
        const MeshAxis& mesh = *plan_.find_axis(mesh_name);
        if (mesh.size == 1) {
          continue;
        }
        if (found->size % mesh.size != 0) {
          // The experts a decode step hits (E_hit = T·k < E; E itself divides, shard_graph
          // checks) are spread over the devices: each holds at most ⌈E_hit / N⌉ of them.
          if (found->name == "experts") {
            note(
                fmt::format("{}: {} experts hit do not divide over mesh axis '{}' ({}): each "
                            "device runs at most {}",
                            op.stage, found->size, mesh.name, mesh.size,
                            (found->size + mesh.size - 1) / mesh.size));
            take(index, mesh);
            continue;
          }
          // KV heads and query groups (MQA/GQA) and short sequences (the last token an LM head
          // reads) are replicated; other axes must divide.
          if (found->name == "kv_heads" || found->name == "group" || found->name == "seq") {
            note(fmt::format("{}: {} {} do not divide over mesh axis '{}' ({}): replicated",
                             op.stage, found->size, found->name, mesh.name, mesh.size));
            continue;
          }
          throw InputError(fmt::format(
              "plan '{}': axis '{}' of size {} ({} of {}) does not divide over mesh axis '{}' "
              "({})",
              plan_.name, found->name, found->size, tensor.name, op.qualified_name(), mesh.name,
              mesh.size));
        }
        take(index, mesh);
      }
    };
    const std::optional<std::string> data_axis = plan_.data_axis();
    if (op.pass == Pass::optimizer && plan_.zero_stage > 0 && data_axis) {
      // ZeRO: each data replica keeps and updates 1/d of every weight's optimizer state.
      assign({{"embed", *data_axis}});
    }
    if (tensor.role == TensorRole::weight) {
      assign(plan_.weight_rules);
    }
    assign(plan_.rules);
    const auto batch = std::find_if(tensor.axes.begin(), tensor.axes.end(),
                                    [](const Axis& axis) { return axis.name == "batch"; });
    if (by_batch && batch != tensor.axes.end() && !taken(split->batch_part.name)) {
      take(static_cast<std::size_t>(batch - tensor.axes.begin()), split->batch_part);
    }
    // An MoE block's expert rows come from the tokens: without a rule of their own they are
    // split where the tokens are (batch, then seq), on a mesh axis the experts do not take.
    const auto rows = std::find_if(tensor.axes.begin(), tensor.axes.end(),
                                   [](const Axis& axis) { return axis.name == "expert_tokens"; });
    if (rows == tensor.axes.end() ||
        std::find(decided.begin(), decided.end(), "expert_tokens") != decided.end()) {
      return result;
    }
    for (const std::string_view token_axis : {"batch", "seq"}) {
      const auto mesh_name = plan_.mesh_axis_for(token_axis, false);
      if (!mesh_name || taken(*mesh_name) || plan_.find_axis(*mesh_name)->size == 1) {
        continue;
      }
      const std::int64_t devices = plan_.find_axis(*mesh_name)->size;
      if (rows->size % devices != 0) {
        note(fmt::format(
            "{}: {} rows per expert do not divide over mesh axis '{}' ({}): each "
            "device runs at most {}",
            op.stage, rows->size, *mesh_name, devices, (rows->size + devices - 1) / devices));
      }
      result[static_cast<std::size_t>(rows - tensor.axes.begin())] = {*mesh_name};
      break;
    }
    return result;
  }

  // Per-device sizes: ⌈size / devices⌉ for each unit the axis is split over (exact for the axes
  // that must divide; the rows and experts of an MoE block may not).
  [[nodiscard]] Tensor local(Tensor tensor, const Layout& layout) const {
    for (std::size_t index = 0; index < tensor.axes.size(); ++index) {
      for (const std::string& unit : layout[index]) {
        const std::int64_t devices = find_unit(unit).size;
        tensor.axes[index].size = (tensor.axes[index].size + devices - 1) / devices;
      }
    }
    return tensor;
  }

  // The units a set of layouts is split over, for the collectives between them: each mesh axis
  // whole, or, where any of the layouts uses a part of it, its KvSplit parts, with every entry
  // that names the whole axis rewritten as its parts (outer first: device m = k·(Y/K) + j, so
  // query heads over the whole axis are query heads over both parts).
  [[nodiscard]] std::vector<MeshAxis> units(const std::vector<Layout*>& layouts) const {
    std::vector<MeshAxis> result;
    for (const MeshAxis& mesh : plan_.mesh) {
      const KvSplit* used = nullptr;
      for (const KvSplit& split : splits_) {
        for (const Layout* layout : layouts) {
          for (const auto& entry : *layout) {
            if (split.mesh == mesh.name && (contains(entry, split.heads_part.name) ||
                                            contains(entry, split.batch_part.name))) {
              used = &split;
            }
          }
        }
      }
      if (used == nullptr) {
        result.push_back(mesh);
        continue;
      }
      std::vector<std::string> parts;
      for (const MeshAxis* part : {&used->heads_part, &used->batch_part}) {
        if (part->size > 1) {
          result.push_back(*part);
          parts.push_back(part->name);
        }
      }
      for (Layout* layout : layouts) {
        for (auto& entry : *layout) {
          const auto whole = std::find(entry.begin(), entry.end(), mesh.name);
          if (whole != entry.end()) {
            entry.insert(entry.erase(whole), parts.begin(), parts.end());
          }
        }
      }
    }
    return result;
  }

  // The mesh axis a unit belongs to (a collective over a part runs on its axis's network).
  [[nodiscard]] std::string mesh_of(const std::string& unit) const {
    for (const KvSplit& split : splits_) {
      if (unit == split.heads_part.name || unit == split.batch_part.name) {
        return split.mesh;
      }
    }
    return unit;
  }

  void note(const std::string& text) const {
    if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) {
      notes_.push_back(text);
    }
  }

  [[nodiscard]] const Plan& plan() const { return plan_; }

 private:
  [[nodiscard]] const MeshAxis& find_unit(const std::string& unit) const {
    for (const KvSplit& split : splits_) {
      if (unit == split.heads_part.name) {
        return split.heads_part;
      }
      if (unit == split.batch_part.name) {
        return split.batch_part;
      }
    }
    return *plan_.find_axis(unit);
  }

  // The split of the kv_heads rule's mesh axis for the KV heads of this op's tensors, if any.
  [[nodiscard]] const KvSplit* split_of(const Op& op) const {
    for (const auto* tensors : {&op.inputs, &op.outputs}) {
      for (const Tensor& tensor : *tensors) {
        for (const Axis& axis : tensor.axes) {
          for (const KvSplit& split : splits_) {
            if (axis.name == "kv_heads" && axis.size == split.kv_heads) {
              return &split;
            }
          }
        }
      }
    }
    return nullptr;
  }

  // Whether an op that writes or reads a KV cache splits it by batch over the split's inner
  // part: its sequences per device (after the batch rule's own mesh axis) must divide over it;
  // else the cache stays replicated there (noted).
  [[nodiscard]] bool splits_batch(const Op& op, const KvSplit& split) const {
    const MeshAxis& axis = *plan_.find_axis(split.mesh);
    const std::string heads = fmt::format(
        "{}: {} kv_heads do not divide over mesh axis '{}' ({}): replicated on the {} devices "
        "that hold each one's query heads",
        op.stage, split.kv_heads, axis.name, axis.size, split.batch_part.size);
    if (op.kind != OpKind::kv_cache_write && !attends_to_cache(op)) {
      note(heads);
      return false;
    }
    std::int64_t sequences = 0;
    for (const Tensor& tensor : op.inputs) {
      for (const Axis& axis_of_tensor : tensor.axes) {
        sequences = axis_of_tensor.name == "batch" ? axis_of_tensor.size : sequences;
      }
    }
    const std::optional<std::string> batch_mesh = plan_.data_axis();
    if (sequences == 0 || batch_mesh == split.mesh) {
      note(heads);
      return false;
    }
    const std::int64_t data = batch_mesh ? plan_.find_axis(*batch_mesh)->size : 1;
    const std::int64_t per_device = (sequences + data - 1) / data;
    if (per_device % split.batch_part.size != 0) {
      note(fmt::format(
          "{}: {} kv_heads do not divide over mesh axis '{}' ({}) and {} sequences per device do "
          "not divide over the {} devices that share each KV head: the KV cache is replicated "
          "on them (1/{} of it per device)",
          op.stage, split.kv_heads, axis.name, axis.size, per_device, split.batch_part.size,
          split.kv_heads));
      return false;
    }
    note(fmt::format(
        "{}: {} kv_heads do not divide over mesh axis '{}' ({}): the KV cache is split {} × {} "
        "ways (KV heads × sequences: 1/{} of it per device); attention runs there, its queries "
        "and output moved by all-to-alls over each KV head's {} devices",
        op.stage, split.kv_heads, axis.name, axis.size, split.kv_heads, split.batch_part.size,
        axis.size, split.batch_part.size));
    return true;
  }

  const Plan& plan_;
  std::vector<std::string>& notes_;
  std::vector<KvSplit> splits_;
};

std::string axis_on(const Tensor& tensor, const Layout& layout, const std::string& mesh) {
  for (std::size_t index = 0; index < layout.size(); ++index) {
    if (contains(layout[index], mesh)) {
      return tensor.axes[index].name;
    }
  }
  return "";
}

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

// A collective over `mesh` (a mesh axis, or a part of one: then `mesh_axis` names the axis).
Op collective_op(const Op& op, CollectiveKind kind, CollectiveRole role, const std::string& suffix,
                 Bytes bytes, const MeshAxis& mesh, const Plan& plan,
                 const std::string& mesh_axis = {}) {
  Op result;
  result.name = fmt::format("{}.{}", op.name, suffix);
  result.stage = op.stage;
  result.block = op.block;
  result.count = op.count;
  result.group = op.group;
  result.kind = OpKind::collective;
  result.pass = op.pass;
  result.compute_path = op.compute_path;
  result.collective.kind = kind;
  result.role = role;
  result.collective.bytes = bytes;
  result.collective.axes = {mesh.size};
  result.collective.in_network_reduction = plan.in_network_reduction;
  result.network = mesh.network;
  result.mesh_axis = mesh_axis.empty() ? mesh.name : mesh_axis;
  return result;
}

struct ShardedOp {
  std::vector<Op> prefetch;  // weight gathers: they need no activation, so they can run early
  std::vector<Op> before;    // activation gathers the op waits for
  Op op;                     // the per-device op
  std::vector<Op> after;     // collectives that finish its output
  Layout input_layout;       // how its first input must arrive (by the rules)
  Layout output_layout;      // how its first output is really laid out
};

// The four sharded-matmul cases, per mesh axis, on the activation (0) and weight (1) operands.
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

ShardedOp shard_local(const Op& op, const Sharder& sharder, bool attention = false) {
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

// Fused attention: local tensors over whole sequences; its shape follows the query's batch and
// heads.
ShardedOp shard_attention(const Op& op, const Sharder& sharder) {
  ShardedOp result = shard_local(op, sharder, true);
  for (const Axis& axis : result.op.inputs.front().axes) {
    if (axis.name == "batch") {
      result.op.attention.batch = axis.size;
    }
    if (axis.name == "heads") {
      result.op.attention.heads = axis.size;
    }
  }
  return result;
}

// An MoE dispatch ([batch, seq, embed] tokens → [experts, expert_tokens, embed] rows) or
// combine (the reverse). Each device routes the tokens it holds. Over a mesh axis that splits the
// tokens and also the experts, the rows cross the devices in an all-to-all (after the dispatch,
// before the combine: the scaling book's two AllToAlls per MoE block), V = every device's rows
// together = T·k·D·bytes over the axis. Over a mesh axis that splits the tokens but not the
// experts, each device keeps its own tokens' rows (the layout splits expert_tokens there).
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

// A plan that splits the experts must give every device the same number: E % N = 0.
void check_experts(const OpGraph& graph, const Plan& plan) {
  for (const OpGraph::Stage& stage : graph.stages) {
    for (const bool weight : {true, false}) {
      const auto mesh_name = plan.mesh_axis_for(logical_axis::experts, weight);
      const MeshAxis* mesh = mesh_name ? plan.find_axis(*mesh_name) : nullptr;
      if (stage.experts > 0 && mesh != nullptr && stage.experts % mesh->size != 0) {
        throw InputError(fmt::format(
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

bool same_axes(const Tensor& left, const Tensor& right) {
  if (left.axes.size() != right.axes.size()) {
    return false;
  }
  return std::all_of(left.axes.begin(), left.axes.end(),
                     [&](const Axis& axis) { return right.has_axis(axis.name); });
}

// The collective that turns a producer's output layout into the layout its consumer needs:
// sharded → replicated is an all-gather; sharded on another axis is an all-to-all; replicated →
// sharded is a local slice (free).
std::vector<Op> reshard(const Tensor& produced, const Layout& from, const Op& consumer,
                        const Tensor& needed, const Layout& to, const Sharder& sharder) {
  std::vector<Op> result;
  if (!same_axes(produced, needed)) {
    return result;
  }
  // Compared unit by unit: the queries of a KV-split attention arrive sharded by heads over the
  // whole tensor axis = by heads over its outer and inner parts; attention needs them by heads
  // over the outer part (the KV head's group) and by batch over the inner one, so only the inner
  // part moves: an all-to-all over the Y/K devices that share a KV head. Its output goes back
  // the same way for o_proj (by batch → by heads over the inner part: an all-to-all again; an
  // all-gather would send each device Y/K − 1 slices of every head of the group, twice the
  // (Y/K − 1)/(Y/K)² · V an all-to-all sends, to keep only its own heads).
  Layout have_layout = from;
  Layout want_layout = to;
  for (const MeshAxis& mesh : sharder.units({&have_layout, &want_layout})) {
    const std::string have = axis_on(produced, have_layout, mesh.name);
    const std::string want = axis_on(needed, want_layout, mesh.name);
    if (mesh.size == 1 || have.empty() || have == want) {
      continue;
    }
    const Bytes local = sharder.local(needed, to).bytes();
    const std::string mesh_axis = sharder.mesh_of(mesh.name);
    if (want.empty()) {
      result.push_back(collective_op(consumer, CollectiveKind::all_gather, CollectiveRole::tensor,
                                     "reshard_all_gather", local, mesh, sharder.plan(), mesh_axis));
    } else {
      // All-to-all moves the whole array, V = local bytes × devices on the axis.
      result.push_back(collective_op(consumer, CollectiveKind::all_to_all, CollectiveRole::tensor,
                                     "reshard_all_to_all", local * static_cast<double>(mesh.size),
                                     mesh, sharder.plan(), mesh_axis));
    }
  }
  return result;
}

// Pipeline parallelism: the rule `layers: AXIS` gives each device of AXIS (p stages) L/p of the
// layers, so every op of the layer blocks runs count/p times per device; a training step sends
// each microbatch's activations forward and its gradients back across every stage boundary
// (with v interleaved chunks per stage, v times: Narayanan et al. 2021, §2.2). The bubble is the
// analysis's: it needs the costed times.
void place_pipeline(ShardedGraph& sharded, const Plan& plan, const OpGraph::Vertex boundary,
                    const Bytes boundary_bytes) {
  const std::optional<std::string> axis = plan.pipeline_axis();
  if (!axis) {
    return;
  }
  const MeshAxis& mesh = *plan.find_axis(*axis);
  if (mesh.size == 1) {
    return;
  }
  OpGraph& graph = sharded.graph;
  bool training = false;
  for (const OpGraph::Stage& stage : graph.stages) {
    const std::int64_t chunks = mesh.size * stage.pipeline_chunks;
    if (stage.layers % chunks != 0) {
      throw InputError(fmt::format(
          "plan '{}': {} layers of stage '{}' do not split over mesh axis '{}' ({} stages{})",
          plan.name, stage.layers, stage.name, mesh.name, mesh.size,
          stage.pipeline_chunks > 1 ? fmt::format(" × {} chunks", stage.pipeline_chunks) : ""));
    }
  }
  for (OpGraph::Vertex vertex = 0; vertex < graph.size(); ++vertex) {
    Op& op = graph.mutable_op(vertex);
    if (op.block == "layer") {
      op.count /= mesh.size;
    }
    training = training || op.pass == Pass::backward;
  }
  const Op last = graph.op(boundary);
  for (const OpGraph::Stage& stage : graph.stages) {
    if (stage.name != last.stage) {
      continue;
    }
    for (const Pass pass : {Pass::forward, Pass::backward}) {
      if (pass == Pass::backward && !training) {
        continue;
      }
      const std::string direction = pass == Pass::forward ? "send_activations" : "send_gradients";
      Op send = collective_op(last, CollectiveKind::send_recv, CollectiveRole::pipeline_send,
                              direction, boundary_bytes, mesh, plan);
      send.name = "pipeline." + direction;
      send.collective.axes = {2};  // neighbouring stages: one hop
      // Once per microbatch here; the v − 1 further chunks' sends are the schedule's
      // (analysis/schedule.hpp), which derives every v from this one costing.
      send.count = stage.steps * stage.microbatches;
      send.pass = pass;
      graph.add_op(std::move(send));
    }
  }
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
  using TensorKey = std::tuple<Pass, std::string, std::string, std::string, std::string, double,
                               std::string, std::int64_t>;
  std::map<TensorKey, OpGraph::Vertex> backward_gathers;
  // An expert matmul's all-reduced partial sums (its mlp axis split): the combine is linear, so
  // they are reduced after it, over the T token rows instead of the T·k expert rows (vLLM's
  // fused MoE under tensor parallelism).
  std::map<OpGraph::Vertex, std::vector<Op>> deferred_reductions;
  double stored_weights = 0.0;
  double all_weights = 0.0;
  // Pipeline stages each hold their own layers' weights.
  const std::optional<std::string> pipeline_axis = plan.pipeline_axis();
  const double pipeline_stages =
      pipeline_axis ? static_cast<double>(plan.find_axis(*pipeline_axis)->size) : 1.0;
  std::optional<OpGraph::Vertex> boundary;
  Bytes boundary_bytes;
  for (OpGraph::Vertex vertex : graph.topological_order()) {
    const Op& op = graph.op(vertex);
    if (op.kind != OpKind::embedding_gather && op.pass == Pass::forward) {
      // A gather reads rows of a replicated table; other passes reuse the forward's weights.
      for (const Tensor& tensor : op.inputs) {
        if (tensor.role == TensorRole::weight) {
          const auto count = static_cast<double>(op.count);
          const double stages = op.block == "layer" ? pipeline_stages : 1.0;
          const Tensor stored = stored_weight(tensor, graph, op);
          all_weights += stored.bytes().si() * count;
          stored_weights +=
              sharder.local(stored, sharder.layout(stored, op)).bytes().si() * count / stages;
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
      const OpGraph::Vertex gather = sharded.graph.add_op(std::move(part));
      sharded.graph.add_edge(gather, compute, "weight");
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
    if (op.block == "layer" && op.pass == Pass::forward && !op.outputs.empty()) {
      // The layer's output crosses a pipeline stage boundary.
      boundary = *previous;
      boundary_bytes = sharder.local(output, parts.output_layout).bytes();
    }
  }
  if (boundary) {
    place_pipeline(sharded, plan, *boundary, boundary_bytes);
  }
  sharded.weight_fraction = all_weights > 0.0 ? stored_weights / all_weights : 1.0;
  return sharded;
}

}  // namespace rsim
