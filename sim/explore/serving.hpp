// SPDX-License-Identifier: MIT
#pragma once
// The serving simulation: a stream of requests through a continuous-batching scheduler, one
// iteration at a time, each costed by the cost model (IterationCost). Deterministic for a seed.

#include "sim/base/percentile.hpp"
#include "sim/explore/serving_cost.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// Which of an iteration's times advances the simulated clock.
enum class ServingClock { expected, lower };

/// Mean and percentiles of one latency over the requests (seconds).
struct LatencySummary {
  double mean = 0.0;
  double p50 = 0.0;
  double p90 = 0.0;
  double p99 = 0.0;
  std::int64_t count = 0;  ///< requests it is taken over
};

LatencySummary summarize(std::vector<double> values);

struct ServingResult {
  ServingClock clock = ServingClock::expected;
  std::int64_t requests = 0;
  std::int64_t devices = 1;
  double makespan_s = 0.0;  ///< first arrival to last completion
  LatencySummary ttft;      ///< arrival → first token
  LatencySummary tpot;      ///< (last token − first token) / (output tokens − 1), per request
  LatencySummary e2e;       ///< arrival → last token
  LatencySummary queueing;  ///< arrival → first scheduled
  /// The TTFT and TPOT at every whole percentile 0 … 100 (the charts' quantile curves).
  std::vector<double> ttft_quantiles;
  std::vector<double> tpot_quantiles;
  double requests_per_s = 0.0;
  double output_tokens_per_s = 0.0;  ///< all output tokens / makespan
  double input_tokens_per_s = 0.0;
  std::int64_t iterations = 0;
  std::int64_t preemptions = 0;
  double mean_batch_tokens = 0.0;  ///< tokens per iteration, averaged over iterations
  double mean_running = 0.0;       ///< sequences running, time-weighted
  double kv_occupancy_mean = 0.0;  ///< share of the KV cache's blocks in use, time-weighted
  double kv_occupancy_peak = 0.0;
  std::int64_t kv_capacity_tokens = 0;  ///< the KV cache's tokens per device
  /// Open loop: arrivals outpace completions, the queue grows without bound while requests
  /// arrive (the latencies then grow with the run's length: not reported as figures).
  bool saturated = false;
  double capacity_requests_per_s = 0.0;   ///< completions per second while saturated
  double offered_requests_per_s = 0.0;    ///< the arrival rate (open loop)
  std::optional<double> tokens_per_step;  ///< speculative: expected tokens a step emits
  /// Goodput: requests per second finishing within the SLOs, where given.
  std::optional<double> goodput_requests_per_s;
  /// Disaggregated: the pools and the KV caches' transfers between them.
  struct Pools {
    std::int64_t prefill_devices = 0;  ///< all the pool's
    std::int64_t decode_devices = 0;
    std::int64_t prefill_replicas = 1;
    std::int64_t decode_replicas = 1;
    std::string transfer;        ///< the network tier
    LatencySummary kv_transfer;  ///< per request
    std::int64_t prefill_iterations = 0;
    double prefill_kv_occupancy_peak = 0.0;
  };
  std::optional<Pools> pools;
};

/// Simulates `scenario.serving` (which must be set) on the scenario's plan and roofs, or on its
/// two pools where it is disaggregated; goodput counts the requests within its SLO.
ServingResult simulate_serving(const Scenario& scenario, const Roofs& roofs,
                               ServingClock clock = ServingClock::expected);

/// The same at several clocks, the iteration costs built once.
std::vector<ServingResult> simulate_serving(const Scenario& scenario, const Roofs& roofs,
                                            const std::vector<ServingClock>& clocks);

/// The same with an iteration cost already built (benchmarks, repeated runs).
ServingResult simulate_serving(const ServingSpec& serving, IterationCost& cost,
                               IterationCost* draft, ServingClock clock);

/// The iteration costs of a serving scenario's engine (or its two pools): they depend on the
/// plans and the requests' length ranges only, so one build serves every clock, arrival rate and
/// scheduler cap (and a search shares them between deployments).
struct ServingCosts {
  std::shared_ptr<IterationCost> prefill;  ///< the only engine's where not disaggregated
  std::shared_ptr<IterationCost> decode;   ///< disaggregated: the decode pool's
  std::shared_ptr<IterationCost> draft;    ///< speculative: the draft's (on the decode plan)
};
ServingCosts build_serving_costs(const Scenario& scenario, const Roofs& roofs);
/// `scenario.serving` (its rate, scheduler and pools) on costs built for its plans.
ServingResult simulate_serving(const Scenario& scenario, const Roofs& roofs,
                               const ServingCosts& costs, ServingClock clock);

/// One point of a throughput–latency curve: the load (an arrival rate in requests/s, or a
/// closed loop's concurrency) and the run at it.
struct ServingLoadPoint {
  double load = 0.0;
  ServingResult result;
};
/// The throughput–latency curve of `scenario` at the iterations' expected times: an open loop at
/// 5 %, 10 %, 20 % … 100 %, 125 % and 150 % of its capacity (the requests per second of the same
/// stream all arriving at once, the most it can complete), a closed loop at concurrencies 1, 2,
/// 4 … up to twice max_sequences.
std::vector<ServingLoadPoint> serving_load_curve(const Scenario& scenario, const Roofs& roofs,
                                                 const ServingCosts& costs);

/// Builds the iteration cost simulate_serving uses for `scenario` (its draft's in `draft` where
/// the scenario speculates).
std::unique_ptr<IterationCost> serving_cost(const Scenario& scenario, const Roofs& roofs);
std::unique_ptr<IterationCost> draft_cost(const Scenario& scenario, const Roofs& roofs);

}  // namespace rsim
