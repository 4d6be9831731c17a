// SPDX-License-Identifier: MIT
#include "commands/side_by_side.hpp"

#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/chart/bar_chart.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/html.hpp"
#include "sim/report/json.hpp"
#include "sim/report/serving_html.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/report/text.hpp"

#include <fmt/format.h>

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

int emit_serving(const ScenarioOptions& options, const std::vector<Scenario>& scenarios,
                 const std::string& title, std::ostream& out, const ServingAxis* axis) {
  if (!options.plot.empty() && axis == nullptr) {
    throw InputError(
        fmt::format("{}: --plot charts steps; a serving scenario's runs are tables "
                    "(--format json|csv, --html FILE; a serving sweep over one numeric axis "
                    "draws --plot FILE.svg)",
                    options.scenario));
  }
  std::vector<ServingVariant> variants;
  for (const Scenario& scenario : scenarios) {
    ServingVariant variant;
    variant.scenario = &scenario;
    variant.name = scenario.variant.empty() ? std::string("baseline") : scenario.variant;
    try {
      const Roofs roofs =
          scenario_roofs(scenario, options.roofs.mode, parse_overrides(options.roofs));
      variant.result = simulate_serving(scenario, roofs, ServingClock::expected);
    } catch (const ConfigError&) {
      throw;
    } catch (const InputError& error) {
      if (variants.empty()) {
        throw;  // the baseline itself
      }
      variant.why_not = error.what();
    }
    variants.push_back(std::move(variant));
  }
  const std::optional<SeriesChart> chart =
      axis != nullptr ? serving_sweep_chart(title, axis->key, axis->values, variants)
                      : std::nullopt;
  write_html(options.html, [&](std::ostream& stream) {
    write_serving_variants_html(stream, title, variants, chart);
  });
  if (axis != nullptr && !options.plot.empty()) {
    if (!chart || options.plot == "-") {
      throw InputError(fmt::format(
          "--plot {}: a serving sweep draws an SVG over one numeric axis with two or more "
          "unsaturated points (e.g. --over workload.arrivals.rate=1,2,4,8 --plot rate.svg)",
          options.plot));
    }
    write_file("--plot", options.plot, render_series_svg(*chart));
  }
  return emit(
      options.roofs.format, out, [&] { return serving_variants_to_json(variants); },
      [&](std::ostream& stream) { write_serving_variants_csv(stream, variants); },
      [&](std::ostream& stream) { write_serving_variants_text(stream, title, variants); });
}

void refuse_serving(const Scenario& scenario, std::string_view command) {
  if (scenario.serving) {
    throw InputError(fmt::format(
        "{}: a serving scenario (phase: serve): `rsim run` simulates its request stream, "
        "`rsim whatif` its variants and `rsim compare` its plans; `rsim {}` costs a step (use "
        "a prefill or decode scenario)",
        scenario.file, command));
  }
}

}  // namespace rsim::cli
