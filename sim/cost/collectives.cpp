// SPDX-License-Identifier: MIT
#include "sim/cost/collectives.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <span>

namespace rsim {
namespace {

// One collective on one tier as its cost reads it: the collective's kind, bytes and flags, the
// axes it spans there, and the tier at `bandwidth` (a hierarchical level's: the tier's, scaled by
// the devices below it). Views, so that a level is costed without copying the collective (its
// axes) or the tier (its name and provenance) point after point.
struct Level {
  const Collective& collective;
  std::span<const std::int64_t> axes;
  const NetworkTier& tier;
  double bandwidth = 0.0;  ///< one direction, B/s (NetworkTier::bandwidth)
};

std::int64_t device_count(std::span<const std::int64_t> axes) {
  return std::accumulate(axes.begin(), axes.end(), std::int64_t{1}, std::multiplies<>());
}

// Torus, one all-gather (or reduce-scatter) pass: hops and bandwidth time.
std::pair<std::int64_t, double> torus_gather(const Level& level) {
  const double volume = level.collective.bytes.si();
  const double one_way = level.bandwidth;
  const bool wraparound = level.collective.wraparound;
  if (level.axes.size() == 1) {
    const auto size = static_cast<double>(level.axes.front());
    if (wraparound) {
      // Bidirectional ring: ⌊X/2⌋ hops, each moving 2V/X at 2W (sharding.md §AllGather).
      const std::int64_t hops = level.axes.front() / 2;
      return {hops, static_cast<double>(hops) * 2.0 * volume / (size * 2.0 * one_way)};
    }
    // No wraparound: effectively one direction, X − 1 hops of V/X at W.
    const std::int64_t hops = level.axes.front() - 1;
    return {hops, static_cast<double>(hops) * volume / (size * one_way)};
  }
  // Several axes at once: V / Σ W_axis; latency over the longest path Σ |X_i|/2.
  std::int64_t hops = 0;
  double axis_bandwidth = 0.0;
  for (std::int64_t size : level.axes) {
    hops += wraparound ? size / 2 : size - 1;
    axis_bandwidth += wraparound ? 2.0 * one_way : one_way;
  }
  return {hops, volume / axis_bandwidth};
}

// The names of the algorithms (CollectiveCost::algorithm), set only where asked for: a costing's
// inner loop needs the times alone.
void describe_as(CollectiveCost& cost, bool describe, std::string_view algorithm) {
  if (describe) {
    cost.algorithm = algorithm;
  }
}

CollectiveCost torus_cost(const Level& level, bool describe) {
  CollectiveCost cost;
  const Collective& collective = level.collective;
  const double volume = collective.bytes.si();
  const auto devices = static_cast<double>(device_count(level.axes));
  const std::string_view ring =
      collective.wraparound ? "bidirectional ring" : "ring without wraparound";
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: {
      const auto [hops, time] = torus_gather(level);
      cost.hops = hops;
      cost.bandwidth_time = Seconds(time);
      describe_as(cost, describe, ring);
      break;
    }
    case CollectiveKind::all_reduce: {
      // = reduce-scatter + all-gather.
      const auto [hops, time] = torus_gather(level);
      cost.hops = 2 * hops;
      cost.bandwidth_time = Seconds(2.0 * time);
      if (describe) {
        cost.algorithm = fmt::format("{} (reduce-scatter + all-gather)", ring);
      }
      break;
    }
    case CollectiveKind::all_to_all: {
      // V · max(X_i) / (4 · N · W_bidi); an open chain has half the bisection: twice that.
      const double largest =
          static_cast<double>(*std::max_element(level.axes.begin(), level.axes.end()));
      const double bidirectional = 2.0 * level.bandwidth;
      const double factor = collective.wraparound ? 1.0 : 2.0;
      cost.bandwidth_time = Seconds(factor * volume * largest / (4.0 * devices * bidirectional));
      for (std::int64_t size : level.axes) {
        cost.hops += collective.wraparound ? size / 2 : size - 1;
      }
      describe_as(cost, describe, ring);
      break;
    }
    case CollectiveKind::send_recv:
      cost.hops = 1;
      cost.bandwidth_time = Seconds(volume / level.bandwidth);
      describe_as(cost, describe, "point to point");
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

Bytes bytes_sent_per_device(const Level& level) {
  const Collective& collective = level.collective;
  const auto devices = static_cast<double>(device_count(level.axes));
  const double spread = (devices - 1.0) / devices;
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return collective.bytes * spread;
    case CollectiveKind::all_reduce:
      return uses_switch_reduction(collective, level.tier) ? collective.bytes
                                                           : collective.bytes * (2.0 * spread);
    case CollectiveKind::all_to_all:
      return collective.bytes * (spread / devices);
    case CollectiveKind::send_recv:
      return collective.bytes;
  }
  return collective.bytes;
}

CollectiveCost switch_cost(const Level& level, bool describe) {
  CollectiveCost cost;
  const Collective& collective = level.collective;
  const double volume = collective.bytes.si();
  const double egress = level.bandwidth;
  const std::int64_t count = device_count(level.axes);
  const auto devices = static_cast<double>(count);
  const double spread = (devices - 1.0) / devices;
  // NCCL rings take N − 1 steps per pass (gpus.md "How do collectives work on GPUs").
  switch (collective.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      cost.bandwidth_time = Seconds(spread * volume / egress);
      cost.hops = count - 1;
      describe_as(cost, describe, "ring through the switch");
      break;
    case CollectiveKind::all_reduce:
      if (uses_switch_reduction(collective, level.tier)) {
        // SHARP: each GPU sends V once and receives V once (gpus.md: T = bytes / W_egress).
        cost.bandwidth_time = Seconds(volume / egress);
        cost.hops = 2;
        describe_as(cost, describe, "switch reduction (SHARP)");
      } else {
        cost.bandwidth_time = Seconds(2.0 * spread * volume / egress);
        cost.hops = 2 * (count - 1);
        describe_as(cost, describe, "ring through the switch (reduce-scatter + all-gather)");
      }
      break;
    case CollectiveKind::all_to_all:
      // gpus.md: T = V · (N − 1) / (W · N²).
      cost.bandwidth_time = Seconds(volume * (devices - 1.0) / (egress * devices * devices));
      cost.hops = 1;
      describe_as(cost, describe, "direct through the switch");
      break;
    case CollectiveKind::send_recv:
      cost.bandwidth_time = Seconds(volume / egress);
      cost.hops = 1;
      describe_as(cost, describe, "point to point");
      break;
  }
  return cost;
}

// The steps whose latency the lower bound counts. Through a switch no algorithm takes fewer than
// a tree's (recursive doubling / halving: ⌈log2 N⌉ per pass, two passes for an all-reduce), and
// NCCL picks trees for small messages across nodes (tuning.cc), so the ring's N − 1 per pass is
// not a floor there; on a torus every hop is a physical link the data crosses.
std::int64_t latency_steps(CollectiveKind kind, Topology topology, std::int64_t hops,
                           std::int64_t devices) {
  if (topology == Topology::torus) {
    return hops;
  }
  const auto tree =
      static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(devices - 1)));
  const std::int64_t passes = kind == CollectiveKind::all_reduce ? 2 : 1;
  const std::int64_t floor =
      kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv ? 1 : passes * tree;
  return std::min(hops, floor);
}

constexpr std::size_t kMaxTorusAxes = 8;

// A torus level with each mesh axis longer than the torus's side (wraparound_size) laid over the
// torus's dimensions: 256 chips of a TPU v5e 16 × 16 slice are the axes {16, 16}, 64 of them
// {16, 4} (issue 21 #3b: one ring of 256 had half the 2-D torus's bandwidth). The axes go to
// `split`, which the returned level views; without a side the level is unchanged.
Level torus_axes(const Level& level, std::array<std::int64_t, kMaxTorusAxes>& split) {
  const std::int64_t side = level.tier.wraparound_size;
  if (side < 2) {
    return level;
  }
  std::size_t count = 0;
  for (std::int64_t size : level.axes) {
    while (size > side && size % side == 0 && count + 1 < split.size()) {
      split[count++] = side;
      size /= side;
    }
    if (count == split.size()) {
      return level;  // more dimensions than any torus has: as the mesh gives them
    }
    split[count++] = size;
  }
  Level laid = level;
  laid.axes = std::span<const std::int64_t>(split.data(), count);
  return laid;
}

// collective_cost of one level: checked (InputError), then costed by its tier's topology.
// `domain`: the devices the tier spans that the level must fit in (0: unbounded, or checked
// by the caller).
CollectiveCost level_cost(const Level& level, std::int64_t domain, bool describe) {
  if (level.axes.empty()) {
    throw InputError("a collective needs at least one mesh axis");
  }
  for (std::int64_t size : level.axes) {
    if (size < 2) {
      throw InputError(fmt::format("a collective axis needs at least 2 devices, got {}", size));
    }
  }
  const std::int64_t devices = device_count(level.axes);
  std::array<std::int64_t, kMaxTorusAxes> split{};
  if (level.collective.kind == CollectiveKind::send_recv && devices != 2) {
    throw InputError("send-recv is between 2 devices");
  }
  if (domain > 0 && devices > domain) {
    throw InputError(fmt::format("{} devices exceed the {} domain of {} devices", devices,
                                 level.tier.name, domain));
  }
  CollectiveCost cost = level.tier.topology == Topology::torus
                            ? torus_cost(torus_axes(level, split), describe)
                            : switch_cost(level, describe);
  cost.bytes_per_device = bytes_sent_per_device(level);
  if (level.tier.hop_latency) {
    cost.latency_time = *level.tier.hop_latency *
                        static_cast<double>(latency_steps(level.collective.kind,
                                                          level.tier.topology, cost.hops, devices));
  }
  cost.latency_bound = cost.latency_time > cost.bandwidth_time;
  cost.time = std::max(cost.latency_time, cost.bandwidth_time);
  return cost;
}

}  // namespace

CollectiveCost collective_cost(const Collective& collective, const NetworkTier& tier) {
  return level_cost({collective, collective.axes, tier, tier.bandwidth.si()}, tier.devices, true);
}

CollectiveCost collective_cost(const Collective& collective,
                               const std::vector<const NetworkTier*>& tiers, bool describe) {
  RSIM_CHECK(!tiers.empty(), "a collective needs a network tier");
  if (tiers.size() == 1) {
    const NetworkTier& tier = *tiers.front();
    return level_cost({collective, collective.axes, tier, tier.bandwidth.si()}, tier.devices,
                      describe);
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
      // The level's group of `size` runs at the egress of the `below` devices under each member;
      // its domain was applied by the split above.
      const Level level{collective, std::span<const std::int64_t>(&size, 1), tier,
                        (tier.bandwidth * static_cast<double>(below)).si()};
      const CollectiveCost cost = level_cost(level, 0, describe);
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
