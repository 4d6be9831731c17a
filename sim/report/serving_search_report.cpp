// SPDX-License-Identifier: MIT
#include "sim/report/serving_search_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

std::size_t ranked_rows(const ServingSearchResult& search, std::size_t top) {
  return top == 0 ? search.ranked.size() : std::min(top, search.ranked.size());
}

std::string slo_text(const ServingSlo& slo) {
  if (!slo.any()) {
    return "no SLO (goodput = every request)";
  }
  return fmt::format("SLO p99 TTFT ≤ {}, p99 TPOT ≤ {}",
                     slo.ttft_s > 0.0 ? seconds(slo.ttft_s) : std::string("any"),
                     slo.tpot_s > 0.0 ? seconds(slo.tpot_s) : std::string("any"));
}

// "2 × 4": two replicas of four devices; "1 × (4P + 2×4D)": one unit of a prefill replica of
// four devices and two decode replicas of four.
std::string deployment_text(const ServingCandidate& candidate) {
  if (!candidate.pools) {
    return fmt::format("{} × {}", candidate.replicas, candidate.replica_devices);
  }
  const auto pool = [](const Plan& plan, std::int64_t replicas) {
    return replicas == 1 ? std::to_string(plan.devices())
                         : fmt::format("{}×{}", replicas, plan.devices());
  };
  const Disaggregation& pools = *candidate.pools;
  return fmt::format("{} × ({}P + {}D)", candidate.replicas,
                     pool(pools.prefill, pools.prefill_replicas),
                     pool(pools.decode, pools.decode_replicas));
}

Json pool_json(const Plan& plan, std::int64_t replicas) {
  return Json{{"devices", plan.devices()}, {"replicas", replicas}};
}

}  // namespace

void write_serving_search_text(std::ostream& out, const Scenario& scenario,
                               const ServingSearchResult& search, std::size_t top) {
  const std::size_t meeting = static_cast<std::size_t>(
      std::count_if(search.ranked.begin(), search.ranked.end(),
                    [](const ServingCandidate& candidate) { return candidate.meets_slo; }));
  out << fmt::format(
      "Serving search: {} on {} devices, by goodput per device; {}: {} of {} "
      "deployments meet it, {} rejected\n\n",
      scenario.file, search.devices, slo_text(search.slo), meeting, search.ranked.size(),
      search.rejected.size());
  if (search.ranked.empty()) {
    out << fmt::format(
        "  No deployment of {} devices can serve this stream: every plan is rejected below "
        "(more devices, a smaller model or narrower weights may fit).\n",
        search.devices);
    for (const std::string& why : search.rejected) {
      out << "    " << why << '\n';
    }
    return;
  }
  TextTable table({{"#"},
                   {"plan", TextTable::Align::left},
                   {"deployment", TextTable::Align::left},
                   {"max seq"},
                   {"chunk"},
                   {"TTFT p99"},
                   {"TPOT p99"},
                   {"tokens/s/device at SLO rate", TextTable::Align::right, 2},
                   {"SLO rate req/s", TextTable::Align::right, 3},
                   {"goodput req/s/device"},
                   {"SLO", TextTable::Align::left},
                   {"pareto", TextTable::Align::left, 1}});
  for (std::size_t rank = 0; rank < ranked_rows(search, top); ++rank) {
    const ServingCandidate& candidate = search.ranked[rank];
    const ServingResult& result = candidate.result;
    const auto latency = [&](double value) {
      return result.saturated ? std::string("unbounded") : seconds(value);
    };
    table.add_row(
        {std::to_string(rank + 1), candidate.preset, deployment_text(candidate),
         std::to_string(candidate.max_sequences), std::to_string(candidate.max_batch_tokens),
         latency(result.ttft.p99), latency(result.tpot.p99),
         candidate.at_slo_rate ? format_plain(candidate.slo_tokens_per_s_per_device())
                               : std::string("–"),
         format_plain(candidate.slo_rate_per_s), format_plain(candidate.goodput_per_device()),
         candidate.meets_slo ? "meets" : (result.saturated ? "saturated" : "misses"),
         candidate.pareto ? "*" : ""});
  }
  table.print(out, "  ");
  out << "\n  Deployment: replicas × devices each, or disaggregated units × (prefill pool P + "
         "decode pool D; r×t: r replicas of t devices; requests go to a pool's replicas in "
         "turn). Chunk: tokens per iteration (max_batch_tokens). Each replica or unit is sent "
         "its share of the arrival rate (as many requests as the scenario's) and simulated at the "
         "iterations' expected times. Latencies, "
         "tokens/s and SLO (meets / misses) at the "
         "scenario's rate; SLO rate: the highest arrival rate meeting the SLO (goodput), per "
         "device in the next column, which ranks; tokens/s/device at that rate; pareto *: no "
         "other deployment has more tokens/s per device and a lower p99 TPOT at its SLO "
         "rate.\n";
  if (!search.rejected.empty()) {
    out << "\n  Rejected:\n";
    for (const std::string& why : search.rejected) {
      out << "    " << why << '\n';
    }
  }
}

SeriesChart serving_pareto_chart(const Scenario& scenario, const ServingSearchResult& search) {
  SeriesChart chart;
  chart.title =
      fmt::format("Serving deployments of {} devices: throughput against latency", search.devices);
  chart.subtitle = fmt::format("{}; each deployment at the highest rate meeting the {}",
                               scenario.file, slo_text(search.slo));
  chart.x_label = "output tokens/s per device";
  chart.y_label = "p99 time per output token";
  chart.crossovers = false;
  Series front{"Pareto front", {}, {}, {}, {}, {}, false};
  Series others{"other deployments", {}, {}, {}, {}, {}, true};
  // (tokens/s per device, p99 TPOT) at each deployment's SLO rate, by throughput (the axes
  // take a series' first and last x as its range).
  std::vector<std::pair<double, double>> front_points;
  std::vector<std::pair<double, double>> other_points;
  for (const ServingCandidate& candidate : search.ranked) {
    if (candidate.at_slo_rate) {
      (candidate.pareto ? front_points : other_points)
          .emplace_back(candidate.slo_tokens_per_s_per_device(), candidate.at_slo_rate->tpot.p99);
    }
  }
  for (auto [points, series] : {std::pair{&front_points, &front}, {&other_points, &others}}) {
    std::sort(points->begin(), points->end());
    for (const auto& [throughput, tpot] : *points) {
      series->x.push_back(throughput);
      series->lower_s.push_back(tpot);
      series->upper_s.push_back(tpot);
    }
  }
  chart.series.push_back(std::move(front));
  if (!others.x.empty()) {
    chart.series.push_back(std::move(others));
  }
  return chart;
}

nlohmann::ordered_json serving_search_to_json(const Scenario& scenario,
                                              const ServingSearchResult& search, std::size_t top) {
  Json ranked = Json::array();
  for (std::size_t rank = 0; rank < ranked_rows(search, top); ++rank) {
    const ServingCandidate& candidate = search.ranked[rank];
    ranked.push_back(Json{
        {"rank", rank + 1},
        {"preset", candidate.preset},
        {"replica_devices", candidate.replica_devices},
        {"replicas", candidate.replicas},
        {"max_sequences", candidate.max_sequences},
        {"max_batch_tokens", candidate.max_batch_tokens},
        {"disaggregated", candidate.pools
                              ? Json{{"prefill", pool_json(candidate.pools->prefill,
                                                           candidate.pools->prefill_replicas)},
                                     {"decode", pool_json(candidate.pools->decode,
                                                          candidate.pools->decode_replicas)},
                                     {"transfer_tier", candidate.pools->transfer}}
                              : Json(nullptr)},
        {"meets_slo", candidate.meets_slo},
        {"pareto", candidate.pareto},
        {"slo_rate_requests_per_s", candidate.slo_rate_per_s},
        {"goodput_requests_per_s_per_device", candidate.goodput_per_device()},
        {"throughput_tokens_per_s_per_device", candidate.tokens_per_s_per_device()},
        {"at_slo_rate",
         candidate.at_slo_rate
             ? Json{{"requests_per_s", candidate.at_slo_rate->requests_per_s},
                    {"throughput_tokens_per_s_per_device", candidate.slo_tokens_per_s_per_device()},
                    {"ttft_p99_s", candidate.at_slo_rate->ttft.p99},
                    {"tpot_p99_s", candidate.at_slo_rate->tpot.p99}}
             : Json(nullptr)},
        {"serving", serving_json(candidate.result)}});
  }
  return Json{{"schema_version", 1},
              {"scenario", scenario.file},
              {"devices", search.devices},
              {"slo",
               {{"ttft_p99_s", search.slo.ttft_s > 0.0 ? Json(search.slo.ttft_s) : Json(nullptr)},
                {"tpot_p99_s", search.slo.tpot_s > 0.0 ? Json(search.slo.tpot_s) : Json(nullptr)}}},
              {"candidates", search.ranked.size()},
              {"ranked", ranked},
              {"rejected", search.rejected}};
}

}  // namespace rsim
