// SPDX-License-Identifier: MIT
#include "sim/analysis/analysis.hpp"

#include "sim/analysis/schedule.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rsim {
namespace {

std::vector<GroupCritical> group_criticals(const OpGraph& graph, const CostTable& table,
                                           const Roofs& roofs) {
  std::vector<GroupCritical> result;
  for (const OpGraph::Stage& stage : graph.stages) {
    for (std::string_view group : matmul_groups()) {
      std::vector<const Op*> ops;
      for (OpGraph::Vertex vertex : table.order) {
        const Op& op = graph.op(vertex);
        if (op.kind == OpKind::matmul && op.stage == stage.name && op.group == group) {
          ops.push_back(&op);
        }
      }
      if (!ops.empty()) {
        result.push_back({stage.name, std::string(group), critical_token_batch(ops, roofs)});
      }
    }
  }
  return result;
}

std::optional<double> critical_width(const OpGraph& graph, const CostTable& table) {
  std::vector<std::size_t> row_of(graph.size(), 0);
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    row_of[table.order[row]] = row;
  }
  std::optional<double> widest;
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const Op& op = graph.op(table.order[row]);
    if (op.kind != OpKind::matmul || !op.inputs.front().has_axis("embed")) {
      continue;
    }
    for (auto edge :
         boost::make_iterator_range(boost::out_edges(table.order[row], graph.graph()))) {
      const OpGraph::Vertex target = boost::target(edge, graph.graph());
      const Op& next = graph.op(target);
      // The all-reduce of this matmul's partial sums (an activation's, or a weight gradient's).
      const bool partial_sums =
          next.role == CollectiveRole::tensor || next.role == CollectiveRole::gradient_reduction;
      if (next.kind != OpKind::collective || next.collective.kind != CollectiveKind::all_reduce ||
          !partial_sums) {
        continue;
      }
      double local_width = 0.0;
      for (const Axis& axis : op.inputs.front().axes) {
        local_width = axis.name == "embed" ? static_cast<double>(axis.size) : local_width;
      }
      const double devices = static_cast<double>(next.collective.axes.front());
      const double t_math = table.times(static_cast<Eigen::Index>(row), CostTable::kMathColumn);
      const double t_net =
          table.times(static_cast<Eigen::Index>(row_of[target]), CostTable::kNetworkColumn);
      if (t_math > 0.0) {
        const double width = local_width * devices * t_net / t_math;
        widest = widest ? std::max(*widest, width) : width;
      }
    }
  }
  return widest;
}

// The schedule choices a scenario can make on this plan and hardware.
void check_schedule(const Scenario& scenario, const Roofs& roofs) {
  const Training& training = scenario.workload.training;
  if (training.offload.any() && !roofs.host_memory) {
    throw InputError(
        fmt::format("workload.offload: {} has no host memory to offload to", roofs.hardware));
  }
  const std::int64_t stages = pipeline_stages(scenario.plan);
  if (training.pipeline_interleave > 1 && training.microbatches % stages != 0) {
    throw InputError(fmt::format(
        "workload.pipeline_interleave: interleaving needs the microbatches divisible by the "
        "pipeline stages ({} microbatches over {} stages)",
        training.microbatches, stages));
  }
}

}  // namespace

Roofs scenario_roofs(const Scenario& scenario, std::string_view mode, const RoofOverrides& extra) {
  RoofOverrides overrides = scenario.roof_overrides;
  overrides.peaks.insert(overrides.peaks.end(), extra.peaks.begin(), extra.peaks.end());
  overrides.bandwidths.insert(overrides.bandwidths.end(), extra.bandwidths.begin(),
                              extra.bandwidths.end());
  return resolve_roofs(scenario.hardware, mode.empty() ? std::string_view(scenario.mode) : mode,
                       overrides);
}

ShardedGraph planned_graph(const Scenario& scenario) {
  ShardedGraph planned{build_graph(scenario), {}, 1.0};
  if (scenario.plan.devices() > 1) {
    try {
      planned = shard_graph(planned.graph, scenario.plan);
    } catch (const PlanError& error) {
      // A split found not to divide keeps the position of the file's `plan:` (issue 23 #7).
      if (!scenario.plan.written_at) {
        throw;
      }
      throw PlanError(error.problem(), format_diagnostic(*scenario.plan.written_at,
                                                         fmt::format("'plan': {}", error.what())));
    }
  }
  return planned;
}

RunResult analyze_step(Scenario scenario, Roofs roofs, TileCache* cache) {
  ShardedGraph planned = planned_graph(scenario);
  OpGraph graph = std::move(planned.graph);
  std::vector<std::string> notes;
  // What the model file approximates (an import's notes), then the plan's notes.
  for (const StageSpec& stage : scenario.model.stages) {
    for (const std::string& note : stage.component.notes) {
      notes.push_back(fmt::format("{}: {}", stage.component.name, note));
    }
  }
  notes.insert(notes.end(), planned.notes.begin(), planned.notes.end());
  const double weight_fraction = planned.weight_fraction;
  const std::vector<OpGraph::Vertex> order = graph.topological_order();
  CostTable table = cost_graph(graph, order, roofs, scenario.tiles, cache);
  std::vector<std::optional<CriticalBatch>> critical;
  critical.reserve(table.order.size());
  for (OpGraph::Vertex vertex : table.order) {
    critical.push_back(critical_token_batch(graph.op(vertex), roofs));
  }
  Bounds bounds = compute_bounds(graph, table);
  std::vector<AxisThreshold> thresholds;
  std::optional<FsdpTpSplit> split;
  if (scenario.workload.phase == Phase::train) {
    thresholds = training_thresholds(scenario, graph, table, roofs);
    split = fsdp_tp_split(scenario, graph, table, roofs);
  }
  ParameterCount parameters = count_parameters(scenario.model);
  std::vector<GroupCritical> groups = group_criticals(graph, table, roofs);
  Footprint memory = weights_and_cache(scenario, graph, order, parameters, weight_fraction, roofs);
  std::optional<TrainingMemory> training;
  if (scenario.workload.phase == Phase::train) {
    training = training_memory(scenario, graph, parameters, weight_fraction);
    memory.activations = training->saved_activations;
    memory.gradients = training->gradients;
    memory.optimizer_state = training->optimizer_state;
  }
  // The schedule (pipeline bubble and interleave, overlaps, offloading) on top of the ops.
  std::optional<PipelineSchedule> pipeline;
  std::optional<ScheduleInputs> schedule;
  std::optional<StepTimes> step;
  if (scenario.workload.phase == Phase::train || pipeline_stages(scenario.plan) > 1) {
    check_schedule(scenario, roofs);
    schedule = schedule_inputs(scenario, graph, table, bounds, memory, training, parameters, roofs);
    step.emplace();
    pipeline = apply_schedule(*schedule, scenario, bounds, memory, *step);
  }
  const std::optional<double> width = critical_width(graph, table);
  std::optional<DecodeCritical> decode;
  std::optional<DecodeRequest> request;
  if (scenario.workload.phase == Phase::decode) {
    decode = decode_critical(scenario, graph, table, roofs);
  }
  return RunResult{std::move(scenario),
                   std::move(roofs),
                   std::move(graph),
                   std::move(table),
                   std::move(critical),
                   std::move(bounds),
                   parameters,
                   std::move(groups),
                   memory,
                   std::move(notes),
                   width,
                   decode,
                   request,
                   pipeline,
                   std::move(thresholds),
                   split,
                   training,
                   std::move(schedule),
                   step};
}

}  // namespace rsim
