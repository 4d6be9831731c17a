// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/graph.hpp"
#include "sim/graph/shard/shard.hpp"
#include "sim/spec/plan.hpp"

namespace rsim::shard {

// Pipeline parallelism: the rule `layers: AXIS` gives each device of AXIS (p stages) L/p of the
// layers, so every op of the layer blocks runs count/p times per device; a training step sends
// each microbatch's activations forward and its gradients back across every stage boundary
// (with v interleaved chunks per stage, v times: Narayanan et al. 2021, §2.2). The bubble is the
// analysis's: it needs the costed times.
void place_pipeline(ShardedGraph& sharded, const Plan& plan, OpGraph::Vertex boundary,
                    Bytes boundary_bytes);

}  // namespace rsim::shard
