// SPDX-License-Identifier: MIT
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <tuple>

namespace rsim {
namespace {

using Align = TextTable::Align;

}  // namespace

void write_whatif_text(std::ostream& out, const std::vector<RunResult>& runs) {
  const RunResult& baseline = runs.front();
  write_wrapped(out, fmt::format("What if: {}  ({})", baseline.scenario.name,
                                 scenario_source(baseline.scenario)));
  out << '\n';
  const bool network = std::any_of(runs.begin(), runs.end(), [](const RunResult& run) {
    return run.scenario.plan.devices() > 1;
  });
  // Drop ranks: the first to go when the terminal is narrow have the highest (a column every
  // row agrees on goes before any; the note under the table keeps its value).
  std::vector<TextTable::Column> columns{
      {"variant", Align::left},    {"hardware · mode", Align::left, 4},
      {"plan", Align::left, 5},    {"precision (W/A/KV → path)", Align::left, 6},
      {"batch", Align::right, 7},  {"ΣT_math", Align::right, 10},
      {"ΣT_mem", Align::right, 11}};
  if (network) {
    columns.push_back({"ΣT_net", Align::right, 12});
  }
  // A decode request's: what a user waits (expected time to first token and per output token).
  const bool requests = std::any_of(runs.begin(), runs.end(),
                                    [](const RunResult& run) { return run.request.has_value(); });
  for (TextTable::Column column :
       std::initializer_list<TextTable::Column>{{"lower"},
                                                {"expected"},
                                                {"upper", Align::right, 3},
                                                {"bound", Align::left},
                                                {"DRAM bytes", Align::right, 13},
                                                {"weights/device", Align::right, 9},
                                                {"KV/device", Align::right, 8},
                                                {"critical D", Align::right, 14},
                                                {"fits", Align::left},
                                                {"lower vs base", Align::right, 2}}) {
    columns.push_back(std::move(column));
  }
  if (requests) {
    columns.push_back({"TTFT", Align::right, 1});
    columns.push_back({"TPOT", Align::right, 1});
    columns.push_back({"tokens/s", Align::right, 4});
  }
  TextTable table(std::move(columns));
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
    std::vector<std::string> row{
        scenario.variant.empty() ? "baseline" : scenario.variant,
        fmt::format("{} · {}", std::filesystem::path(scenario.hardware.file).stem().string(),
                    run.roofs.mode),
        run.scenario.plan.devices() > 1
            ? fmt::format("{} ×{}", run.scenario.plan.name, run.scenario.plan.devices())
            : std::string("single"),
        dtypes,
        fmt::format("{}", scenario.workload.batch),
        seconds(totals.t_math),
        seconds(totals.t_mem)};
    if (network) {
      row.push_back(seconds(totals.t_net));
    }
    for (std::string cell :
         {seconds(totals.t_lower), seconds(totals.t_expected), seconds(totals.t_upper),
          bound_label(totals), bytes(totals.bytes), bytes(run.footprint.weights),
          bytes(run.footprint.kv_cache),
          run.critical_d ? format_count(*run.critical_d) : std::string("-"),
          std::string(run.footprint.fits() ? "yes" : "NO"),
          fmt::format("{:.3g}×", totals.t_lower / baseline.bounds.total.t_lower)}) {
      row.push_back(std::move(cell));
    }
    if (requests) {
      row.push_back(run.request ? seconds(run.request->prefill.expected) : std::string("-"));
      row.push_back(run.request ? seconds(run.request->per_output_token().expected)
                                : std::string("-"));
      // A request's output tokens (batch × (steps + 1)) over its expected total.
      row.push_back(run.request ? format_plain(static_cast<double>(scenario.workload.batch) *
                                               static_cast<double>(run.request->steps + 1) /
                                               run.request->total().expected.si())
                                : std::string("-"));
    }
    table.add_row(std::move(row));
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
  // Rows that cost the same to the last digit printed are named together: a reader should not
  // look for a difference between them.
  std::vector<std::vector<std::string>> ties;
  std::vector<bool> tied(runs.size(), false);
  const auto key = [](const RunResult& run) {
    const Totals& totals = run.bounds.total;
    return std::tuple{seconds(totals.t_lower), seconds(totals.t_expected), seconds(totals.t_upper),
                      run.footprint.fits()};
  };
  const auto label = [](const RunResult& run) {
    return run.scenario.variant.empty() ? std::string("baseline") : run.scenario.variant;
  };
  for (std::size_t first = 0; first < runs.size(); ++first) {
    std::vector<std::string> names{label(runs[first])};
    for (std::size_t other = first + 1; other < runs.size(); ++other) {
      if (!tied[other] && !tied[first] && key(runs[other]) == key(runs[first])) {
        tied[other] = true;
        names.push_back(label(runs[other]));
      }
    }
    if (names.size() > 1) {
      ties.push_back(std::move(names));
    }
  }
  for (const auto& names : ties) {
    write_wrapped(
        out,
        fmt::format("tie: {} (the same lower, expected and upper time)", fmt::join(names, ", ")),
        "  ", "    ");
  }
  if (same_workload) {
    out << fmt::format("\n  fastest (lower bound) that fits in memory: {}\n",
                       !fastest->footprint.fits()          ? "none fits"
                       : fastest->scenario.variant.empty() ? "baseline"
                                                           : fastest->scenario.variant);
  }
  out << '\n';
  write_wrapped(
      out,
      "Critical token batch per matmul group (the group's Σ FLOPs / Σ bytes meets the "
      "ridge; never: its intensity cannot reach it; tokens = batch × the stage's tokens)");
  std::vector<TextTable::Column> group_columns{{"stage/group", Align::left}};
  for (const RunResult& run : runs) {
    // A row named by several presets ("plan a = plan b") heads its column by the first.
    const std::string name = run.scenario.variant.empty() ? "baseline" : run.scenario.variant;
    group_columns.push_back({name.substr(0, name.find(" = "))});
  }
  TextTable groups(group_columns);
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
