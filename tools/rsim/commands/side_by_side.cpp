// SPDX-License-Identifier: MIT
#include "commands/side_by_side.hpp"

#include "output.hpp"
#include "sim/report/chart/bar_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/html.hpp"
#include "sim/report/json.hpp"
#include "sim/report/text.hpp"

namespace rsim::cli {
namespace {

// --plot and --html of whatif and compare; true when the text chart replaced the report.
bool runs_charts(const ScenarioOptions& options, const std::vector<RunResult>& runs,
                 const std::string& title, std::ostream& out) {
  write_html(options.html, [&](std::ostream& stream) { write_runs_html(stream, runs, title); });
  const StackedBars bars = bars_of_runs(runs, title);
  return plot(
      options.plot, out, [&] { return render_bars_svg(bars); },
      [&] { return render_bars_text(bars); });
}

}  // namespace

int emit_runs(const ScenarioOptions& options, const std::vector<RunResult>& runs,
              const std::string& title, std::ostream& out) {
  if (runs_charts(options, runs, title, out)) {
    return kExitOk;
  }
  return emit(
      options.roofs.format, out, [&] { return whatif_to_json(runs); },
      [&](std::ostream& stream) { write_whatif_csv(stream, runs); },
      [&](std::ostream& stream) { write_whatif_text(stream, runs); });
}

}  // namespace rsim::cli
