// SPDX-License-Identifier: MIT
#include "sim/analysis/footprint.hpp"

#include "sim/base/error.hpp"

#include <algorithm>

namespace rsim {

Bytes FootprintPlan::Visit::working_bytes() const {
  Bytes working;
  for (const Tensor* tensor : activations) {
    working += tensor->bytes();
  }
  return working;
}

namespace {

// Weights, KV cache and activations at the graph's current sizes (weights_and_cache's, before the
// weight fraction); the activations summed unless given. Weights: every parameter once in the
// weight dtype; a per-batch group holds `batch` copies, which its graph tensors already carry
// (their batch axis), so add the difference. KV cache: the cache writes of one run of each stage
// (count / steps = layers).
Footprint footprint(const FootprintPlan& plan, const Bytes* activations) {
  Footprint result;
  result.weights = plan.weights;
  if (activations != nullptr) {
    result.activations = *activations;
  }
  for (const FootprintPlan::Visit& visit : plan.visits) {
    const double runs = static_cast<double>(visit.op->count) / visit.steps;
    for (const Tensor* tensor : visit.kv_cache) {
      result.kv_cache += tensor->bytes() * (runs * visit.kv_cache_share);
    }
    if (visit.working_set && activations == nullptr) {
      result.activations = std::max(result.activations, visit.working_bytes());
    }
    for (const Tensor* tensor : visit.per_batch_weights) {
      const auto copies = static_cast<double>(tensor->axes.front().size);
      result.weights += tensor->bytes() * (runs * (1.0 - 1.0 / copies));
    }
  }
  return result;
}

}  // namespace

FootprintPlan plan_footprint(const Scenario& scenario, const OpGraph& graph,
                             const std::vector<OpGraph::Vertex>& order,
                             const ParameterCount& parameters, double weight_fraction,
                             const Roofs& roofs) {
  FootprintPlan plan;
  plan.weights = Bytes(static_cast<double>(parameters.total()) *
                       bytes_per_element(scenario.precision.weights));
  plan.weight_fraction = weight_fraction;
  const MemoryTier& main_memory = roofs.main_memory();
  plan.capacity =
      main_memory.capacity * static_cast<double>(main_memory.count) - scenario.host_share;
  const auto& per_batch = scenario.per_batch_weights;
  for (const OpGraph::Stage& stage : graph.stages) {
    for (OpGraph::Vertex vertex : order) {
      const Op& op = graph.op(vertex);
      if (op.stage != stage.name) {
        continue;
      }
      FootprintPlan::Visit visit;
      visit.op = &op;
      visit.steps = static_cast<double>(stage.steps);
      if (op.kind == OpKind::kv_cache_write) {
        for (const Tensor& tensor : op.outputs) {
          visit.kv_cache.push_back(&tensor);
        }
      }
      if (op.kind == OpKind::attention && stage.context > 0) {
        // A decode step's own cache: the context it reads, besides the token it writes.
        // The cached tensors span the kv_seq axis (K and V, or MLA's one latent cache); this
        // step's own K/V, cache-typed too when it writes them, do not.
        for (const Tensor& tensor : op.inputs) {
          if (tensor.role == TensorRole::kv_cache && tensor.has_axis("kv_seq")) {
            visit.kv_cache.push_back(&tensor);
          }
        }
      }
      if (op.kind == OpKind::matmul && stage.context > 0) {
        // Unfused attention's QKᵀ and PV read the cache and this step's K/V as one tensor of
        // kv_seq = context + tokens (issue 21 #9: the cache was left out, one token counted).
        for (const Tensor& tensor : op.inputs) {
          if (tensor.role == TensorRole::kv_cache) {
            for (const Axis& axis : tensor.axes) {
              if (axis.name == "kv_seq" && axis.size > 0) {
                visit.kv_cache.push_back(&tensor);
                visit.kv_cache_share = static_cast<double>(std::min(stage.context, axis.size)) /
                                       static_cast<double>(axis.size);
              }
            }
          }
        }
      }
      visit.working_set =
          !(op.kind == OpKind::elementwise && op.fused) && op.kind != OpKind::collective;
      for (const auto* tensors : {&op.inputs, &op.outputs}) {
        for (const Tensor& tensor : *tensors) {
          if (tensor.role == TensorRole::activation) {
            visit.activations.push_back(&tensor);
          }
        }
      }
      if (op.kind == OpKind::matmul &&
          std::find(per_batch.begin(), per_batch.end(), op.group) != per_batch.end()) {
        for (const Tensor& tensor : op.inputs) {
          if (tensor.role == TensorRole::weight) {
            visit.per_batch_weights.push_back(&tensor);
          }
        }
      }
      plan.visits.push_back(std::move(visit));
    }
  }
  return plan;
}

namespace {

Footprint weights_and_cache(const FootprintPlan& plan, const Bytes* activations) {
  Footprint memory = footprint(plan, activations);
  memory.weights = memory.weights * plan.weight_fraction;
  memory.capacity = plan.capacity;
  return memory;
}

}  // namespace

Footprint weights_and_cache(const FootprintPlan& plan) { return weights_and_cache(plan, nullptr); }

Footprint weights_and_cache(const FootprintPlan& plan, Bytes activations) {
  return weights_and_cache(plan, &activations);
}

Footprint weights_and_cache(const Scenario& scenario, const OpGraph& graph,
                            const std::vector<OpGraph::Vertex>& order,
                            const ParameterCount& parameters, double weight_fraction,
                            const Roofs& roofs) {
  return weights_and_cache(
      plan_footprint(scenario, graph, order, parameters, weight_fraction, roofs));
}

}  // namespace rsim
