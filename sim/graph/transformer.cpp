// SPDX-License-Identifier: MIT
#include "sim/graph/transformer.hpp"

#include "sim/graph/stage_builder.hpp"

#include <utility>

namespace rsim {

OpGraph build_forward_graph(const Scenario& scenario) {
  OpGraph graph;
  std::optional<OpGraph::Vertex> upstream;
  std::vector<std::pair<std::string, OpGraph::Vertex>> kv_writers;
  for (const StageSpec& stage : scenario.model.stages) {
    StageBuilder builder(scenario, stage, graph);
    for (const auto& [name, writer] : kv_writers) {
      if (name == stage.attends_to) {
        builder.set_cache_source(writer);
      }
    }
    upstream = builder.build(upstream);
    if (const auto writer = builder.kv_writer()) {
      kv_writers.emplace_back(stage.name, *writer);
    }
    graph.stages.push_back({stage.name, stage.steps, stage.component.num_layers, stage.context,
                            stage.component.num_experts, scenario.workload.training.microbatches,
                            scenario.workload.training.pipeline_interleave});
  }
  return graph;
}

Op make_matmul(const MatmulShape& shape) {
  Op op;
  op.name = "matmul";
  op.stage = "matmul";
  op.block = Block::matmul;
  op.kind = OpKind::matmul;
  op.compute_path = shape.compute_path;
  const Axis batch{"batch", shape.batch};
  const Axis embed{"embed", shape.contract};
  const Axis mlp{"mlp", shape.out};
  op.inputs.push_back({"x", {batch, embed}, shape.input, TensorRole::activation});
  op.inputs.push_back({"w",
                       shape.per_batch_weights ? std::vector<Axis>{batch, embed, mlp}
                                               : std::vector<Axis>{embed, mlp},
                       shape.weights, TensorRole::weight});
  op.outputs.push_back({"y", {batch, mlp}, shape.output, TensorRole::activation});
  return op;
}

}  // namespace rsim
