// SPDX-License-Identifier: MIT
#include "sim/explore/serving.hpp"

#include "sim/base/error.hpp"
#include "sim/explore/serving_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace rsim {
namespace {

// The requests' latencies and the run's throughput (latencies from the client's submission).
ServingResult summarize_requests(const ServingSpec& serving,
                                 const std::vector<ServingRequest>& requests,
                                 const EngineStats& stats, std::int64_t devices,
                                 ServingClock clock) {
  const ServingSlo& slo = serving.slo;
  ServingResult result;
  result.clock = clock;
  result.requests = static_cast<std::int64_t>(requests.size());
  result.devices = devices;
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  std::vector<double> queueing;
  double first_arrival = requests.front().submitted;
  double last_finish = 0.0;
  double output_tokens = 0.0;
  double input_tokens = 0.0;
  std::int64_t good = 0;
  for (const ServingRequest& request : requests) {
    first_arrival = std::min(first_arrival, request.submitted);
    last_finish = std::max(last_finish, request.finish);
    output_tokens += static_cast<double>(request.output);
    input_tokens += static_cast<double>(request.input);
    ttft.push_back(request.first_token - request.submitted);
    e2e.push_back(request.finish - request.submitted);
    queueing.push_back(request.scheduled - request.submitted);
    double per_token = 0.0;
    if (request.output > 1) {
      per_token = (request.finish - request.first_token) / static_cast<double>(request.output - 1);
      tpot.push_back(per_token);
    }
    const bool ttft_ok = slo.ttft_s <= 0.0 || ttft.back() <= slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0.0 || per_token <= slo.tpot_s;
    good += ttft_ok && tpot_ok ? 1 : 0;
  }
  result.makespan_s = last_finish - first_arrival;
  const auto quantiles = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::vector<double> curve;
    for (int p = 0; p <= 100 && !values.empty(); ++p) {
      curve.push_back(percentile(values, static_cast<double>(p)));
    }
    return curve;
  };
  result.ttft_quantiles = quantiles(ttft);
  result.tpot_quantiles = quantiles(tpot);
  result.ttft = summarize(std::move(ttft));
  result.tpot = summarize(std::move(tpot));
  result.e2e = summarize(std::move(e2e));
  result.queueing = summarize(std::move(queueing));
  result.requests_per_s = static_cast<double>(result.requests) / result.makespan_s;
  result.output_tokens_per_s = output_tokens / result.makespan_s;
  result.input_tokens_per_s = input_tokens / result.makespan_s;
  result.iterations = stats.iterations;
  result.preemptions = stats.preemptions;
  result.mean_batch_tokens =
      stats.batch_tokens / static_cast<double>(std::max<std::int64_t>(stats.iterations, 1));
  result.mean_running = stats.running_time / result.makespan_s;
  result.kv_occupancy_mean = stats.occupancy_time / result.makespan_s;
  result.kv_occupancy_peak = stats.occupancy_peak;
  result.kv_capacity_tokens = stats.kv_capacity_tokens;
  if (serving.speculative) {
    result.tokens_per_step = serving.speculative->tokens_per_step();
  }
  if (slo.any()) {
    result.goodput_requests_per_s = static_cast<double>(good) / result.makespan_s;
  }
  if (serving.arrivals.rate_per_s > 0.0) {
    result.offered_requests_per_s = serving.arrivals.rate_per_s;
    // Saturation: the queue (arrived, not yet scheduled) holds ≥ 5 % of the requests at the
    // last arrival and grew by half since the arrivals' midpoint: it grows as long as requests
    // arrive, so the latencies would measure the run's length. (A stable engine's queue stays
    // near empty; completions lag arrivals by a request's latency either way, so they are not
    // compared.) The capacity: requests admitted per second over the second half.
    double last_arrival = 0.0;
    for (const ServingRequest& request : requests) {
      last_arrival = std::max(last_arrival, request.submitted);
    }
    const double half = last_arrival / 2.0;
    const auto queued_at = [&](double time) {
      return std::count_if(requests.begin(), requests.end(), [&](const ServingRequest& request) {
        return request.submitted <= time && request.scheduled > time;
      });
    };
    const auto queued = static_cast<double>(queued_at(last_arrival));
    result.saturated = queued >= 0.05 * static_cast<double>(result.requests) &&
                       queued >= 1.5 * static_cast<double>(queued_at(half));
    if (result.saturated) {
      const auto admitted =
          std::count_if(requests.begin(), requests.end(), [&](const ServingRequest& request) {
            return request.scheduled > half && request.scheduled <= last_arrival;
          });
      result.capacity_requests_per_s = static_cast<double>(admitted) / (last_arrival - half);
    }
  }
  return result;
}

}  // namespace

LatencySummary summarize(std::vector<double> values) {
  LatencySummary summary;
  summary.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) {
    return summary;
  }
  std::sort(values.begin(), values.end());
  summary.mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  summary.p50 = percentile(values, 50.0);
  summary.p90 = percentile(values, 90.0);
  summary.p99 = percentile(values, 99.0);
  return summary;
}

std::unique_ptr<IterationCost> serving_cost(const Scenario& scenario, const Roofs& roofs) {
  RSIM_CHECK(scenario.serving.has_value(), "a serving scenario");
  const ServingSpec& serving = *scenario.serving;
  std::vector<std::int64_t> exact;
  if (serving.input_tokens.kind == TokenCount::Kind::fixed) {
    exact.push_back(serving.input_tokens.fixed);
  }
  const std::int64_t least = serving.input_tokens.kind == TokenCount::Kind::fixed
                                 ? serving.input_tokens.fixed
                                 : serving.input_tokens.minimum;
  return std::make_unique<IterationCost>(scenario, roofs, least,
                                         serving.input_tokens.most() + serving.output_tokens.most(),
                                         std::move(exact));
}

std::unique_ptr<IterationCost> draft_cost(const Scenario& scenario, const Roofs& roofs) {
  if (!scenario.serving || !scenario.serving->speculative) {
    return nullptr;
  }
  Scenario draft = scenario;
  draft.model = scenario.serving->speculative->draft;
  draft.serving.reset();
  pad_vocabulary(draft);
  const ServingSpec& serving = *scenario.serving;
  return std::make_unique<IterationCost>(
      draft, roofs,
      serving.input_tokens.kind == TokenCount::Kind::fixed ? serving.input_tokens.fixed
                                                           : serving.input_tokens.minimum,
      serving.input_tokens.most() + serving.output_tokens.most(), std::vector<std::int64_t>{});
}

ServingResult simulate_serving(const ServingSpec& serving, IterationCost& cost,
                               IterationCost* draft, ServingClock clock) {
  ServingEngine engine(serving, cost, draft, clock, make_requests(serving));
  engine.run();
  return summarize_requests(serving, engine.requests(), engine.stats(), cost.devices(), clock);
}

namespace {

// A KV cache of `bytes` per device over `tier`: each device of the prefill pool sends its shard
// over its own link at once (lower: bytes / bandwidth + a hop; expected: at the tier's collective
// efficiency, plus a call's latency α).
IterationTimes transfer_time(double bytes, const NetworkTier& tier) {
  const double hop = tier.hop_latency ? tier.hop_latency->si() : 0.0;
  const double bandwidth = tier.bandwidth.si();
  const double lower = bytes / bandwidth + hop;
  const double expected = bytes / (bandwidth * tier.efficiency) + hop + tier.call_latency.si();
  return {lower, expected, expected};
}

// A pool of `replicas` engines of one cost: `requests` (in arrival order) go to them in turn
// (round robin); returns them in the same order with the engines' statistics merged (sums,
// the occupancies averaged over the replicas, the peak the highest).
std::pair<std::vector<ServingRequest>, EngineStats> run_pool(
    const ServingSpec& serving, IterationCost& cost, IterationCost* draft, ServingClock clock,
    std::vector<ServingRequest> requests, std::int64_t replicas) {
  const auto count = static_cast<std::size_t>(replicas);
  std::vector<std::vector<ServingRequest>> shares(count);
  for (std::size_t index = 0; index < requests.size(); ++index) {
    shares[index % count].push_back(requests[index]);
  }
  EngineStats merged;
  for (std::size_t replica = 0; replica < count && replica < requests.size(); ++replica) {
    ServingEngine engine(serving, cost, draft, clock, std::move(shares[replica]));
    engine.run();
    for (std::size_t served = 0; served < engine.requests().size(); ++served) {
      requests[replica + served * count] = engine.requests()[served];
    }
    const EngineStats& stats = engine.stats();
    merged.iterations += stats.iterations;
    merged.preemptions += stats.preemptions;
    merged.batch_tokens += stats.batch_tokens;
    merged.running_time += stats.running_time;
    merged.occupancy_time += stats.occupancy_time / static_cast<double>(replicas);
    merged.occupancy_peak = std::max(merged.occupancy_peak, stats.occupancy_peak);
    merged.kv_capacity_tokens = stats.kv_capacity_tokens;
  }
  return {std::move(requests), merged};
}

ServingResult simulate_disaggregated(const Scenario& scenario, const Roofs& roofs,
                                     const ServingCosts& costs, ServingClock clock) {
  const ServingSpec& serving = *scenario.serving;
  const Disaggregation& pools = *serving.disaggregated;
  const NetworkTier* tier = roofs.find_network(pools.transfer);
  RSIM_CHECK(tier != nullptr, "the transfer tier was validated against the hardware");
  IterationCost* const prefill_cost = costs.prefill.get();
  IterationCost* const decode_cost = costs.decode.get();
  IterationCost* const draft = costs.draft.get();
  // The prefill pool: every request ends at its first token (no speculation there).
  ServingSpec prefill_spec = serving;
  prefill_spec.speculative.reset();
  std::vector<ServingRequest> requests = make_requests(serving);
  std::vector<ServingRequest> prompts = requests;
  for (ServingRequest& prompt : prompts) {
    prompt.output = 1;
  }
  const auto [prefilled, prefill_stats] = run_pool(prefill_spec, *prefill_cost, nullptr, clock,
                                                   std::move(prompts), pools.prefill_replicas);
  // The decode pool: each request arrives with its KV cache and its first token.
  for (std::size_t index = 0; index < requests.size(); ++index) {
    const ServingRequest& done = prefilled[index];
    ServingRequest& request = requests[index];
    const IterationTimes transfer = transfer_time(
        prefill_cost->kv_bytes_per_token() * static_cast<double>(request.input), *tier);
    request.transfer = clock == ServingClock::expected ? transfer.expected : transfer.lower;
    request.scheduled = done.scheduled;
    request.first_token = done.first_token;
    request.arrival = done.first_token + request.transfer;
    request.prefilled = true;
    request.generated = 1.0;
    if (request.output == 1) {
      request.finish = done.first_token;
    }
  }
  std::vector<ServingRequest> finished_early;
  std::erase_if(requests, [&](const ServingRequest& request) {
    if (request.output == 1) {
      finished_early.push_back(request);
      return true;
    }
    return false;
  });
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const ServingRequest& a, const ServingRequest& b) { return a.arrival < b.arrival; });
  auto [all, decode_stats] =
      run_pool(serving, *decode_cost, draft, clock, std::move(requests), pools.decode_replicas);
  all.insert(all.end(), finished_early.begin(), finished_early.end());
  std::vector<double> transfers;
  for (const ServingRequest& request : all) {
    transfers.push_back(request.transfer);
  }
  const std::int64_t prefill_devices = pools.prefill_replicas * prefill_cost->devices();
  const std::int64_t decode_devices = pools.decode_replicas * decode_cost->devices();
  ServingResult result =
      summarize_requests(serving, all, decode_stats, prefill_devices + decode_devices, clock);
  result.iterations += prefill_stats.iterations;
  result.preemptions += prefill_stats.preemptions;
  result.pools = ServingResult::Pools{prefill_devices,          decode_devices,
                                      pools.prefill_replicas,   pools.decode_replicas,
                                      pools.transfer,           summarize(std::move(transfers)),
                                      prefill_stats.iterations, prefill_stats.occupancy_peak};
  return result;
}

}  // namespace

ServingCosts build_serving_costs(const Scenario& scenario, const Roofs& roofs) {
  ServingCosts costs;
  if (!scenario.serving->disaggregated) {
    costs.prefill = serving_cost(scenario, roofs);
    costs.draft = draft_cost(scenario, roofs);
    return costs;
  }
  const auto pool = [&](const Plan& plan) {
    Scenario on_pool = scenario;
    on_pool.plan = plan;
    pad_vocabulary(on_pool);
    return on_pool;
  };
  const Scenario prefill_scenario = pool(scenario.serving->disaggregated->prefill);
  const Scenario decode_scenario = pool(scenario.serving->disaggregated->decode);
  costs.prefill = serving_cost(prefill_scenario, roofs);
  costs.decode = serving_cost(decode_scenario, roofs);
  costs.draft = draft_cost(decode_scenario, roofs);
  return costs;
}

ServingResult simulate_serving(const Scenario& scenario, const Roofs& roofs,
                               const ServingCosts& costs, ServingClock clock) {
  return scenario.serving->disaggregated
             ? simulate_disaggregated(scenario, roofs, costs, clock)
             : simulate_serving(*scenario.serving, *costs.prefill, costs.draft.get(), clock);
}

std::vector<ServingLoadPoint> serving_load_curve(const Scenario& scenario, const Roofs& roofs,
                                                 const ServingCosts& costs) {
  Scenario at_load = scenario;
  ServingSpec& serving = *at_load.serving;
  std::vector<ServingLoadPoint> curve;
  if (serving.arrivals.rate_per_s > 0.0) {
    // Capacity: the stream's requests all at once (1e9 requests/s: nanoseconds apart).
    serving.arrivals.rate_per_s = 1e9;
    const double capacity =
        simulate_serving(at_load, roofs, costs, ServingClock::expected).requests_per_s;
    for (const double share : {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5}) {
      serving.arrivals.rate_per_s = share * capacity;
      curve.push_back({serving.arrivals.rate_per_s,
                       simulate_serving(at_load, roofs, costs, ServingClock::expected)});
    }
    return curve;
  }
  const std::int64_t most = 2 * serving.scheduler.max_sequences;
  for (std::int64_t clients = 1; clients <= most; clients *= 2) {
    serving.arrivals.concurrency = clients;
    curve.push_back({static_cast<double>(clients),
                     simulate_serving(at_load, roofs, costs, ServingClock::expected)});
  }
  return curve;
}

std::vector<ServingResult> simulate_serving(const Scenario& scenario, const Roofs& roofs,
                                            const std::vector<ServingClock>& clocks) {
  const ServingCosts costs = build_serving_costs(scenario, roofs);
  std::vector<ServingResult> results;
  for (const ServingClock clock : clocks) {
    results.push_back(simulate_serving(scenario, roofs, costs, clock));
  }
  return results;
}

ServingResult simulate_serving(const Scenario& scenario, const Roofs& roofs, ServingClock clock) {
  return simulate_serving(scenario, roofs, std::vector<ServingClock>{clock}).front();
}

}  // namespace rsim
