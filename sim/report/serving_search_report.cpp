// SPDX-License-Identifier: MIT
#include "sim/report/serving_search_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

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
  TextTable table({{"#"},
                   {"plan", TextTable::Align::left},
                   {"replicas"},
                   {"max seq"},
                   {"TTFT p99"},
                   {"TPOT p99"},
                   {"tokens/s/device"},
                   {"SLO rate req/s"},
                   {"goodput req/s/device"},
                   {"SLO", TextTable::Align::left},
                   {"pareto", TextTable::Align::left, 1}});
  for (std::size_t rank = 0; rank < ranked_rows(search, top); ++rank) {
    const ServingCandidate& candidate = search.ranked[rank];
    const ServingResult& result = candidate.result;
    const auto latency = [&](double value) {
      return result.saturated ? std::string("unbounded") : seconds(value);
    };
    table.add_row({std::to_string(rank + 1),
                   fmt::format("{} ×{}", candidate.preset, candidate.replica_devices),
                   std::to_string(candidate.replicas), std::to_string(candidate.max_sequences),
                   latency(result.ttft.p99), latency(result.tpot.p99),
                   format_plain(candidate.tokens_per_s_per_device()),
                   format_plain(candidate.slo_rate_per_s),
                   format_plain(candidate.goodput_per_device()),
                   candidate.meets_slo ? "meets" : (result.saturated ? "saturated" : "misses"),
                   candidate.pareto ? "*" : ""});
  }
  table.print(out, "  ");
  out << "\n  Each replica of t devices is sent 1/replicas of the stream and simulated at the "
         "iterations' expected times. Latencies, tokens/s and SLO (meets / misses) at the "
         "scenario's rate; SLO rate: the highest arrival rate meeting the SLO (goodput), per "
         "device in the next column, which ranks; pareto *: no other deployment has more "
         "tokens/s per device and a lower p99 TTFT.\n";
  if (!search.rejected.empty()) {
    out << "\n  Rejected:\n";
    for (const std::string& why : search.rejected) {
      out << "    " << why << '\n';
    }
  }
}

nlohmann::ordered_json serving_search_to_json(const Scenario& scenario,
                                              const ServingSearchResult& search, std::size_t top) {
  Json ranked = Json::array();
  for (std::size_t rank = 0; rank < ranked_rows(search, top); ++rank) {
    const ServingCandidate& candidate = search.ranked[rank];
    ranked.push_back(
        Json{{"rank", rank + 1},
             {"preset", candidate.preset},
             {"replica_devices", candidate.replica_devices},
             {"replicas", candidate.replicas},
             {"max_sequences", candidate.max_sequences},
             {"max_batch_tokens", candidate.max_batch_tokens},
             {"meets_slo", candidate.meets_slo},
             {"pareto", candidate.pareto},
             {"slo_rate_requests_per_s", candidate.slo_rate_per_s},
             {"goodput_requests_per_s_per_device", candidate.goodput_per_device()},
             {"throughput_tokens_per_s_per_device", candidate.tokens_per_s_per_device()},
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
