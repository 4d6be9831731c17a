// SPDX-License-Identifier: MIT
#include "sim/explore/mesh_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace rsim {
namespace {

using AxisOrder = std::array<std::size_t, 3>;  // indices into {model, data, stage}
constexpr std::array<std::string_view, 3> kAxisNames{"model", "data", "stage"};
constexpr std::array<AxisOrder, 6> kAxisOrders{
    {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};

}  // namespace

PlacedMesh place_mesh(const std::vector<NetworkTier>& tiers, const TrainingPlan& plan) {
  // One device without a network (Thor): every axis has size 1 and names no tier.
  static const NetworkTier kNoNetwork = [] {
    NetworkTier tier;
    tier.name = "none";
    return tier;
  }();
  const NetworkTier& inner = tiers.empty() ? kNoNetwork : tiers.front();
  std::int64_t room = inner.devices;
  const std::array<std::int64_t, 3> sizes{plan.tensor, plan.data, plan.pipeline};
  std::array<std::string, 3> networks;
  const AxisOrder& order = kAxisOrders.at(static_cast<std::size_t>(plan.placement));
  for (const std::size_t axis : order) {
    const std::int64_t size = sizes.at(axis);
    std::string& network = networks.at(axis);
    network = inner.name;
    if (size > 1 && tiers.size() > 1 && inner.devices > 0) {
      if (size <= room && room % size == 0) {
        room /= size;
      } else if (room == inner.devices) {
        network = inner.name + "+" + tiers[1].name;
        room = 1;
      } else {
        network = tiers[1].name;
      }
    }
  }
  // Printed in one order whatever the placement: the text names a plan.
  std::vector<std::string> all;
  std::vector<std::string> shown;
  for (std::size_t axis = 0; axis < kAxisNames.size(); ++axis) {
    const std::string text =
        fmt::format("{}: \"{} over {}\"", kAxisNames.at(axis), sizes.at(axis), networks.at(axis));
    all.push_back(text);
    if (sizes.at(axis) > 1) {
      shown.push_back(text);
    }
  }
  std::vector<MeshAxis> axes;
  for (std::size_t axis = 0; axis < kAxisNames.size(); ++axis) {
    axes.push_back({std::string(kAxisNames.at(axis)), sizes.at(axis), networks.at(axis)});
  }
  return {std::move(axes), fmt::format("{}", fmt::join(all, ", ")),
          fmt::format("{}", fmt::join(shown, ", "))};
}

std::vector<std::int64_t> distinct_placements(const Roofs& roofs, std::int64_t tensor,
                                              std::int64_t pipeline, std::int64_t data) {
  std::vector<std::int64_t> placements;
  std::vector<std::string> meshes;
  TrainingPlan plan;
  plan.tensor = tensor;
  plan.pipeline = pipeline;
  plan.data = data;
  for (std::size_t order = 0; order < kAxisOrders.size(); ++order) {
    plan.placement = static_cast<std::int64_t>(order);
    std::string mesh = place_mesh(roofs.network, plan).parse;
    if (std::find(meshes.begin(), meshes.end(), mesh) == meshes.end()) {
      meshes.push_back(std::move(mesh));
      placements.push_back(plan.placement);
    }
  }
  return placements;
}

const std::vector<std::string>& training_axis_orders() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> orders;
    for (const AxisOrder& order : kAxisOrders) {
      orders.push_back(fmt::format("{}>{}>{}", kAxisNames.at(order[0]), kAxisNames.at(order[1]),
                                   kAxisNames.at(order[2])));
    }
    return orders;
  }();
  return names;
}

}  // namespace rsim
