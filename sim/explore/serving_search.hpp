// SPDX-License-Identifier: MIT
#pragma once
// The serving search: the deployment of N devices that serves most under an SLO. Every plan
// preset on a tensor-style mesh of t devices (t dividing N; N / t replicas, each sent its share
// of the stream), at several scheduler caps, simulated and ranked by goodput per device.

#include "sim/explore/serving.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rsim {

struct ServingCandidate {
  std::string preset;            ///< the plan preset (several that make one plan: "a = b")
  std::int64_t replica_devices;  ///< t: devices per replica
  std::int64_t replicas;         ///< N / t
  std::int64_t max_sequences;
  std::int64_t max_batch_tokens;
  ServingResult result;    ///< one replica's run at its share of the stream
  bool meets_slo = false;  ///< p99 TTFT and p99 TPOT within the SLO (and not saturated)
  /// Open loop: the highest arrival rate of the whole stream (all replicas) at which the SLO
  /// still holds (DistServe's goodput), found by doubling and bisection to 2 %; 0 where not
  /// even the lowest rate tried holds it. Closed loop: the requests per second within the SLO.
  double slo_rate_per_s = 0.0;
  bool pareto = false;  ///< no other candidate has more tokens/s per device and a lower p99 TTFT
  /// Requests per second served within the SLO per device: slo_rate_per_s / N.
  [[nodiscard]] double goodput_per_device() const;
  [[nodiscard]] double tokens_per_s_per_device() const;
};

struct ServingSearchResult {
  std::int64_t devices = 0;
  ServingSlo slo;
  std::vector<ServingCandidate> ranked;  ///< by goodput per device, then p99 TTFT
  std::vector<std::string> rejected;     ///< "t=16 shard_batch: why"
};

/// Searches the deployments of `devices` devices for `scenario` (a serving scenario) under `slo`
/// (the scenario's when empty). Meshes of t devices span the tier of the scenario's first mesh
/// axis (its devices per domain bound t). Scheduler caps that never bind (the same run as a
/// smaller cap's) are folded into the smaller.
ServingSearchResult search_serving(const Scenario& scenario, const Roofs& roofs,
                                   std::int64_t devices, ServingSlo slo);

}  // namespace rsim
