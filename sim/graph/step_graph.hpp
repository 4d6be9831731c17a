// SPDX-License-Identifier: MIT
#pragma once
// The graph of one step of a scenario: the forward graph, and for training its recompute,
// backward and optimizer passes (backward.hpp).

#include "sim/graph/graph.hpp"
#include "sim/spec/scenario.hpp"

namespace rsim {

/// Builds the op graph of a scenario's model for its workload, precision and fusion.
OpGraph build_graph(const Scenario& scenario);

}  // namespace rsim
