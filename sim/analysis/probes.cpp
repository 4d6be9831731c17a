// SPDX-License-Identifier: MIT
#include "sim/analysis/probes.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/cost/expected.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace rsim {
namespace {

// `rsim matmul --shard` names: the contracting width D, the batch B, the output width F.
constexpr std::array kShardNames{
    Named<MatmulSharding>{MatmulSharding::none, "none"},
    Named<MatmulSharding>{MatmulSharding::contract, "d"},
    Named<MatmulSharding>{MatmulSharding::batch, "batch"},
    Named<MatmulSharding>{MatmulSharding::out, "f"},
};
}  // namespace

std::optional<MatmulSharding> parse_matmul_sharding(std::string_view name) {
  const auto sharding = find_named(name, kShardNames);
  return sharding == MatmulSharding::none ? std::nullopt : sharding;
}

std::string_view to_string(MatmulSharding sharding) { return name_of(sharding, kShardNames); }

namespace {

// The per-device share of a sharded dimension; it must divide evenly.
std::int64_t split(std::int64_t size, std::int64_t devices, std::string_view name) {
  if (size % devices != 0) {
    throw InputError(fmt::format("{} = {} does not divide over {} devices", name, size, devices));
  }
  return size / devices;
}

}  // namespace

const NetworkTier& require_network(const Roofs& roofs, std::string_view network,
                                   std::string_view flag) {
  if (const NetworkTier* tier = roofs.find_network(network)) {
    return *tier;
  }
  std::vector<std::string> names;
  for (const NetworkTier& candidate : roofs.network) {
    names.push_back(candidate.name);
  }
  throw InputError(fmt::format(
      "{} {}: {} has no network tier '{}' (tiers: {})", flag, network, roofs.hardware, network,
      names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
}

CollectiveResult analyze_collective(Collective collective, std::string_view network,
                                    const Roofs& roofs) {
  if (network.find('+') != std::string_view::npos) {
    // A hierarchy: levels of the axis over each tier (collectives.hpp), as a mesh axis spans.
    std::vector<const NetworkTier*> tiers = roofs.find_networks(network);
    if (tiers.empty()) {
      for (std::string_view rest = network; !rest.empty();) {
        const std::size_t plus = rest.find('+');
        require_network(roofs, rest.substr(0, plus), "--network");
        rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
      }
    }
    CollectiveCost cost = collective_cost(collective, tiers);
    CollectiveResult result{
        roofs.hardware, *tiers.front(), std::move(collective), std::move(cost), {}};
    result.tier.name = std::string(network);
    for (const NetworkTier* tier : tiers) {
      result.levels.push_back(*tier);
    }
    return result;
  }
  const NetworkTier& tier = require_network(roofs, network, "--network");
  collective.wraparound =
      collective.wraparound &&
      (tier.topology != Topology::torus ||
       std::all_of(collective.axes.begin(), collective.axes.end(),
                   [&](std::int64_t size) { return size == tier.wraparound_size; }));
  CollectiveCost cost = collective_cost(collective, tier);
  return CollectiveResult{roofs.hardware, tier, std::move(collective), std::move(cost), {}};
}

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs, const MatmulPlan& plan,
                            const TileChoices& tiles) {
  MatmulResult result;
  result.global = shape;
  result.plan = plan;
  MatmulShape local = shape;
  const NetworkTier* tier = nullptr;
  if (plan.devices > 1) {
    if (plan.shard == MatmulSharding::none) {
      throw InputError("--devices > 1 needs --shard d, batch or f");
    }
    tier = &require_network(roofs, plan.network, "--network");
    switch (plan.shard) {
      case MatmulSharding::contract:
        local.contract = split(shape.contract, plan.devices, "D");
        break;
      case MatmulSharding::batch:
        local.batch = split(shape.batch, plan.devices, "B");
        break;
      case MatmulSharding::out:
        local.out = split(shape.out, plan.devices, "F");
        break;
      case MatmulSharding::none:
        break;
    }
  }
  result.op = make_matmul(local);
  check_tile_tiers(tiles, roofs.memory, roofs.hardware);
  result.cost = cost_op(result.op, roofs, tiles);
  result.critical = critical_token_batch(result.op, roofs);
  if (tier != nullptr && plan.shard == MatmulSharding::contract) {
    // Each device holds partial sums of the whole [B, F] output: all-reduce them.
    Collective collective;
    collective.kind = CollectiveKind::all_reduce;
    collective.bytes = result.op.outputs.front().bytes();
    collective.axes = {plan.devices};
    collective.wraparound =
        tier->topology != Topology::torus || plan.devices == tier->wraparound_size;
    collective.in_network_reduction = plan.in_network_reduction;
    result.collective_cost = collective_cost(collective, *tier);
    result.collective = collective;
    result.t_net = result.collective_cost->time;
    result.critical_d = static_cast<double>(shape.contract) * (result.t_net / result.cost.t_math);
  }
  const OpCost& cost = result.cost;
  result.t_lower = std::max(cost.t_lower, result.t_net);
  result.t_upper = cost.t_upper + result.t_net;
  result.t_expected = Seconds(expected_device_time(result.op, cost, roofs));
  if (result.collective) {
    result.t_expected += Seconds(expected_collective_time(*result.collective, {tier}));
  }
  result.bound = result.t_net > cost.t_lower ? Bound::network : cost.bound;
  result.roofs = std::move(roofs);
  return result;
}

}  // namespace rsim
