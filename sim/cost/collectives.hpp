// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/units.hpp"
#include "sim/graph/op.hpp"
#include "sim/spec/hardware.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// The time of a collective and how it was derived.
struct CollectiveCost {
  Seconds time;            ///< max(bandwidth term, latency term)
  Seconds bandwidth_time;  ///< bytes over the links
  Seconds latency_time;    ///< hops × hop latency (0 when the tier has no latency figure)
  std::int64_t hops = 0;
  bool latency_bound = false;
  Bytes bytes_per_device;  ///< bytes each device sends
  std::string algorithm;   ///< e.g. "bidirectional ring", "switch, SHARP"
};

/// Costs a collective on a tier, α–β style: T = max(hops · T_hop, bytes / bandwidth) (scaling
/// book sharding.md "latency"), with the bandwidth term per topology:
///   torus, one axis of X with wraparound: all-gather = reduce-scatter = ⌊X/2⌋ · 2V/(X · W_bidi)
///     (= V / W_bidi for even X); without wraparound (X − 1) · V/(X · W); several axes
///     V / Σ W_axis; all-reduce = 2 ×; all-to-all = V · max(X_i) / (4 · N · W_bidi).
///   switch / fat tree (per-device egress W): all-gather = reduce-scatter = (N − 1)/N · V/W;
///     all-reduce 2 × that, or V/W with in-network reduction; all-to-all (N − 1)/N² · V/W.
///   send/recv: V / W.
/// InputError if the axes exceed the tier's domain or are not ≥ 2 devices.
CollectiveCost collective_cost(const Collective& collective, const NetworkTier& tier);

/// A collective over one mesh axis that spans several tiers, innermost first ("nvlink+ib": the 8
/// GPUs of a node, then the nodes). The axis splits into levels of D_i devices (each inner tier
/// takes as many as its domain holds); level i runs at the combined egress of the D_1 · … ·
/// D_{i−1} devices below it, and the levels pipeline, so T = max over levels (scaling book
/// gpus.md: T = bytes · max_i (D_i − 1) / (D_i · W_i), e.g. max(V/W_gpu, V/W_node)).
/// `describe` false leaves `algorithm` empty (one tier or several): the costing's inner loop
/// needs only the times.
CollectiveCost collective_cost(const Collective& collective,
                               const std::vector<const NetworkTier*>& tiers, bool describe = true);

}  // namespace rsim
