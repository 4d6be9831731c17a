// SPDX-License-Identifier: MIT
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace rsim {
namespace {

using Align = TextTable::Align;

}  // namespace

void write_whatif_text(std::ostream& out, const std::vector<RunResult>& runs) {
  const RunResult& baseline = runs.front();
  out << fmt::format("What if: {}  ({})\n\n", baseline.scenario.name, baseline.scenario.file);
  TextTable table({{"variant", Align::left},
                   {"hardware · mode", Align::left},
                   {"plan", Align::left},
                   {"precision (W/A/KV → path)", Align::left},
                   {"batch"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"upper"},
                   {"bound", Align::left},
                   {"DRAM bytes"},
                   {"weights/device"},
                   {"KV/device"},
                   {"critical D"},
                   {"fits", Align::left},
                   {"lower vs base"}});
  for (const RunResult& run : runs) {
    const Scenario& scenario = run.scenario;
    const Precision& precision = scenario.precision;
    const Totals& totals = run.bounds.total;
    std::string path = precision.compute;
    if (!precision.requested_compute.empty()) {
      path += fmt::format(" (fallback for {})", precision.requested_compute);
    }
    std::string dtypes =
        fmt::format("{}/{}/{} → {}", to_string(precision.weights), to_string(precision.activations),
                    to_string(precision.kv_cache), path);
    if (!scenario.per_batch_weights.empty()) {
      dtypes += fmt::format(", per-batch {}", fmt::join(scenario.per_batch_weights, "+"));
    }
    table.add_row(
        {scenario.variant.empty() ? "baseline" : scenario.variant,
         fmt::format("{} · {}", std::filesystem::path(scenario.hardware.file).stem().string(),
                     run.roofs.mode),
         run.scenario.plan.devices() > 1
             ? fmt::format("{} ×{}", run.scenario.plan.name, run.scenario.plan.devices())
             : std::string("single"),
         dtypes, fmt::format("{}", scenario.workload.batch), seconds(totals.t_math),
         seconds(totals.t_mem), seconds(totals.t_net), seconds(totals.t_lower),
         seconds(totals.t_upper), std::string(to_string(totals.bound)), bytes(totals.bytes),
         bytes(run.footprint.weights), bytes(run.footprint.kv_cache),
         run.critical_d ? format_count(*run.critical_d) : std::string("-"),
         run.footprint.fits() ? "yes" : "NO",
         fmt::format("{:.3g}×", totals.t_lower / baseline.bounds.total.t_lower)});
  }
  table.print(out, "  ");
  // The fastest plan that fits in memory: one that does not is no plan at all.
  const auto fastest = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return std::pair{!a.footprint.fits(), a.bounds.total.t_lower} <
           std::pair{!b.footprint.fits(), b.bounds.total.t_lower};
  });
  const bool same_workload = std::all_of(runs.begin(), runs.end(), [&](const RunResult& run) {
    return run.scenario.workload.batch == baseline.scenario.workload.batch &&
           run.scenario.model.name == baseline.scenario.model.name;
  });
  if (same_workload) {
    out << fmt::format("\n  fastest (lower bound) that fits in memory: {}\n",
                       !fastest->footprint.fits()          ? "none fits"
                       : fastest->scenario.variant.empty() ? "baseline"
                                                           : fastest->scenario.variant);
  }
  out << "\nCritical token batch per matmul group (the group's Σ FLOPs / Σ bytes meets the ridge;\n"
         "never: its intensity cannot reach it; tokens = batch × the stage's tokens)\n";
  std::vector<TextTable::Column> columns{{"stage/group", Align::left}};
  for (const RunResult& run : runs) {
    columns.push_back({run.scenario.variant.empty() ? "baseline" : run.scenario.variant});
  }
  TextTable groups(columns);
  for (const GroupCritical& group : baseline.group_critical) {
    std::vector<std::string> row{group.stage + "/" + group.group};
    for (const RunResult& run : runs) {
      std::string cell = "-";
      for (const GroupCritical& other : run.group_critical) {
        if (other.stage == group.stage && other.group == group.group) {
          cell = describe_critical(other.critical);
        }
      }
      row.push_back(cell);
    }
    groups.add_row(row);
  }
  groups.print(out, "  ");
}

}  // namespace rsim
