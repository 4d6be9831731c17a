// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph.hpp"
#include "sim/hardware.hpp"
#include "sim/plan.hpp"

#include <string>
#include <vector>

namespace rsim {

/// The op graph as one device runs it under a plan, with the collectives the plan needs.
struct ShardedGraph {
  OpGraph graph;
  std::vector<std::string> notes;  ///< e.g. KV heads replicated because they do not divide
  /// The share of the weights one device stores: Σ per-device weight bytes by the rules (FSDP
  /// stores 1/N even though it gathers before use) / Σ all weight bytes.
  double weight_fraction = 1.0;
};

/// Partitions a graph by a plan. Every tensor axis takes the mesh axis its rule names (one mesh
/// axis per tensor, first axis wins); per-device sizes drive every cost. Matmuls follow the four
/// cases of the scaling book (sharding.md): no sharded contracting axis → local; the contracting
/// axis sharded on one operand only → all-gather that operand; on both → local partial sums,
/// then all-reduce (reduce-scatter when the rules shard an output axis on that mesh axis);
/// operands sharded on the same mesh axis along different non-contracting axes → all-gather the
/// weight. Fused attention shards by batch and heads; KV heads that do not divide are replicated
/// (noted). A sharded axis that does not divide is an InputError naming it.
ShardedGraph shard_graph(const OpGraph& graph, const Plan& plan);

}  // namespace rsim
