// SPDX-License-Identifier: MIT
#include "sim/graph/shard/pipeline.hpp"

#include "sim/base/error.hpp"
#include "sim/graph/shard/collective_op.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace rsim::shard {

std::int64_t busiest_stage_layers(const OpGraph::Stage& stage, std::int64_t pipeline) {
  const std::int64_t chunks = pipeline * stage.pipeline_chunks;
  return stage.pipeline_chunks * ((stage.layers + chunks - 1) / chunks);
}

void place_pipeline(ShardedGraph& sharded, const Plan& plan, const OpGraph::Vertex boundary,
                    const Bytes boundary_bytes, const bool replicated) {
  const std::optional<std::string> axis = plan.pipeline_axis();
  if (!axis) {
    return;
  }
  const MeshAxis& mesh = *plan.find_axis(*axis);
  if (mesh.size == 1) {
    return;
  }
  OpGraph& graph = sharded.graph;
  bool training = false;
  // A stage whose layers p·v does not divide: each layer op runs count / L times per layer, on
  // the busiest device's layers (one kind of layer only: a kind of some layers, like DeepSeek-V3's
  // 3 dense of 61, would need where the split puts them).
  std::vector<const OpGraph::Stage*> uneven;
  for (const OpGraph::Stage& stage : graph.stages) {
    if (stage.layers % (mesh.size * stage.pipeline_chunks) == 0) {
      continue;
    }
    const std::int64_t busiest = busiest_stage_layers(stage, mesh.size);
    for (OpGraph::Vertex vertex = 0; vertex < graph.size(); ++vertex) {
      const Op& op = graph.op(vertex);
      if (op.block == Block::layer && op.stage == stage.name && op.count % stage.layers != 0) {
        throw PlanError(
            PlanProblem::does_not_divide,
            fmt::format(
                "plan '{}': {} layers of stage '{}' do not split over mesh axis '{}' ({} "
                "stages{}), and its layers are not all alike (op '{}' runs in some of "
                "them): an uneven split needs one kind of layer",
                plan.name, stage.layers, stage.name, mesh.name, mesh.size,
                stage.pipeline_chunks > 1 ? fmt::format(" × {} chunks", stage.pipeline_chunks) : "",
                op.name));
      }
    }
    uneven.push_back(&stage);
    sharded.notes.push_back(fmt::format(
        "{}: {} layers do not split evenly over {} pipeline stages{}; the busiest holds {} "
        "(Megatron's uneven first and last stages), and rsim costs it",
        stage.name, stage.layers, mesh.size,
        stage.pipeline_chunks > 1 ? fmt::format(" × {} chunks", stage.pipeline_chunks) : "",
        busiest));
  }
  for (OpGraph::Vertex vertex = 0; vertex < graph.size(); ++vertex) {
    Op& op = graph.mutable_op(vertex);
    if (op.block == Block::layer) {
      const auto stage = std::find_if(uneven.begin(), uneven.end(), [&](const auto* candidate) {
        return candidate->name == op.stage;
      });
      if (stage != uneven.end()) {
        op.count = op.count / (*stage)->layers * busiest_stage_layers(**stage, mesh.size);
      } else if (op.count % mesh.size != 0) {
        // Layers of one kind (DeepSeek-V3's 3 dense of 61, Gemma 2's windowed half) split too.
        throw PlanError(PlanProblem::does_not_divide,
                        fmt::format("plan '{}': the {} runs of {}'s layer op '{}' do not split "
                                    "over mesh axis '{}' ({} stages)",
                                    plan.name, op.count, op.stage, op.name, mesh.name, mesh.size));
      } else {
        op.count /= mesh.size;
      }
    }
    training = training || op.pass == Pass::backward;
  }
  const Op last = graph.op(boundary);
  // Scatter/gather: the part each tensor-axis device sends, and the axis that gathers it.
  const MeshAxis* tensor = nullptr;
  if (replicated) {
    const std::optional<std::string> tensor_name = plan.mesh_axis_for(logical_axis::mlp, false);
    tensor = tensor_name ? plan.find_axis(*tensor_name) : nullptr;
    tensor = tensor != nullptr && tensor->size > 1 ? tensor : nullptr;
  }
  const Bytes sent =
      tensor != nullptr ? boundary_bytes / static_cast<double>(tensor->size) : boundary_bytes;
  for (const OpGraph::Stage& stage : graph.stages) {
    if (stage.name != last.stage) {
      continue;
    }
    for (const Pass pass : {Pass::forward, Pass::backward}) {
      if (pass == Pass::backward && !training) {
        continue;
      }
      const std::string direction = pass == Pass::forward ? "send_activations" : "send_gradients";
      Op send = collective_op(last, CollectiveKind::send_recv, CollectiveRole::pipeline_send,
                              direction, sent, mesh, plan);
      send.name = "pipeline." + direction;
      send.collective.axes = {2};  // neighbouring stages: one hop
      // Once per microbatch here; the v − 1 further chunks' sends are the schedule's
      // (analysis/schedule.hpp), which derives every v from this one costing.
      send.count = stage.steps * stage.microbatches;
      send.pass = pass;
      if (tensor != nullptr) {
        // The receiving stage puts the t parts back together: an all-gather of the whole
        // tensor over the tensor axis, as often as the send (a pipeline send's role: it repeats
        // with the chunks too).
        Op gather = collective_op(last, CollectiveKind::all_gather, CollectiveRole::pipeline_send,
                                  direction + ".gather", boundary_bytes, *tensor, plan);
        gather.name = send.name + ".gather";
        gather.count = send.count;
        gather.pass = pass;
        graph.add_op(std::move(send));
        graph.add_op(std::move(gather));
        continue;
      }
      graph.add_op(std::move(send));
    }
  }
}

}  // namespace rsim::shard
