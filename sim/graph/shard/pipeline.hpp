// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/graph.hpp"
#include "sim/graph/shard/shard.hpp"
#include "sim/spec/plan.hpp"

namespace rsim::shard {

/// The layers of `stage` the busiest device of a `pipeline`-stage axis holds: v·⌈L / (p·v)⌉ for v
/// chunks per stage, L/p where p·v divides L. Megatron-LM splits the rest unevenly
/// (--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers): Llama 3 405B's 126
/// layers ran on 16 stages with one layer fewer on the first and the last ("The Llama 3 Herd of
/// Models", §3.3.2), 8 on the busiest. The busiest stage sets the pipeline's pace and memory.
std::int64_t busiest_stage_layers(const OpGraph::Stage& stage, std::int64_t pipeline);

// Pipeline parallelism: the rule `layers: AXIS` gives each device of AXIS (p stages) L/p of the
// layers, so every op of the layer blocks runs count/p times per device (where p·v does not divide
// L, the busiest device's share: busiest_stage_layers); a training step sends
// each microbatch's activations forward and its gradients back across every stage boundary
// (with v interleaved chunks per stage, v times: Narayanan et al. 2021, §2.2). The bubble is the
// analysis's: it needs the costed times. A boundary tensor whole on every device of the tensor
// axis (`replicated`: tensor parallelism without sequence parallelism) is sent by scatter/gather
// (Narayanan et al. 2021, §4.1): each of the t devices sends its 1/t, and the receiving stage
// all-gathers the t parts over the tensor axis (NVLink).
void place_pipeline(ShardedGraph& sharded, const Plan& plan, OpGraph::Vertex boundary,
                    Bytes boundary_bytes, bool replicated);

}  // namespace rsim::shard
