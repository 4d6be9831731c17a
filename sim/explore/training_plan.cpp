// SPDX-License-Identifier: MIT
// A training plan's names: its preset, sharding, offloading and label, and the arguments that
// make `rsim run` reproduce it.
#include "sim/explore/search.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace rsim {

std::string_view TrainingPlan::preset() const {
  if (zero_stage == 3) {
    return sequence_parallel ? "zero3_3d_sp" : "zero3_3d";
  }
  return sequence_parallel ? "megatron_3d_sp" : "megatron_3d";
}

std::string TrainingPlan::sharding() const {
  return zero_stage == 1 || zero_stage == 2 ? fmt::format("{}+zero{}", preset(), zero_stage)
                                            : std::string(preset());
}

const std::string& TrainingPlan::placement_order() const {
  return training_axis_orders().at(static_cast<std::size_t>(placement));
}

std::string TrainingPlan::offloaded() const {
  std::vector<std::string_view> parts;
  for (const auto& [offloaded, name] :
       {std::pair{offload_weights, "weights"}, std::pair{offload_activations, "activations"},
        std::pair{offload_optimizer, "optimizer"}}) {
    if (offloaded) {
      parts.emplace_back(name);
    }
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, "+"));
}

std::vector<std::string> run_args(const TrainingCandidate& candidate) {
  const TrainingPlan& plan = candidate.plan;
  std::vector<std::string_view> offloaded;
  for (const auto& [chosen, name] : {std::pair{plan.offload_weights, "weights"},
                                     std::pair{plan.offload_activations, "activations"},
                                     std::pair{plan.offload_optimizer, "optimizer"}}) {
    if (chosen) {
      offloaded.emplace_back(name);
    }
  }
  const auto flag = [](bool value) { return value ? "true" : "false"; };
  return {"--set", "plan=" + candidate.plan_yaml,
          "--set", fmt::format("workload.microbatches={}", plan.microbatches),
          "--set", fmt::format("workload.recompute={}", to_string(plan.recompute)),
          "--set", fmt::format("workload.pipeline_interleave={}", plan.interleave),
          "--set", fmt::format("workload.overlap_gradients={}", flag(plan.overlap_gradients)),
          "--set", fmt::format("workload.overlap_tensor={}", flag(plan.overlap_tensor)),
          "--set", fmt::format("workload.offload=[{}]", fmt::join(offloaded, ", "))};
}

std::string TrainingPlan::label() const {
  const bool offloads = offload_weights || offload_activations || offload_optimizer;
  return fmt::format("t{} p{} d{} {} m{} {}{}{}{}{}{}", tensor, pipeline, data, sharding(),
                     microbatches, to_string(recompute),
                     pipeline > 1 ? fmt::format(" v{}", interleave) : "",
                     overlap_gradients ? " overlap" : "", overlap_tensor ? " tp-overlap" : "",
                     offloads ? " offload:" + offloaded() : "",
                     placement != 0 ? " place:" + placement_order() : "");
}

}  // namespace rsim
