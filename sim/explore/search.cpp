// SPDX-License-Identifier: MIT
#include "sim/explore/search.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <tuple>

namespace rsim {

std::string plan_signature(const Plan& plan) {
  std::vector<std::string> groups;
  for (const auto* rules : {&plan.rules, &plan.weight_rules}) {
    std::vector<std::string> parts;
    for (const auto& [logical, axis_name] : *rules) {
      const MeshAxis* axis = plan.find_axis(axis_name);
      parts.push_back(axis == nullptr
                          ? logical + "→"
                          : fmt::format("{}→{} over {}", logical, axis->size, axis->network));
    }
    std::sort(parts.begin(), parts.end());
    groups.push_back(fmt::format("{}", fmt::join(parts, ", ")));
  }
  return fmt::format("{} devices; rules {}; weights {}; zero {}; sharp {}; vocab padding {}",
                     plan.devices(), groups[0], groups[1], plan.zero_stage,
                     plan.in_network_reduction, plan.vocab_padding);
}

namespace {

constexpr std::array kObjectiveNames{
    Named<SearchObjective>{SearchObjective::latency, "latency"},
    Named<SearchObjective>{SearchObjective::throughput, "throughput"},
    Named<SearchObjective>{SearchObjective::cost, "cost"},
};

// The network an axis of `size` devices goes over when `used` devices of the innermost tier are
// taken by the axes placed before it: the innermost tier while it has room, then the next tier
// (the inner one full), else the hierarchy of both ("nvlink+ib").
std::string place(const std::vector<NetworkTier>& tiers, std::int64_t size, std::int64_t used) {
  const NetworkTier& inner = tiers.front();
  if (inner.devices == 0 || used * size <= inner.devices || tiers.size() == 1) {
    return inner.name;
  }
  if (used >= inner.devices) {
    return tiers[1].name;
  }
  return inner.name + "+" + tiers[1].name;
}

struct MeshShape {
  std::int64_t data = 1;
  std::int64_t model = 1;
  std::int64_t stage = 1;  ///< pipeline stages
};

// The presets a mesh shape takes: one axis → the one-axis presets (the axis renamed; expert
// parallelism for a mixture of experts), two → tensor × data; one device → single. With
// pipeline stages: the pipeline preset of the other axes (stages alone, with tensor
// parallelism, with data parallelism, or all three).
std::vector<std::string_view> presets_for(const MeshShape& shape, bool moe) {
  if (shape.stage > 1) {
    if (shape.data == 1) {
      return {shape.model == 1 ? "pipeline" : "pipeline_tp"};
    }
    return {shape.model == 1 ? "pipeline_dp" : "megatron_3d"};
  }
  if (shape.data == 1 && shape.model == 1) {
    return {"single"};
  }
  if (shape.data == 1) {
    if (moe) {
      return {"megatron_tp", "sequence_parallel", "shard_d", "shard_batch", "expert_parallel"};
    }
    return {"megatron_tp", "sequence_parallel", "shard_d", "shard_batch"};
  }
  if (shape.model == 1) {
    return {"data_parallel", "fsdp"};
  }
  return {"megatron_tp_dp"};
}

// The mesh of a shape: its axes (data, then model, as they take the innermost tier) and their
// text, "data: \"4 over ib\", model: \"8 over nvlink\"".
struct MeshChoice {
  std::vector<MeshAxis> axes;
  std::string text;
};

// A mesh as the search prints it: data: "4 over ib", model: "8 over nvlink".
std::string mesh_text(const std::vector<MeshAxis>& axes) {
  std::vector<std::string> texts;
  for (const MeshAxis& axis : axes) {
    texts.push_back(fmt::format("{}: \"{} over {}\"", axis.name, axis.size, axis.network));
  }
  return fmt::format("{}", fmt::join(texts, ", "));
}

// Tensor parallelism takes the innermost tier first, then the pipeline stages, then data
// parallelism (Megatron-LM's placement: stages over the slower links once the tensor axis
// fills the NVLink domain).
MeshChoice mesh_choice(const std::vector<NetworkTier>& tiers, const MeshShape& shape) {
  MeshChoice mesh;
  const auto inside = [&](std::int64_t devices) {
    return std::min<std::int64_t>(devices,
                                  tiers.front().devices > 0 ? tiers.front().devices : devices);
  };
  if (shape.data > 1) {
    const std::int64_t inner = shape.model * shape.stage;
    mesh.axes.push_back(
        {"data", shape.data, place(tiers, shape.data, inner > 1 ? inside(inner) : 1)});
  }
  if (shape.stage > 1) {
    mesh.axes.push_back({"stage", shape.stage, place(tiers, shape.stage, inside(shape.model))});
  }
  if (shape.model > 1) {
    mesh.axes.push_back({"model", shape.model, place(tiers, shape.model, 1)});
  }
  mesh.text = mesh_text(mesh.axes);
  return mesh;
}

class Searcher {
 public:
  Searcher(const Scenario& scenario, const Roofs& roofs, RankBy rank_by)
      : scenario_(scenario), roofs_(roofs), rank_by_(rank_by) {}

  /// A preset on a generated mesh; returns the plan's signature (see plan_signature) when it
  /// could be made.
  std::optional<std::string> evaluate(std::string_view preset, const MeshChoice& mesh_choice,
                                      std::int64_t devices, std::int64_t total_devices,
                                      SearchResult& result) const {
    std::optional<Plan> plan;
    try {
      plan = preset == "single" ? Plan{} : make_plan(preset, mesh_choice.axes, scenario_.hardware);
    } catch (const PlanError& error) {
      ++result.seen;
      result.rejected.push_back(
          {std::string(preset), mesh_choice.text, rejection_reason(error.problem()), error.what()});
      return std::nullopt;
    }
    evaluate(std::string(preset), mesh_choice.text, *plan, devices, total_devices, result);
    return plan_signature(*plan);
  }

  /// One plan, ranked or rejected with its reason.
  void evaluate(const std::string& preset, const std::string& mesh, const Plan& plan,
                std::int64_t devices, std::int64_t total_devices, SearchResult& result) const {
    ++result.seen;
    Scenario scenario = scenario_;
    try {
      scenario.plan = plan;
      const RunResult run = analyze(std::move(scenario), roofs_);
      if (!run.footprint.fits()) {
        result.rejected.push_back(
            {preset, mesh, RejectionReason::memory,
             fmt::format("needs {} per device, has {}",
                         format_quantity(run.footprint.total().si(), Dimension::bytes),
                         format_quantity(run.footprint.capacity.si(), Dimension::bytes))});
        return;
      }
      SearchCandidate candidate{preset,           mesh,          devices, total_devices / devices,
                                run.bounds.total, run.footprint, 0.0,     false,
                                plan.mesh};
      candidate.sequences_per_device_s =
          static_cast<double>(run.scenario.workload.batch) /
          (ranked_time(run.bounds.total, rank_by_).si() * static_cast<double>(devices));
      candidate.request = run.request;
      result.ranked.push_back(std::move(candidate));
    } catch (const PlanError& error) {
      result.rejected.push_back({preset, mesh, rejection_reason(error.problem()), error.what()});
    } catch (const InputError& error) {
      result.rejected.push_back({preset, mesh, RejectionReason::invalid_plan, error.what()});
    }
  }

 private:
  const Scenario& scenario_;
  const Roofs& roofs_;
  RankBy rank_by_;
};

void rank(SearchResult& result) {
  const bool latency = result.objective == SearchObjective::latency;
  const auto time = [&](const SearchCandidate& candidate) {
    return ranked_time(candidate.total, result.rank_by).si();
  };
  std::sort(result.ranked.begin(), result.ranked.end(),
            [&](const SearchCandidate& left, const SearchCandidate& right) {
              const auto key = [&](const SearchCandidate& candidate) {
                // The ranked time (by default the expected: collective latency, kernel
                // efficiency) first, then the bounds.
                return std::make_tuple(
                    latency ? time(candidate) : -candidate.sequences_per_device_s,
                    candidate.total.t_lower.si(), candidate.total.t_upper.si(), candidate.preset,
                    candidate.mesh);
              };
              return key(left) < key(right);
            });
  for (SearchCandidate& candidate : result.ranked) {
    candidate.pareto =
        std::none_of(result.ranked.begin(), result.ranked.end(), [&](const SearchCandidate& other) {
          const bool faster_or_same = time(other) <= time(candidate);
          const bool more_or_same =
              other.sequences_per_device_s >= candidate.sequences_per_device_s;
          const bool strictly = time(other) < time(candidate) ||
                                other.sequences_per_device_s > candidate.sequences_per_device_s;
          return faster_or_same && more_or_same && strictly;
        });
  }
}

constexpr std::array kReasonNames{
    Named<RejectionReason>{RejectionReason::does_not_divide, "does not divide the model"},
    Named<RejectionReason>{RejectionReason::exceeds_domain, "mesh exceeds a network domain"},
    Named<RejectionReason>{RejectionReason::uneven_hierarchy, "hierarchy does not split evenly"},
    Named<RejectionReason>{RejectionReason::invalid_plan, "invalid plan"},
    Named<RejectionReason>{RejectionReason::memory, "does not fit in memory"},
    Named<RejectionReason>{RejectionReason::host_memory, "does not fit in host memory"},
    Named<RejectionReason>{RejectionReason::mesh_tiers, "mesh does not fit the tiers"},
    Named<RejectionReason>{RejectionReason::layers, "layers do not divide over the pipeline"},
    Named<RejectionReason>{RejectionReason::batch, "batch does not divide into microbatches"},
    Named<RejectionReason>{RejectionReason::interleave, "interleaving needs m divisible by p"},
};

}  // namespace

std::string_view to_string(RejectionReason reason) { return name_of(reason, kReasonNames); }

RejectionReason rejection_reason(PlanProblem problem) {
  switch (problem) {
    case PlanProblem::does_not_divide:
      return RejectionReason::does_not_divide;
    case PlanProblem::exceeds_domain:
      return RejectionReason::exceeds_domain;
    case PlanProblem::uneven_hierarchy:
      return RejectionReason::uneven_hierarchy;
    case PlanProblem::unknown_tier:
    case PlanProblem::unknown_preset:
    case PlanProblem::missing_mesh_axis:
    case PlanProblem::zero_stage:
      break;
  }
  return RejectionReason::invalid_plan;
}

std::vector<std::int64_t> divisors(std::int64_t value) {
  // Pairs d and value/d up to √value: 2^24 devices take 4,096 steps, not 16.7 million.
  std::vector<std::int64_t> small;
  std::vector<std::int64_t> large;
  for (std::int64_t divisor = 1; divisor <= value / divisor; ++divisor) {
    if (value % divisor == 0) {
      small.push_back(divisor);
      if (divisor != value / divisor) {
        large.push_back(value / divisor);
      }
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

void check_search_devices(std::int64_t devices) {
  if (devices < 1 || devices > kMaxSearchDevices) {
    throw InputError(fmt::format(
        "--devices {}: expected a whole number from 1 to {} (the largest clusters hold about "
        "10^5 accelerators)",
        devices, kMaxSearchDevices));
  }
}

std::optional<SearchObjective> parse_search_objective(std::string_view name) {
  return find_named(name, kObjectiveNames);
}

std::string_view to_string(SearchObjective objective) {
  return name_of(objective, kObjectiveNames);
}

std::vector<MeshPlan> plans_on_mesh(const Scenario& scenario) {
  const Plan& own = scenario.plan;
  std::vector<std::string> signatures{plan_signature(own)};
  std::vector<MeshPlan> plans{{own, {}}};
  if (own.mesh.empty()) {
    return plans;
  }
  const bool moe = std::any_of(scenario.model.stages.begin(), scenario.model.stages.end(),
                               [](const StageSpec& stage) { return stage.component.moe(); });
  for (const PlanPreset& preset : plan_presets()) {
    if (preset.name == "single" || (preset.name == "expert_parallel" && !moe)) {
      continue;
    }
    try {
      Plan plan = make_plan(preset.name, own.mesh, scenario.hardware);
      plan.vocab_padding = own.vocab_padding;
      const std::string signature = plan_signature(plan);
      const auto found = std::find(signatures.begin(), signatures.end(), signature);
      if (found == signatures.end()) {
        signatures.push_back(signature);
        plans.push_back({std::move(plan), {std::string(preset.name)}});
      } else {
        plans[static_cast<std::size_t>(found - signatures.begin())].presets.emplace_back(
            preset.name);
      }
    } catch (const PlanError&) {
      // A preset whose axes the mesh lacks (or that the mesh cannot hold) is not a candidate.
    }
  }
  return plans;
}

SearchResult search_plans(const Scenario& scenario, const Roofs& roofs, std::int64_t devices,
                          SearchObjective objective, RankBy rank_by) {
  check_search_devices(devices);
  if (devices > 1 && roofs.network.empty()) {
    throw InputError(fmt::format("{} has no network tier to spread a plan over", roofs.hardware));
  }
  SearchResult result;
  result.scenario = scenario.file;
  result.devices = devices;
  result.objective = objective;
  result.rank_by = rank_by;
  const Searcher searcher(scenario, roofs, rank_by);
  std::vector<std::string> signatures;
  const bool moe = std::any_of(scenario.model.stages.begin(), scenario.model.stages.end(),
                               [](const StageSpec& stage) { return stage.component.moe(); });
  // Devices per replica n = data × stage × model, for every n | devices and every split of n.
  for (std::int64_t replica : divisors(devices)) {
    for (std::int64_t stage : divisors(replica)) {
      for (std::int64_t model : divisors(replica / stage)) {
        const MeshShape shape{replica / stage / model, model, stage};
        const MeshChoice mesh = mesh_choice(roofs.network, shape);
        for (std::string_view preset : presets_for(shape, moe)) {
          if (auto signature = searcher.evaluate(preset, mesh, replica, devices, result)) {
            signatures.push_back(std::move(*signature));
          }
        }
      }
    }
  }
  // The scenario's own plan is always a candidate (a custom one no preset reproduces), once.
  const Plan& own = scenario.plan;
  if (own.devices() > 1 && devices % own.devices() == 0 &&
      std::find(signatures.begin(), signatures.end(), plan_signature(own)) == signatures.end()) {
    searcher.evaluate(own.name, mesh_text(own.mesh), own, own.devices(), devices, result);
  }
  rank(result);
  return result;
}

}  // namespace rsim
