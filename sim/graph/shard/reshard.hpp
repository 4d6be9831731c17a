// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/op.hpp"
#include "sim/graph/shard/sharder.hpp"

#include <vector>

namespace rsim::shard {

// The collective that turns a producer's output layout into the layout its consumer needs:
// sharded → replicated is an all-gather; sharded on another axis is an all-to-all; replicated →
// sharded is a local slice (free).
std::vector<Op> reshard(const Tensor& produced, const Layout& from, const Op& consumer,
                        const Tensor& needed, const Layout& to, const Sharder& sharder);

}  // namespace rsim::shard
