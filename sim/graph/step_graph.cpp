// SPDX-License-Identifier: MIT
#include "sim/graph/step_graph.hpp"

#include "sim/graph/backward.hpp"
#include "sim/graph/transformer.hpp"

namespace rsim {

OpGraph build_graph(const Scenario& scenario) {
  OpGraph graph = build_forward_graph(scenario);
  if (scenario.workload.phase == Phase::train) {
    add_training_passes(graph, scenario);
  }
  return graph;
}

}  // namespace rsim
