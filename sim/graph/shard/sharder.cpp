// SPDX-License-Identifier: MIT
#include "sim/graph/shard/sharder.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace rsim::shard {
namespace {

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

// Attention splits only its queries' sequence (context parallelism: each device attends its own
// queries to every key, K and V gathered): the query-side tensors (Q, O and their gradients, the
// ones with query heads) of a fresh pass with no cache or window. Other attention axes named seq
// or kv_seq stay whole; every other logical axis follows the rules.
bool context_parallel_axis(const Tensor& tensor, const Op& op, const std::string& logical) {
  if (logical != "seq" && logical != "kv_seq") {
    return true;
  }
  const AttentionShape& shape = op.attention;
  return op.kind == OpKind::attention && logical == "seq" && tensor.has_axis("heads") &&
         shape.cached_tokens == 0 && shape.window == 0;
}

}  // namespace

bool contains(const std::vector<std::string>& units, const std::string& unit) {
  return std::find(units.begin(), units.end(), unit) != units.end();
}

std::string axis_on(const Tensor& tensor, const Layout& layout, const std::string& mesh) {
  for (std::size_t index = 0; index < layout.size(); ++index) {
    if (contains(layout[index], mesh)) {
      return tensor.axes[index].name;
    }
  }
  return "";
}

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

Layout Sharder::layout(const Tensor& tensor, const Op& op, bool attention) const {
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
  // `padded`: the axis is split as a flat buffer padded to a multiple of the mesh axis
  // (ZeRO's optimizer state), so it need not divide.
  const auto assign = [&](const std::vector<std::pair<std::string, std::string>>& rules,
                          bool padded = false) {
    for (const auto& [logical, mesh_name] : rules) {
      // A named capture: clang before 16 (clang-tidy) cannot capture a structured binding.
      const auto found =
          std::find_if(tensor.axes.begin(), tensor.axes.end(),
                       [&name = logical](const Axis& axis) { return axis.name == name; });
      if (found == tensor.axes.end() ||
          std::find(decided.begin(), decided.end(), logical) != decided.end() ||
          (attention && !context_parallel_axis(tensor, op, logical))) {
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
        // ZeRO's sharded optimizer state is a flat buffer padded to a multiple of d (Megatron's
        // distributed optimizer, megatron/core/distributed/param_and_grad_buffer.py; DeepSpeed
        // ZeRO's partitions): each replica updates at most ⌈n/d⌉ rows.
        if (padded) {
          note(
              fmt::format("{}: {} {} do not divide over mesh axis '{}' ({}): the optimizer "
                          "state is padded, each replica updates at most {}",
                          op.stage, found->size, found->name, mesh.name, mesh.size,
                          (found->size + mesh.size - 1) / mesh.size));
          take(index, mesh);
          continue;
        }
        // KV heads and query groups (MQA/GQA) and short sequences (the last token an LM head
        // reads) are replicated; other axes must divide.
        if (found->name == "kv_heads" || found->name == "group" || found->name == "seq") {
          note(fmt::format("{}: {} {} do not divide over mesh axis '{}' ({}): replicated", op.stage,
                           found->size, found->name, mesh.name, mesh.size));
          continue;
        }
        throw PlanError(
            PlanProblem::does_not_divide,
            fmt::format(
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
    assign({{"embed", *data_axis}}, true);
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

Tensor Sharder::local(Tensor tensor, const Layout& layout) const {
  for (std::size_t index = 0; index < tensor.axes.size(); ++index) {
    for (const std::string& unit : layout[index]) {
      const std::int64_t devices = find_unit(unit).size;
      tensor.axes[index].size = (tensor.axes[index].size + devices - 1) / devices;
    }
  }
  return tensor;
}

std::vector<MeshAxis> Sharder::units(const std::vector<Layout*>& layouts) const {
  std::vector<MeshAxis> result;
  for (const MeshAxis& mesh : plan_.mesh) {
    const KvSplit* used = nullptr;
    for (const KvSplit& split : splits_) {
      for (const Layout* layout : layouts) {
        for (const auto& entry : *layout) {
          if (split.mesh == mesh.name &&
              (contains(entry, split.heads_part.name) || contains(entry, split.batch_part.name))) {
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

std::string Sharder::mesh_of(const std::string& unit) const {
  for (const KvSplit& split : splits_) {
    if (unit == split.heads_part.name || unit == split.batch_part.name) {
      return split.mesh;
    }
  }
  return unit;
}

void Sharder::note(const std::string& text) const {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) {
    notes_.push_back(text);
  }
}

const MeshAxis& Sharder::find_unit(const std::string& unit) const {
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

const KvSplit* Sharder::split_of(const Op& op) const {
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

bool Sharder::splits_batch(const Op& op, const KvSplit& split) const {
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

}  // namespace rsim::shard
