// SPDX-License-Identifier: MIT
#pragma once
// Where a training plan's mesh axes go on the hardware's network tiers.

#include "sim/explore/search.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/plan.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rsim {

// The mesh axes, each on the innermost tier while it divides what is left of that tier's domain
// (NVLink node, ICI slice), in the plan's placement order; placement 0 is Megatron-LM's rank
// order (tensor innermost, then data, pipeline stages outermost). An axis larger than the domain
// while no other axis has taken any of it spans the innermost tier and the next ("nvlink+ib":
// its collectives are hierarchical, NCCL-style); an axis that does not fit what is left goes on
// the next tier whole (pessimistic: a hierarchical collective would keep part of its traffic
// inside the node).
struct PlacedMesh {
  std::vector<MeshAxis> axes;  ///< every axis, for make_plan
  std::string parse;           ///< every axis, as `plan: {mesh: …}` writes them (run_args)
  std::string display;         ///< the axes over more than one device
};

PlacedMesh place_mesh(const std::vector<NetworkTier>& tiers, const TrainingPlan& plan);

/// The placements of t × p × d that put some axis on another tier: orders that place every axis
/// where an earlier order did are the same plan, counted once (on one node every order is).
std::vector<std::int64_t> distinct_placements(const Roofs& roofs, std::int64_t tensor,
                                              std::int64_t pipeline, std::int64_t data);

}  // namespace rsim
