// SPDX-License-Identifier: MIT
#include "sim/explore/serving_search.hpp"

#include "sim/base/error.hpp"
#include "sim/explore/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace rsim {
namespace {

// The scheduler caps tried per plan: vLLM's default (256) and below it, and the scenario's own.
std::vector<std::int64_t> sequence_caps(const SchedulerSpec& scheduler) {
  std::vector<std::int64_t> caps{32, 64, 128, 256, scheduler.max_sequences};
  std::erase_if(caps, [&](std::int64_t cap) { return cap > scheduler.max_batch_tokens; });
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  return caps;
}

// One replica's share of the stream (`replicas` of them share it evenly).
ServingSpec replica_share(const ServingSpec& serving, std::int64_t replicas) {
  ServingSpec share = serving;
  const auto count = static_cast<double>(replicas);
  if (serving.arrivals.rate_per_s > 0.0) {
    share.arrivals.rate_per_s = serving.arrivals.rate_per_s / count;
  } else {
    share.arrivals.concurrency = (serving.arrivals.concurrency + replicas - 1) / replicas;
  }
  share.requests = std::max<std::int64_t>(1, (serving.requests + replicas - 1) / replicas);
  return share;
}

bool meets_slo_at(const ServingResult& result, const ServingSlo& slo) {
  return !result.saturated && (slo.ttft_s <= 0.0 || result.ttft.p99 <= slo.ttft_s) &&
         (slo.tpot_s <= 0.0 || result.tpot.p99 <= slo.tpot_s);
}

// The highest per-replica arrival rate at which `serving` meets `slo`: from the scenario's rate,
// doubled (or halved) until the answer changes, then bisected to 2 % (≤ 20 simulations).
double slo_rate(ServingSpec serving, IterationCost& cost, IterationCost* draft,
                const ServingSlo& slo, bool meets_at_start) {
  const auto meets = [&](double rate) {
    serving.arrivals.rate_per_s = rate;
    return meets_slo_at(simulate_serving(serving, cost, draft, ServingClock::expected), slo);
  };
  double low = serving.arrivals.rate_per_s;
  double high = low;
  if (meets_at_start) {
    for (int step = 0; step < 8 && meets(high * 2.0); ++step) {
      low = high * 2.0;
      high = low;
    }
    high = low * 2.0;
  } else {
    low = 0.0;
    for (int step = 0; step < 8; ++step) {
      high /= 2.0;
      if (meets(high)) {
        low = high;
        high *= 2.0;
        break;
      }
    }
    if (low == 0.0) {
      return 0.0;
    }
  }
  while (high - low > 0.02 * low) {
    const double middle = (low + high) / 2.0;
    (meets(middle) ? low : high) = middle;
  }
  return low;
}

}  // namespace

double ServingCandidate::goodput_per_device() const {
  return slo_rate_per_s / static_cast<double>(replica_devices * replicas);
}

double ServingCandidate::tokens_per_s_per_device() const {
  return result.output_tokens_per_s / static_cast<double>(replica_devices);
}

ServingSearchResult search_serving(const Scenario& scenario, const Roofs& roofs,
                                   std::int64_t devices, ServingSlo slo) {
  RSIM_CHECK(scenario.serving.has_value(), "a serving scenario");
  if (devices < 1 || devices > 4096) {
    throw InputError(
        fmt::format("--devices {}: a serving search spans 1 to 4096 devices", devices));
  }
  ServingSearchResult search;
  search.devices = devices;
  search.slo = slo.any() ? slo : scenario.serving->slo;
  const std::string tier = !scenario.plan.mesh.empty() ? scenario.plan.mesh.front().network
                           : !scenario.hardware.network.empty()
                               ? scenario.hardware.network.front().name
                               : std::string();
  for (std::int64_t size = 1; size <= devices; ++size) {
    if (devices % size != 0) {
      continue;
    }
    const std::int64_t replicas = devices / size;
    std::vector<std::string> signatures;
    std::vector<std::pair<Plan, std::string>> plans;
    for (const PlanPreset& preset : plan_presets()) {
      if (preset.name == "single") {
        continue;
      }
      try {
        Plan plan = make_plan(preset.name, {MeshAxis{"model", size, tier}}, scenario.hardware);
        plan.vocab_padding = scenario.plan.vocab_padding;
        const std::string signature = plan_signature(plan);
        const auto found = std::find(signatures.begin(), signatures.end(), signature);
        if (found == signatures.end()) {
          signatures.push_back(signature);
          plans.emplace_back(std::move(plan), std::string(preset.name));
        } else {
          plans[static_cast<std::size_t>(found - signatures.begin())].second +=
              " = " + std::string(preset.name);
        }
      } catch (const PlanError&) {
        // A preset whose axes a one-axis mesh lacks (data, stage) is not a candidate.
      }
    }
    for (const auto& [plan, name] : plans) {
      Scenario candidate = scenario;
      candidate.plan = plan;
      pad_vocabulary(candidate);
      candidate.serving = replica_share(*scenario.serving, replicas);
      candidate.serving->slo = search.slo;
      candidate.serving->disaggregated.reset();  // aggregated deployments of the plan
      try {
        const std::unique_ptr<IterationCost> cost = serving_cost(candidate, roofs);
        const std::unique_ptr<IterationCost> draft = draft_cost(candidate, roofs);
        std::optional<std::tuple<std::int64_t, double, double>> previous;
        for (const std::int64_t cap : sequence_caps(candidate.serving->scheduler)) {
          ServingSpec serving = *candidate.serving;
          serving.scheduler.max_sequences = cap;
          ServingCandidate ranked{
              name,
              size,
              replicas,
              cap,
              serving.scheduler.max_batch_tokens,
              simulate_serving(serving, *cost, draft.get(), ServingClock::expected)};
          ranked.meets_slo = meets_slo_at(ranked.result, search.slo);
          ranked.slo_rate_per_s =
              serving.arrivals.rate_per_s > 0.0
                  ? slo_rate(serving, *cost, draft.get(), search.slo, ranked.meets_slo) *
                        static_cast<double>(replicas)
                  : ranked.result.goodput_requests_per_s.value_or(ranked.result.requests_per_s) *
                        static_cast<double>(replicas);
          const auto signature =
              std::tuple{ranked.result.iterations, ranked.result.makespan_s, ranked.slo_rate_per_s};
          if (previous == signature) {
            continue;  // the cap never binds: the same runs as the smaller one's
          }
          search.ranked.push_back(std::move(ranked));
          previous = signature;
        }
      } catch (const ConfigError&) {
        throw;
      } catch (const InputError& error) {
        search.rejected.push_back(fmt::format("{} × {}: {}", size, name, error.what()));
      }
    }
  }
  for (ServingCandidate& candidate : search.ranked) {
    candidate.pareto = !candidate.result.saturated;
    for (const ServingCandidate& other : search.ranked) {
      if (!candidate.pareto) {
        break;
      }
      const bool no_worse =
          !other.result.saturated &&
          other.tokens_per_s_per_device() >= candidate.tokens_per_s_per_device() &&
          other.result.ttft.p99 <= candidate.result.ttft.p99;
      const bool better = other.tokens_per_s_per_device() > candidate.tokens_per_s_per_device() ||
                          other.result.ttft.p99 < candidate.result.ttft.p99;
      candidate.pareto = !(no_worse && better);
    }
  }
  std::stable_sort(search.ranked.begin(), search.ranked.end(),
                   [](const ServingCandidate& a, const ServingCandidate& b) {
                     if (a.goodput_per_device() != b.goodput_per_device()) {
                       return a.goodput_per_device() > b.goodput_per_device();
                     }
                     return a.result.ttft.p99 < b.result.ttft.p99;
                   });
  return search;
}

}  // namespace rsim
