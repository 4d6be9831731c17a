// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/op.hpp"
#include "sim/graph/shard/sharder.hpp"

#include <vector>

namespace rsim::shard {

// One op of the graph as a device runs it, with the collectives around it.
struct ShardedOp {
  std::vector<Op> prefetch;  // weight gathers: they need no activation, so they can run early
  std::vector<Op> before;    // activation gathers the op waits for
  Op op;                     // the per-device op
  std::vector<Op> after;     // collectives that finish its output
  Layout input_layout;       // how its first input must arrive (by the rules)
  Layout output_layout;      // how its first output is really laid out
};

// The four sharded-matmul cases, per mesh axis, on the activation (0) and weight (1) operands.
ShardedOp shard_matmul(const Op& op, const Sharder& sharder);

// An op whose tensors are all local: each takes the layout the rules give it.
ShardedOp shard_local(const Op& op, const Sharder& sharder, bool attention = false);

// Fused attention: local tensors over whole sequences; its shape follows the query's batch and
// heads.
ShardedOp shard_attention(const Op& op, const Sharder& sharder);

// An MoE dispatch ([batch, seq, embed] tokens → [experts, expert_tokens, embed] rows) or
// combine (the reverse). Each device routes the tokens it holds. Over a mesh axis that splits the
// tokens and also the experts, the rows cross the devices in an all-to-all (after the dispatch,
// before the combine: the scaling book's two AllToAlls per MoE block), V = every device's rows
// together = T·k·D·bytes over the axis. Over a mesh axis that splits the tokens but not the
// experts, each device keeps its own tokens' rows (the layout splits expert_tokens there).
ShardedOp shard_routing(const Op& op, const Sharder& sharder);

}  // namespace rsim::shard
