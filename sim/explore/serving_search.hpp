// SPDX-License-Identifier: MIT
#pragma once
// The serving search: the deployment of N devices that serves most under an SLO. Every plan
// preset on a tensor-style mesh of t devices (t dividing N; N / t replicas, each sent its share
// of the stream), at several scheduler caps, simulated and ranked by goodput per device.

#include "sim/explore/serving.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

struct ServingCandidate {
  std::string preset;                ///< the plan preset (several that make one plan: "a = b")
  std::int64_t replica_devices = 1;  ///< t: devices per replica (disaggregated: per unit)
  std::int64_t replicas = 1;         ///< N / t
  /// Disaggregated: one unit's prefill and decode pools (their plans and replicas); the unit is
  /// replicated `replicas` times. Empty: each replica serves both phases.
  std::optional<Disaggregation> pools;
  std::int64_t max_sequences = 0;
  std::int64_t max_batch_tokens = 0;
  ServingResult result;    ///< one replica's run at its share of the stream
  bool meets_slo = false;  ///< p99 TTFT and p99 TPOT within the SLO (and not saturated)
  /// Open loop: the highest arrival rate of the whole stream (all replicas) at which the SLO
  /// still holds (DistServe's goodput), found by doubling and bisection to 2 %; 0 where not
  /// even the lowest rate tried holds it. Closed loop: the requests per second within the SLO.
  double slo_rate_per_s = 0.0;
  /// The run at slo_rate_per_s (open loop; the run itself for a closed loop); empty where no
  /// rate tried meets the SLO.
  std::optional<ServingResult> at_slo_rate;
  /// On the Pareto front of throughput against latency at the SLO rate (AIConfigurator's and
  /// DistServe's trade-off): no other deployment has more output tokens/s per device there and
  /// a lower p99 TPOT (a faster stream for each user).
  bool pareto = false;
  /// Requests per second served within the SLO per device: slo_rate_per_s / N.
  [[nodiscard]] double goodput_per_device() const;
  /// Output tokens/s per device at the scenario's rate, and at the SLO rate (0 where none).
  [[nodiscard]] double tokens_per_s_per_device() const;
  [[nodiscard]] double slo_tokens_per_s_per_device() const;
};

struct ServingSearchResult {
  std::int64_t devices = 0;
  ServingSlo slo;
  std::vector<ServingCandidate> ranked;  ///< by goodput per device, then p99 TTFT
  std::vector<std::string> rejected;     ///< "t=16 shard_batch: why"
};

/// Searches the deployments of `devices` devices for `scenario` (a serving scenario) under `slo`
/// (the scenario's when empty). Meshes of t devices span the tier of the scenario's first mesh
/// axis (its devices per domain bound t). Each plan is tried at several sequence caps and, with
/// chunked prefill, chunk sizes (max_batch_tokens); caps that never bind (the same run as a
/// smaller cap's) are folded into the smaller. An open loop also tries disaggregated units
/// (DistServe): one preset's prefill and decode replicas at sizes t_p, t_d in the ratios 1:1,
/// 2:1, 1:2, 3:1 and 1:3, where a unit divides the devices; KV caches cross the mesh's tier
/// within its domain, else the outermost tier.
ServingSearchResult search_serving(const Scenario& scenario, const Roofs& roofs,
                                   std::int64_t devices, ServingSlo slo);

}  // namespace rsim
