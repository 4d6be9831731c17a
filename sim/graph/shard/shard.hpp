// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/plan.hpp"

#include <string>
#include <vector>

namespace rsim {

/// The op graph as one device runs it under a plan, with the collectives the plan needs.
struct ShardedGraph {
  OpGraph graph;
  std::vector<std::string> notes;  ///< e.g. how KV heads that do not divide are placed
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
/// weight. Fused attention shards by batch and heads. K KV heads that do not divide a tensor axis
/// of Y devices but divide Y split it into K groups of Y/K devices: each KV head is replicated on
/// its group (the devices of its query heads), and a KV cache is split "heads first, then batch"
/// (K ways by KV head, Y/K by sequence, when the sequences divide), with the attention that reads
/// it and all-to-alls of its queries and output; other KV heads that do not divide are replicated
/// (noted). A sharded axis that does not divide is an InputError naming it.
ShardedGraph shard_graph(const OpGraph& graph, const Plan& plan);

}  // namespace rsim
