// SPDX-License-Identifier: MIT
#include "sim/explore/serving_search.hpp"

#include "sim/base/error.hpp"
#include "sim/explore/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

namespace rsim {
namespace {

// The scheduler caps tried per plan: vLLM's default (256) and below it, and the scenario's own.
std::vector<std::int64_t> sequence_caps(const SchedulerSpec& scheduler) {
  std::vector<std::int64_t> caps{32, 64, 128, 256, scheduler.max_sequences};
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  return caps;
}

// The chunk sizes (tokens per iteration) tried with chunked prefill: Sarathi-Serve's 512,
// vLLM V1's online-serving default 2048 and the scenario's own. Without chunking a prompt must
// fit one iteration, so only the scenario's.
std::vector<std::int64_t> chunk_sizes(const SchedulerSpec& scheduler) {
  if (!scheduler.chunked_prefill) {
    return {scheduler.max_batch_tokens};
  }
  std::vector<std::int64_t> chunks{512, 2048, scheduler.max_batch_tokens};
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  return chunks;
}

// One replica's share of the stream (`replicas` of them share its rate evenly).
ServingSpec replica_share(const ServingSpec& serving, std::int64_t replicas) {
  ServingSpec share = serving;
  const auto count = static_cast<double>(replicas);
  if (serving.arrivals.rate_per_s > 0.0) {
    share.arrivals.rate_per_s = serving.arrivals.rate_per_s / count;
  } else {
    share.arrivals.concurrency = (serving.arrivals.concurrency + replicas - 1) / replicas;
  }
  // As many requests as the scenario's (not 1/replicas of them): every deployment's p99 rests
  // on the same count, and a short run would stay below saturation longer (a replica sent 500
  // requests looks stable at rates where 2,000 grow its queue).
  return share;
}

bool meets_slo_at(const ServingResult& result, const ServingSlo& slo) {
  return !result.saturated && (slo.ttft_s <= 0.0 || result.ttft.p99 <= slo.ttft_s) &&
         (slo.tpot_s <= 0.0 || result.tpot.p99 <= slo.tpot_s);
}

// The highest arrival rate at which `simulate` meets `slo`: from `start`, doubled (or halved)
// until the answer changes, then bisected to 2 % (≤ 20 simulations).
double slo_rate(const std::function<ServingResult(double)>& simulate, double start,
                const ServingSlo& slo, bool meets_at_start, std::optional<ServingResult>& best) {
  // The run at the highest rate meeting the SLO so far (rates that meet only ever rise).
  const auto meets = [&](double rate) {
    ServingResult result = simulate(rate);
    const bool ok = meets_slo_at(result, slo);
    if (ok && (!best || best->offered_requests_per_s < rate)) {
      best = std::move(result);
    }
    return ok;
  };
  double low = start;
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

// A plan a replica (or a pool's replica) can run, with its iteration costs built once.
struct CostedPlan {
  Plan plan;
  std::string name;  ///< the preset(s)
  std::int64_t size = 1;
  ServingCosts costs;
  bool serves = true;  ///< its aggregated replicas served at some cap and chunk
};

// The plans of every preset on a one-axis mesh of `size` devices over `tier`, one per distinct
// plan (presets that make the same plan named together).
std::vector<std::pair<Plan, std::string>> distinct_plans(const Scenario& scenario,
                                                         std::int64_t size,
                                                         const std::string& tier) {
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
  return plans;
}

// Every cap and chunk size of one deployment: `simulate(spec)` runs it at spec's rate. A cap
// and chunk that cannot serve (no room for the KV cache beside an iteration's activations) is
// not a candidate; a deployment that cannot serve at any is rejected, with the reason (at the
// smallest chunk, the most room). Returns whether it served at some.
bool add_candidates(ServingSearchResult& search, const ServingCandidate& base,
                    const ServingSpec& serving,
                    const std::function<ServingResult(const ServingSpec&)>& simulate) {
  bool served = false;
  std::string why;
  for (const std::int64_t chunk : chunk_sizes(serving.scheduler)) {
    std::optional<std::tuple<std::int64_t, double, double>> previous;
    for (const std::int64_t cap : sequence_caps(serving.scheduler)) {
      if (cap > chunk) {
        continue;  // vLLM requires max_num_batched_tokens ≥ max_num_seqs
      }
      ServingSpec spec = serving;
      spec.scheduler.max_sequences = cap;
      spec.scheduler.max_batch_tokens = chunk;
      ServingCandidate ranked = base;
      ranked.max_sequences = cap;
      ranked.max_batch_tokens = chunk;
      try {
        ranked.result = simulate(spec);
      } catch (const ConfigError&) {
        throw;
      } catch (const InputError& error) {
        why = why.empty() ? error.what() : why;
        continue;  // its KV cache does not fit beside this chunk's activations
      }
      served = true;
      ranked.meets_slo = meets_slo_at(ranked.result, search.slo);
      const auto units = static_cast<double>(ranked.replicas);
      if (spec.arrivals.rate_per_s > 0.0) {
        const auto at_rate = [&](double rate) {
          ServingSpec probe = spec;
          probe.arrivals.rate_per_s = rate;
          return simulate(probe);
        };
        if (ranked.meets_slo) {
          ranked.at_slo_rate = ranked.result;
        }
        ranked.slo_rate_per_s = slo_rate(at_rate, spec.arrivals.rate_per_s, search.slo,
                                         ranked.meets_slo, ranked.at_slo_rate) *
                                units;
      } else {
        if (ranked.meets_slo) {
          ranked.at_slo_rate = ranked.result;
        }
        ranked.slo_rate_per_s =
            ranked.result.goodput_requests_per_s.value_or(ranked.result.requests_per_s) * units;
      }
      const auto signature =
          std::tuple{ranked.result.iterations, ranked.result.makespan_s, ranked.slo_rate_per_s};
      if (previous == signature) {
        continue;  // the cap never binds: the same runs as the smaller one's
      }
      search.ranked.push_back(std::move(ranked));
      previous = signature;
    }
  }
  if (!served) {
    // Named as the plan search names plans: "megatron_tp ×4", "2 × (prefill … + decode …)".
    search.rejected.push_back(
        base.pools ? fmt::format("{} × ({}): {}", base.replicas, describe_pools(*base.pools), why)
                   : fmt::format("{} ×{}: {}", base.preset, base.replica_devices, why));
  }
  return served;
}

// The devices a deployment's unit spreads over, in a form equal for equal shapes.
std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>
shape_of(const ServingCandidate& candidate) {
  if (!candidate.pools) {
    return {candidate.replica_devices, candidate.replicas, 0, 0, 0, 0};
  }
  const Disaggregation& pools = *candidate.pools;
  return {pools.prefill.devices(), pools.prefill_replicas, pools.decode.devices(),
          pools.decode_replicas,   candidate.replicas,     1};
}

// Presets that make different plans but the same serving runs (tensor parallel with and
// without sequence parallelism serve alike here) are one row, named together.
void fold_equal_presets(std::vector<ServingCandidate>& candidates) {
  std::vector<ServingCandidate> folded;
  for (ServingCandidate& candidate : candidates) {
    const auto same = std::find_if(folded.begin(), folded.end(), [&](const ServingCandidate& kept) {
      return shape_of(kept) == shape_of(candidate) &&
             kept.max_sequences == candidate.max_sequences &&
             kept.max_batch_tokens == candidate.max_batch_tokens &&
             kept.slo_rate_per_s == candidate.slo_rate_per_s &&
             kept.result.iterations == candidate.result.iterations &&
             kept.result.makespan_s == candidate.result.makespan_s &&
             kept.result.ttft.p99 == candidate.result.ttft.p99;
    });
    if (same == folded.end()) {
      folded.push_back(std::move(candidate));
    } else if (same->preset.find(candidate.preset) == std::string::npos) {
      same->preset += " = " + candidate.preset;
    }
  }
  candidates = std::move(folded);
}

}  // namespace

double ServingCandidate::goodput_per_device() const {
  return slo_rate_per_s / static_cast<double>(replica_devices * replicas);
}

double ServingCandidate::tokens_per_s_per_device() const {
  return result.output_tokens_per_s / static_cast<double>(replica_devices);
}

double ServingCandidate::slo_tokens_per_s_per_device() const {
  return at_slo_rate ? at_slo_rate->output_tokens_per_s / static_cast<double>(replica_devices)
                     : 0.0;
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
  // Every plan a replica of t devices can serve with, costed once.
  std::vector<CostedPlan> costed;
  for (std::int64_t size = 1; size <= devices; ++size) {
    if (devices % size != 0) {
      continue;
    }
    for (auto& [plan, name] : distinct_plans(scenario, size, tier)) {
      Scenario candidate = scenario;
      candidate.plan = plan;
      candidate.serving->disaggregated.reset();
      pad_vocabulary(candidate);
      try {
        costed.push_back({candidate.plan, name, size, build_serving_costs(candidate, roofs)});
      } catch (const ConfigError&) {
        throw;
      } catch (const InputError& error) {
        search.rejected.push_back(fmt::format("{} ×{}: {}", name, size, error.what()));
      }
    }
  }
  // Aggregated: N / t replicas of each plan, each sent its share of the stream.
  for (CostedPlan& option : costed) {
    const std::int64_t replicas = devices / option.size;
    Scenario candidate = scenario;
    candidate.plan = option.plan;
    candidate.serving = replica_share(*scenario.serving, replicas);
    candidate.serving->slo = search.slo;
    candidate.serving->disaggregated.reset();
    ServingCandidate base;
    base.preset = option.name;
    base.replica_devices = option.size;
    base.replicas = replicas;
    option.serves = add_candidates(search, base, *candidate.serving, [&](const ServingSpec& spec) {
      return simulate_serving(spec, *option.costs.prefill, option.costs.draft.get(),
                              ServingClock::expected);
    });
  }
  // Disaggregated units (an open loop only: the pools are simulated one after the other).
  if (scenario.serving->arrivals.rate_per_s > 0.0 && !scenario.hardware.network.empty()) {
    const NetworkTier* inner = roofs.find_network(tier);
    for (const CostedPlan& prefill : costed) {
      for (const CostedPlan& decode : costed) {
        // A plan whose replicas cannot hold a KV cache cannot as a pool either.
        if (prefill.name != decode.name || !prefill.serves || !decode.serves) {
          continue;
        }
        for (const auto& [prefill_replicas, decode_replicas] :
             {std::pair<std::int64_t, std::int64_t>{1, 1}, {2, 1}, {1, 2}, {3, 1}, {1, 3}}) {
          const std::int64_t unit = prefill_replicas * prefill.size + decode_replicas * decode.size;
          if (devices % unit != 0) {
            continue;
          }
          const std::int64_t units = devices / unit;
          Disaggregation pools{prefill.plan, decode.plan, prefill_replicas, decode_replicas,
                               scenario.hardware.network.back().name};
          if (inner != nullptr && (inner->devices == 0 || unit <= inner->devices)) {
            pools.transfer = inner->name;  // the unit inside one domain: NVLink, not the NICs
          }
          Scenario candidate = scenario;
          candidate.serving = replica_share(*scenario.serving, units);
          candidate.serving->slo = search.slo;
          candidate.serving->disaggregated = pools;
          const ServingCosts costs{prefill.costs.prefill, decode.costs.prefill, decode.costs.draft};
          ServingCandidate base;
          base.preset = prefill.name;
          base.replica_devices = unit;
          base.replicas = units;
          base.pools = pools;
          // A copy: the simulation below rewrites candidate.serving for each rate it tries.
          const ServingSpec share = *candidate.serving;
          add_candidates(search, base, share, [&](const ServingSpec& spec) {
            candidate.serving = spec;
            return simulate_serving(candidate, roofs, costs, ServingClock::expected);
          });
        }
      }
    }
  }
  fold_equal_presets(search.ranked);
  for (ServingCandidate& candidate : search.ranked) {
    candidate.pareto = candidate.at_slo_rate.has_value();
    for (const ServingCandidate& other : search.ranked) {
      if (!candidate.pareto) {
        break;
      }
      if (!other.at_slo_rate) {
        continue;
      }
      const double mine = candidate.slo_tokens_per_s_per_device();
      const double theirs = other.slo_tokens_per_s_per_device();
      const double my_tpot = candidate.at_slo_rate->tpot.p99;
      const double their_tpot = other.at_slo_rate->tpot.p99;
      const bool no_worse = theirs >= mine && their_tpot <= my_tpot;
      const bool better = theirs > mine || their_tpot < my_tpot;
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
