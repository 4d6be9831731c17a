// SPDX-License-Identifier: MIT
#include "sim/report/search_report.hpp"

#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;
using Align = TextTable::Align;

std::string seconds(Seconds time) { return format_quantity(time.si(), Dimension::seconds); }

// Why `candidate` ranks below `above`: by throughput or cost, the work per device-second it
// gives up; by latency, the term of the sum that grew the most.
std::string loses_by(const SearchCandidate& candidate, const SearchCandidate& above,
                     SearchObjective objective) {
  if (objective != SearchObjective::latency) {
    return fmt::format(
        "−{:.3g} % seq/s/device (+{} device-seconds per sequence)",
        100.0 * (1.0 - candidate.sequences_per_device_s / above.sequences_per_device_s),
        format_quantity(1.0 / candidate.sequences_per_device_s - 1.0 / above.sequences_per_device_s,
                        Dimension::seconds));
  }
  const std::array<std::pair<std::string_view, double>, 3> growth{{
      {"ΣT_math", (candidate.total.t_math - above.total.t_math).si()},
      {"ΣT_memory", (memory_side(candidate.total).time - memory_side(above.total).time).si()},
      {"ΣT_net", (candidate.total.t_net - above.total.t_net).si()},
  }};
  const auto largest =
      std::max_element(growth.begin(), growth.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const Seconds slower = candidate.total.t_lower - above.total.t_lower;
  if (largest->second <= 0.0) {
    return fmt::format("+{} lower (ties broken by upper bound, preset, mesh)", seconds(slower));
  }
  return fmt::format("+{} lower: {} +{}", seconds(slower), largest->first,
                     format_quantity(largest->second, Dimension::seconds));
}

std::map<std::string, std::int64_t> rejection_counts(const SearchResult& result) {
  std::map<std::string, std::int64_t> counts;
  for (const SearchRejection& rejection : result.rejected) {
    ++counts[rejection.reason];
  }
  return counts;
}

}  // namespace

void write_search_text(std::ostream& out, const SearchResult& result, std::size_t top) {
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : rejection_counts(result)) {
    reasons.push_back(fmt::format("{} {}", count, reason));
  }
  out << fmt::format(
      "Plan search: {} on {} devices, by {}: {} plans seen, {} costed, {} rejected{}\n\n",
      result.scenario, result.devices, to_string(result.objective), result.seen,
      result.ranked.size(), result.rejected.size(),
      reasons.empty() ? std::string() : fmt::format(" ({})", fmt::join(reasons, ", ")));
  TextTable table({{"#"},
                   {"preset", Align::left},
                   {"mesh (per replica)", Align::left},
                   {"replicas"},
                   {"lower"},
                   {"upper"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"bound", Align::left},
                   {"memory/device"},
                   {"seq/s/device"},
                   {"device·s/seq"},
                   {"Pareto", Align::left},
                   {"vs the one above", Align::left}});
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t index = 0; index < shown; ++index) {
    const SearchCandidate& candidate = result.ranked[index];
    table.add_row(
        {fmt::format("{}", index + 1), candidate.preset,
         candidate.mesh.empty() ? "one device" : candidate.mesh,
         fmt::format("{}", candidate.replicas), seconds(candidate.total.t_lower),
         seconds(candidate.total.t_upper), seconds(candidate.total.t_math),
         seconds(candidate.total.t_mem), seconds(candidate.total.t_net),
         bound_label(candidate.total),
         format_quantity(candidate.footprint.total().si(), Dimension::bytes),
         fmt::format("{:.4g}", candidate.sequences_per_device_s),
         format_quantity(1.0 / candidate.sequences_per_device_s, Dimension::seconds),
         candidate.pareto ? "yes" : "",
         index == 0 ? "-" : loses_by(candidate, result.ranked[index - 1], result.objective)});
  }
  table.print(out, "  ");
  const auto pareto =
      std::count_if(result.ranked.begin(), result.ranked.end(),
                    [](const SearchCandidate& candidate) { return candidate.pareto; });
  out << fmt::format(
      "\n{} plans on the Pareto front of latency (lower bound) against sequences per "
      "device-second; mesh \"data: D over …, model: M over …\" per replica of devices / "
      "replicas.\n",
      pareto);
}

nlohmann::ordered_json search_to_json(const SearchResult& result, std::size_t top) {
  Json ranked = Json::array();
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t index = 0; index < shown; ++index) {
    const SearchCandidate& candidate = result.ranked[index];
    ranked.push_back(Json{{"rank", index + 1},
                          {"preset", candidate.preset},
                          {"mesh", candidate.mesh},
                          {"devices_per_replica", candidate.devices},
                          {"replicas", candidate.replicas},
                          {"t_lower_s", candidate.total.t_lower.si()},
                          {"t_upper_s", candidate.total.t_upper.si()},
                          {"t_math_s", candidate.total.t_math.si()},
                          {"t_mem_s", candidate.total.t_mem.si()},
                          {"t_net_s", candidate.total.t_net.si()},
                          {"bound", bound_label(candidate.total)},
                          {"memory_per_device_bytes", candidate.footprint.total().si()},
                          {"sequences_per_device_s", candidate.sequences_per_device_s},
                          {"device_seconds_per_sequence", 1.0 / candidate.sequences_per_device_s},
                          {"pareto", candidate.pareto}});
  }
  Json rejected = Json::object();
  for (const auto& [reason, count] : rejection_counts(result)) {
    rejected[reason] = count;
  }
  return Json{{"scenario", result.scenario},
              {"devices", result.devices},
              {"objective", to_string(result.objective)},
              {"seen", result.seen},
              {"costed", result.ranked.size()},
              {"rejected", rejected},
              {"ranked", ranked}};
}

}  // namespace rsim
