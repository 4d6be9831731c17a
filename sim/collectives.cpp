// SPDX-License-Identifier: MIT
#include "sim/collectives.hpp"

#include "sim/error.hpp"
#include "sim/named.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>

namespace rsim {
namespace {

constexpr std::array kKindNames{
    Named<CollectiveKind>{CollectiveKind::all_gather, "all-gather"},
    Named<CollectiveKind>{CollectiveKind::reduce_scatter, "reduce-scatter"},
    Named<CollectiveKind>{CollectiveKind::all_reduce, "all-reduce"},
    Named<CollectiveKind>{CollectiveKind::all_to_all, "all-to-all"},
    Named<CollectiveKind>{CollectiveKind::send_recv, "send-recv"},
};

std::int64_t device_count(const Collective& collective) {
  return std::accumulate(collective.axes.begin(), collective.axes.end(), std::int64_t{1},
                         std::multiplies<>());
}

// Torus, one all-gather (or reduce-scatter) pass: hops and bandwidth time.
std::pair<std::int64_t, double> torus_gather(const Collective& collective,
                                             const NetworkTier& tier) {
  const double volume = collective.bytes.si();
  const double one_way = tier.bandwidth.si();
  if (collective.axes.size() == 1) {
    const auto size = static_cast<double>(collective.axes.front());
    if (collective.wraparound) {
      // Bidirectional ring: ⌊X/2⌋ hops, each moving 2V/X at 2W (sharding.md §AllGather).
      const std::int64_t hops = collective.axes.front() / 2;
      return {hops, static_cast<double>(hops) * 2.0 * volume / (size * 2.0 * one_way)};
    }
    // No wraparound: effectively one direction, X − 1 hops of V/X at W.
    const std::int64_t hops = collective.axes.front() - 1;
    return {hops, static_cast<double>(hops) * volume / (size * one_way)};
  }
  // Several axes at once: V / Σ W_axis; latency over the longest path Σ |X_i|/2.
  std::int64_t hops = 0;
  double axis_bandwidth = 0.0;
  for (std::int64_t size : collective.axes) {
    hops += collective.wraparound ? size / 2 : size - 1;
    axis_bandwidth += collective.wraparound ? 2.0 * one_way : one_way;
  }
  return {hops, volume / axis_bandwidth};
}

CollectiveCost torus_cost(const Collective& collective, const NetworkTier& tier) {
  CollectiveCost cost;
  const double volume = collective.bytes.si();
  const auto devices = static_cast<double>(device_count(collective));
  const std::string ring = collective.wraparound ? "bidirectional ring" : "ring without wraparound";
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: {
      const auto [hops, time] = torus_gather(collective, tier);
      cost.hops = hops;
      cost.bandwidth_time = Seconds(time);
      cost.algorithm = ring;
      break;
    }
    case CollectiveKind::all_reduce: {
      // = reduce-scatter + all-gather.
      const auto [hops, time] = torus_gather(collective, tier);
      cost.hops = 2 * hops;
      cost.bandwidth_time = Seconds(2.0 * time);
      cost.algorithm = ring + " (reduce-scatter + all-gather)";
      break;
    }
    case CollectiveKind::all_to_all: {
      // V · max(X_i) / (4 · N · W_bidi); an open chain has half the bisection: twice that.
      const double largest =
          static_cast<double>(*std::max_element(collective.axes.begin(), collective.axes.end()));
      const double bidirectional = 2.0 * tier.bandwidth.si();
      const double factor = collective.wraparound ? 1.0 : 2.0;
      cost.bandwidth_time = Seconds(factor * volume * largest / (4.0 * devices * bidirectional));
      for (std::int64_t size : collective.axes) {
        cost.hops += collective.wraparound ? size / 2 : size - 1;
      }
      cost.algorithm = ring;
      break;
    }
    case CollectiveKind::send_recv:
      cost.hops = 1;
      cost.bandwidth_time = Seconds(volume / tier.bandwidth.si());
      cost.algorithm = "point to point";
      break;
  }
  return cost;
}

// Bytes each device sends: an all-gather forwards the N − 1 shards it lacks to a neighbour,
// (N − 1)/N · V; an all-reduce does that twice (once with SHARP: V); an all-to-all sends its V/N
// but the part it keeps, (N − 1)/N² · V; send/recv the message.
bool uses_switch_reduction(const Collective& collective, const NetworkTier& tier) {
  return tier.topology != Topology::torus && collective.in_network_reduction &&
         tier.in_network_reduction;
}

Bytes bytes_sent_per_device(const Collective& collective, const NetworkTier& tier) {
  const auto devices = static_cast<double>(device_count(collective));
  const double spread = (devices - 1.0) / devices;
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return collective.bytes * spread;
    case CollectiveKind::all_reduce:
      return uses_switch_reduction(collective, tier) ? collective.bytes
                                                     : collective.bytes * (2.0 * spread);
    case CollectiveKind::all_to_all:
      return collective.bytes * (spread / devices);
    case CollectiveKind::send_recv:
      return collective.bytes;
  }
  return collective.bytes;
}

CollectiveCost switch_cost(const Collective& collective, const NetworkTier& tier) {
  CollectiveCost cost;
  const double volume = collective.bytes.si();
  const double egress = tier.bandwidth.si();
  const std::int64_t count = device_count(collective);
  const auto devices = static_cast<double>(count);
  const double spread = (devices - 1.0) / devices;
  // NCCL rings take N − 1 steps per pass (gpus.md "How do collectives work on GPUs").
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      cost.bandwidth_time = Seconds(spread * volume / egress);
      cost.hops = count - 1;
      cost.algorithm = "ring through the switch";
      break;
    case CollectiveKind::all_reduce:
      if (uses_switch_reduction(collective, tier)) {
        // SHARP: each GPU sends V once and receives V once (gpus.md: T = bytes / W_egress).
        cost.bandwidth_time = Seconds(volume / egress);
        cost.hops = 2;
        cost.algorithm = "switch reduction (SHARP)";
      } else {
        cost.bandwidth_time = Seconds(2.0 * spread * volume / egress);
        cost.hops = 2 * (count - 1);
        cost.algorithm = "ring through the switch (reduce-scatter + all-gather)";
      }
      break;
    case CollectiveKind::all_to_all:
      // gpus.md: T = V · (N − 1) / (W · N²).
      cost.bandwidth_time = Seconds(volume * (devices - 1.0) / (egress * devices * devices));
      cost.hops = 1;
      cost.algorithm = "direct through the switch";
      break;
    case CollectiveKind::send_recv:
      cost.bandwidth_time = Seconds(volume / egress);
      cost.hops = 1;
      cost.algorithm = "point to point";
      break;
  }
  return cost;
}

}  // namespace

std::string_view to_string(CollectiveKind kind) { return name_of(kind, kKindNames); }

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  return find_named(name, kKindNames);
}

CollectiveCost collective_cost(const Collective& collective, const NetworkTier& tier) {
  if (collective.axes.empty()) {
    throw InputError("a collective needs at least one mesh axis");
  }
  for (std::int64_t size : collective.axes) {
    if (size < 2) {
      throw InputError(fmt::format("a collective axis needs at least 2 devices, got {}", size));
    }
  }
  if (collective.kind == CollectiveKind::send_recv && device_count(collective) != 2) {
    throw InputError("send-recv is between 2 devices");
  }
  const std::int64_t devices = device_count(collective);
  if (tier.devices > 0 && devices > tier.devices) {
    throw InputError(fmt::format("{} devices exceed the {} domain of {} devices", devices,
                                 tier.name, tier.devices));
  }
  CollectiveCost cost = tier.topology == Topology::torus ? torus_cost(collective, tier)
                                                         : switch_cost(collective, tier);
  cost.bytes_per_device = bytes_sent_per_device(collective, tier);
  if (tier.hop_latency) {
    cost.latency_time = *tier.hop_latency * static_cast<double>(cost.hops);
  }
  cost.latency_bound = cost.latency_time > cost.bandwidth_time;
  cost.time = std::max(cost.latency_time, cost.bandwidth_time);
  return cost;
}

CollectiveCost collective_cost(const Collective& collective,
                               const std::vector<const NetworkTier*>& tiers, bool describe) {
  RSIM_CHECK(!tiers.empty(), "a collective needs a network tier");
  if (tiers.size() == 1) {
    return collective_cost(collective, *tiers.front());
  }
  if (collective.axes.size() != 1) {
    throw InputError("a collective over several tiers spans one mesh axis");
  }
  std::int64_t remaining = collective.axes.front();
  std::int64_t below = 1;  // devices of the levels inside this one
  CollectiveCost total;
  std::vector<std::string> levels;
  for (std::size_t index = 0; index < tiers.size(); ++index) {
    const NetworkTier& tier = *tiers[index];
    const bool last = index + 1 == tiers.size();
    const std::int64_t size =
        last || tier.devices == 0 ? remaining : std::min(remaining, tier.devices);
    if (remaining % size != 0) {
      throw InputError(fmt::format("{} devices do not split into groups of {} on {}", remaining,
                                   size, tier.name));
    }
    remaining /= size;
    if (size > 1) {
      Collective level = collective;
      level.axes = {size};
      NetworkTier group = tier;
      group.bandwidth = tier.bandwidth * static_cast<double>(below);
      group.devices = 0;  // the domain check applied to the split above
      const CollectiveCost cost = collective_cost(level, group);
      total.hops += cost.hops;
      total.bandwidth_time = std::max(total.bandwidth_time, cost.bandwidth_time);
      total.latency_time = total.latency_time + cost.latency_time;
      total.bytes_per_device = std::max(total.bytes_per_device, cost.bytes_per_device);
      if (describe) {
        levels.push_back(fmt::format("{} ×{} ({})", tier.name, size, cost.algorithm));
      }
    }
    below *= size;
  }
  total.time = std::max(total.bandwidth_time, total.latency_time);
  total.latency_bound = total.latency_time > total.bandwidth_time;
  if (describe) {
    total.algorithm = fmt::format("hierarchical: {}", fmt::join(levels, ", then "));
  }
  return total;
}

}  // namespace rsim
