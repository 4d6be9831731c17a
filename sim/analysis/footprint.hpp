// SPDX-License-Identifier: MIT
#pragma once
// What a run keeps in memory per device: weights, KV cache, the largest working set (and for
// training the parts training.hpp adds), against the main memory's capacity.

#include "sim/analysis/thresholds.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <vector>

namespace rsim {

/// What the run keeps in memory per device (weights and the KV cache), in bytes. For a decode
/// request (`decode_steps`), the footprint of its last step, where the KV cache is largest.
struct Footprint {
  Bytes weights;   ///< parameters in the weight dtype one device stores (× batch if per-batch)
  Bytes kv_cache;  ///< K and V one device caches (a later stage's or a decode step's)
  /// Inference: the largest working set of one op (its activation inputs and outputs);
  /// training: the activations saved for the backward pass (TrainingMemory::saved_activations).
  Bytes activations;
  Bytes gradients;        ///< training: gradients of the stored parameters
  Bytes optimizer_state;  ///< training: master weights and moments of the stored parameters
  Bytes capacity;         ///< main memory of one device, less the host's share of unified memory
  [[nodiscard]] Bytes total() const {
    return weights + kv_cache + activations + gradients + optimizer_state;
  }
  [[nodiscard]] bool fits() const { return total() <= capacity; }
  /// capacity − total: what is left (negative: the shortfall of a plan that does not fit).
  [[nodiscard]] Bytes free() const { return capacity - total(); }
};

/// What an inference run's footprint reads of its graph, found once: the tensors that count, op
/// by op as weights_and_cache visits them (stage by stage, in `order`), and the figures that do
/// not depend on the graph's sizes. It points into the graph, which must stay where it is; its
/// footprint follows the graph's sizes (a batch line's workspace, point after point).
struct FootprintPlan {
  struct Visit {
    const Op* op = nullptr;
    double steps = 1.0;                   ///< its stage's (runs = count / steps)
    std::vector<const Tensor*> kv_cache;  ///< a cache write's outputs, a decode step's K/V input
    /// The cached share of its kv_cache tensors: 1, or for unfused attention's matmuls (whose K
    /// and V hold the cache and this step's tokens, which the cache write counts) cached / kv_seq.
    double kv_cache_share = 1.0;
    bool working_set = false;                ///< its activations count (not fused, no collective)
    std::vector<const Tensor*> activations;  ///< its activation inputs, then outputs
    std::vector<const Tensor*> per_batch_weights;  ///< a per-batch group's weights
    /// Its activations' bytes at the graph's current sizes, summed in order.
    [[nodiscard]] Bytes working_bytes() const;
  };
  Bytes weights;  ///< every parameter once, in the weight dtype
  double weight_fraction = 1.0;
  Bytes capacity;
  std::vector<Visit> visits;
};
FootprintPlan plan_footprint(const Scenario& scenario, const OpGraph& graph,
                             const std::vector<OpGraph::Vertex>& order,
                             const ParameterCount& parameters, double weight_fraction,
                             const Roofs& roofs);

/// An inference run's footprint: weights (× the plan's weight fraction), KV cache and the largest
/// working set, against the main memory.
Footprint weights_and_cache(const FootprintPlan& plan);
/// The same with the largest working set given (its visits' activations not summed): where the
/// caller knows it exactly (a batch line: affine in the batch).
Footprint weights_and_cache(const FootprintPlan& plan, Bytes activations);
/// The same from the graph; `order` is its topological order.
Footprint weights_and_cache(const Scenario& scenario, const OpGraph& graph,
                            const std::vector<OpGraph::Vertex>& order,
                            const ParameterCount& parameters, double weight_fraction,
                            const Roofs& roofs);

}  // namespace rsim
