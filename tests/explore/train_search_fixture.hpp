// SPDX-License-Identifier: MIT
#pragma once
// Helpers of the training plan search tests (train_search_test.cpp, train_search_overlap_test.cpp).

#include "run_fixture.hpp"
#include "sim/explore/search.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rsim::test::train_search {
// Host offloading off unless asked for: the hand counts below are of a node without it (every
// plan with host memory is one of 8 offloading choices).
inline rsim::TrainingSearchResult train_search(const std::string& file, std::int64_t devices,
                                               std::int64_t threads = 0, bool host_memory = false,
                                               std::size_t keep = 0) {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("tests/data/train/" + file));
  auto roofs = rsim::scenario_roofs(scenario, "");
  if (!host_memory) {
    roofs.host_memory.reset();
  }
  rsim::TrainingSearchOptions options;
  options.threads = threads;
  options.keep = keep;
  return rsim::search_training_plans(scenario, roofs, devices, options);
}

inline std::int64_t rejected(const rsim::TrainingSearchResult& result, const std::string& reason) {
  const auto found = result.rejected_by_reason.find(reason);
  return found == result.rejected_by_reason.end() ? 0 : found->second;
}

// A plan of the search run as a scenario of its own (every axis on one NVLink node).
inline rsim::RunResult run_plan(const std::string& file, const std::string& preset,
                                std::int64_t data, std::int64_t stages, std::int64_t microbatches,
                                const std::string& recompute, std::int64_t interleave = 1,
                                std::int64_t zero_stage = 0) {
  std::vector<std::pair<std::string, std::string>> sets{
      {"plan.preset", preset},
      {"plan.mesh.data", fmt::format("{} over nvlink", data)},
      {"plan.mesh.stage", fmt::format("{} over nvlink", stages)},
      {"workload.microbatches", std::to_string(microbatches)},
      {"workload.recompute", recompute}};
  if (interleave > 1) {
    sets.emplace_back("workload.pipeline_interleave", std::to_string(interleave));
  }
  if (zero_stage > 0) {
    sets.emplace_back("plan.zero_stage", std::to_string(zero_stage));
  }
  return rsim::test::run_train(file, sets);
}

// The ranked plan of `result` matching every dimension given (the others at their first value).
inline const rsim::TrainingCandidate& find_plan(const rsim::TrainingSearchResult& result,
                                                const rsim::TrainingPlan& wanted) {
  const auto found =
      std::find_if(result.ranked.begin(), result.ranked.end(), [&](const auto& candidate) {
        const rsim::TrainingPlan& plan = candidate.plan;
        return plan.tensor == wanted.tensor && plan.pipeline == wanted.pipeline &&
               plan.placement == wanted.placement && plan.zero_stage == wanted.zero_stage &&
               plan.sequence_parallel == wanted.sequence_parallel &&
               plan.microbatches == wanted.microbatches && plan.recompute == wanted.recompute &&
               plan.interleave == wanted.interleave &&
               plan.overlap_gradients == wanted.overlap_gradients &&
               plan.overlap_tensor == wanted.overlap_tensor &&
               plan.offload_weights == wanted.offload_weights &&
               plan.offload_activations == wanted.offload_activations &&
               plan.offload_optimizer == wanted.offload_optimizer;
      });
  REQUIRE(found != result.ranked.end());
  return *found;
}

}  // namespace rsim::test::train_search
