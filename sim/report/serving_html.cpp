// SPDX-License-Identifier: MIT
#include "sim/report/serving_html.hpp"

#include "sim/report/format.hpp"
#include "sim/report/html_document.hpp"
#include "sim/report/html_text.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

using html::Cell;

// A latency, or "unbounded" where the run is saturated (its queue grows with the run's length).
Cell latency_cell(const ServingResult& result, double value) {
  return result.saturated ? Cell{"unbounded", 1e300, "num"} : html::time_cell(value);
}

void write_latencies(std::ostream& out, const ServingRun& run) {
  std::vector<std::vector<Cell>> rows;
  for (const ServingResult* result : {&run.expected, &run.lower}) {
    const char* clock = result->clock == ServingClock::expected ? "expected" : "lower bound";
    for (const auto& [name, summary] :
         {std::pair{"time to first token", &result->ttft},
          std::pair{"time per output token", &result->tpot}, std::pair{"end to end", &result->e2e},
          std::pair{"queueing", &result->queueing}}) {
      if (summary->count == 0 && !result->saturated) {
        continue;
      }
      rows.push_back({Cell{name}, Cell{clock}, latency_cell(*result, summary->mean),
                      latency_cell(*result, summary->p50), latency_cell(*result, summary->p90),
                      latency_cell(*result, summary->p99)});
    }
  }
  out << "<section id=\"latencies\"><h2>Latency per request</h2>\n";
  html::write_table(out, "latency-table", {"latency", "clock", "mean#", "p50#", "p90#", "p99#"},
                    rows);
  out << "</section>\n";
}

// The curve's points: load, throughput, latencies, goodput.
void write_curve_table(std::ostream& out, const std::vector<ServingLoadPoint>& curve,
                       const std::string& load) {
  std::vector<std::vector<Cell>> rows;
  for (const ServingLoadPoint& point : curve) {
    const ServingResult& result = point.result;
    rows.push_back(
        {html::num(point.load, format_plain(point.load)),
         html::rate_cell(result.requests_per_s, "requests/s"),
         html::rate_cell(result.output_tokens_per_s / static_cast<double>(result.devices),
                         "tokens/s"),
         latency_cell(result, result.ttft.p50),
         latency_cell(result, result.ttft.p99),
         latency_cell(result, result.tpot.p50),
         latency_cell(result, result.tpot.p99),
         result.goodput_requests_per_s
             ? html::rate_cell(*result.goodput_requests_per_s, "requests/s")
             : Cell{"–"},
         {result.saturated ? "saturated" : "stable"}});
  }
  html::write_table(out, "curve-table",
                    {load + "#", "served#", "tokens/s per device#", "TTFT p50#", "TTFT p99#",
                     "TPOT p50#", "TPOT p99#", "goodput#", "queue"},
                    rows);
}

}  // namespace

void write_serving_html(std::ostream& out, const ServingRun& run,
                        const std::vector<ServingLoadPoint>& curve) {
  const Scenario& scenario = *run.scenario;
  const ServingResult& result = run.expected;
  html::open_document(
      out, scenario.name,
      result.saturated
          ? fmt::format("{}: saturated, about {} requests/s complete of {} arriving", scenario.file,
                        format_plain(result.capacity_requests_per_s),
                        format_plain(result.offered_requests_per_s))
          : fmt::format(
                "{}: TTFT p99 {}, TPOT p99 {}, {} tokens/s per device (expected)", scenario.file,
                seconds(result.ttft.p99), seconds(result.tpot.p99),
                format_plain(result.output_tokens_per_s / static_cast<double>(result.devices))));
  write_latencies(out, run);
  if (!result.saturated) {
    html::write_figure(out, "quantiles", "TTFT and TPOT over the requests (CDF)",
                       render_series_svg(serving_quantile_chart(run)));
  }
  const bool open_loop = scenario.serving->arrivals.rate_per_s > 0.0;
  const std::string load = open_loop ? "arrival rate (requests/s)" : "concurrency (clients)";
  std::vector<ServingVariant> points;
  std::vector<double> loads;
  for (const ServingLoadPoint& point : curve) {
    points.push_back({format_plain(point.load), &scenario, point.result, {}});
    loads.push_back(point.load);
  }
  if (const auto chart = serving_sweep_chart("p99 latency against the load", load, loads, points)) {
    html::write_figure(out, "curve", "Throughput against latency over the load",
                       render_series_svg(*chart));
  }
  out << "<section id=\"load\"><h2>The load curve</h2>\n<p>"
      << html::esc(open_loop ? "The same stream at shares of its capacity (the requests per "
                               "second it completes when they all arrive at once), at the "
                               "iterations' expected times."
                             : "The same requests from 1, 2, 4 … clients, at the iterations' "
                               "expected times.")
      << "</p>\n";
  write_curve_table(out, curve, load);
  out << "</section>\n";
  write_text_section(out, "rsim run",
                     [&](std::ostream& stream) { write_serving_text(stream, run); });
  html::close_document(out);
}

void write_serving_variants_html(std::ostream& out, const std::string& title,
                                 const std::vector<ServingVariant>& variants,
                                 const std::optional<SeriesChart>& chart) {
  html::open_document(out, title, fmt::format("{} serving runs", variants.size()));
  if (chart) {
    html::write_figure(out, "curve", "p99 latency against the swept value",
                       render_series_svg(*chart));
  }
  std::vector<std::vector<Cell>> rows;
  for (const ServingVariant& variant : variants) {
    if (!variant.result) {
      rows.push_back({variant.name, {"–"}, {"–"}, {"–"}, {"–"}, {"–"}, {"–"}, variant.why_not});
      continue;
    }
    const ServingResult& result = *variant.result;
    rows.push_back(
        {variant.name,
         latency_cell(result, result.ttft.p50),
         latency_cell(result, result.ttft.p99),
         latency_cell(result, result.tpot.p50),
         latency_cell(result, result.tpot.p99),
         html::rate_cell(result.output_tokens_per_s / static_cast<double>(result.devices),
                         "tokens/s"),
         result.goodput_requests_per_s
             ? html::rate_cell(*result.goodput_requests_per_s, "requests/s")
             : Cell{"–"},
         {result.saturated ? "saturated" : ""}});
  }
  out << "<section id=\"variants\"><h2>Runs</h2>\n";
  html::write_table(out, "variants-table",
                    {"run", "TTFT p50#", "TTFT p99#", "TPOT p50#", "TPOT p99#",
                     "tokens/s per device#", "goodput#", "note"},
                    rows);
  out << "</section>\n";
  write_text_section(out, title, [&](std::ostream& stream) {
    write_serving_variants_text(stream, title, variants);
  });
  html::close_document(out);
}

}  // namespace rsim
