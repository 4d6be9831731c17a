// SPDX-License-Identifier: MIT
#include "sim/report/serving_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

Json latency_json(const LatencySummary& summary, bool bounded) {
  if (!bounded || summary.count == 0) {
    return Json(nullptr);
  }
  return Json{
      {"mean", summary.mean}, {"p50", summary.p50}, {"p90", summary.p90}, {"p99", summary.p99}};
}

std::string arrivals_text(const ServingSpec& serving) {
  return serving.arrivals.rate_per_s > 0.0
             ? fmt::format("Poisson arrivals at {} requests/s",
                           format_plain(serving.arrivals.rate_per_s))
             : fmt::format("a closed loop of {} clients", serving.arrivals.concurrency);
}

std::string tokens_text(const TokenCount& count) {
  switch (count.kind) {
    case TokenCount::Kind::fixed:
      return fmt::format("{}", count.fixed);
    case TokenCount::Kind::uniform:
      return fmt::format("uniform {}…{}", count.minimum, count.maximum);
    case TokenCount::Kind::trace:
      return fmt::format("from a trace of {} requests ({}…{})", count.trace.size(), count.minimum,
                         count.maximum);
    case TokenCount::Kind::lognormal:
      return fmt::format("lognormal (median {}, σ {}, {}…{})", format_plain(count.median),
                         format_plain(count.sigma), count.minimum, count.maximum);
  }
  return "";
}

void add_latency_rows(TextTable& table, const ServingResult& result, const std::string& clock) {
  const auto row = [&](const std::string& name, const LatencySummary& summary) {
    if (summary.count == 0) {
      return;
    }
    table.add_row({name, clock, seconds(summary.mean), seconds(summary.p50), seconds(summary.p90),
                   seconds(summary.p99)});
  };
  row("time to first token", result.ttft);
  row("time per output token", result.tpot);
  row("end to end", result.e2e);
  row("queueing", result.queueing);
}

}  // namespace

Json serving_json(const ServingResult& result) {
  const bool bounded = !result.saturated;
  Json json{
      {"clock", result.clock == ServingClock::expected ? "expected" : "lower"},
      {"requests", result.requests},
      {"devices", result.devices},
      {"saturated", result.saturated},
      {"offered_requests_per_s",
       result.offered_requests_per_s > 0.0 ? Json(result.offered_requests_per_s) : Json(nullptr)},
      {"capacity_requests_per_s",
       result.saturated ? Json(result.capacity_requests_per_s) : Json(nullptr)},
      {"ttft_s", latency_json(result.ttft, bounded)},
      {"tpot_s", latency_json(result.tpot, bounded)},
      {"e2e_s", latency_json(result.e2e, bounded)},
      {"queueing_s", latency_json(result.queueing, bounded)},
      {"makespan_s", result.makespan_s},
      {"requests_per_s", result.requests_per_s},
      {"throughput_tokens_per_s", result.output_tokens_per_s},
      {"throughput_tokens_per_s_per_device",
       result.output_tokens_per_s / static_cast<double>(result.devices)},
      {"input_tokens_per_s", result.input_tokens_per_s},
      {"goodput_requests_per_s",
       result.goodput_requests_per_s ? Json(*result.goodput_requests_per_s) : Json(nullptr)},
      {"iterations", result.iterations},
      {"mean_batch_tokens", result.mean_batch_tokens},
      {"mean_running_sequences", result.mean_running},
      {"preemptions", result.preemptions},
      {"kv_cache",
       {{"capacity_tokens", result.kv_capacity_tokens},
        {"occupancy_mean", result.kv_occupancy_mean},
        {"occupancy_peak", result.kv_occupancy_peak}}}};
  if (result.tokens_per_step) {
    json["speculative"] = Json{{"tokens_per_step", *result.tokens_per_step}};
  }
  if (result.pools) {
    json["disaggregated"] =
        Json{{"prefill_devices", result.pools->prefill_devices},
             {"decode_devices", result.pools->decode_devices},
             {"prefill_replicas", result.pools->prefill_replicas},
             {"decode_replicas", result.pools->decode_replicas},
             {"transfer_tier", result.pools->transfer},
             {"kv_transfer_s", latency_json(result.pools->kv_transfer, true)},
             {"prefill_iterations", result.pools->prefill_iterations},
             {"prefill_kv_occupancy_peak", result.pools->prefill_kv_occupancy_peak}};
  }
  return json;
}

Json serving_run_to_json(const ServingRun& run) {
  const Scenario& scenario = *run.scenario;
  const ServingSpec& serving = *scenario.serving;
  const SchedulerSpec& scheduler = serving.scheduler;
  Json slo{{"ttft_s", serving.slo.ttft_s > 0.0 ? Json(serving.slo.ttft_s) : Json(nullptr)},
           {"tpot_s", serving.slo.tpot_s > 0.0 ? Json(serving.slo.tpot_s) : Json(nullptr)}};
  return Json{
      {"schema_version", 1},
      {"scenario", scenario.name},
      {"file", scenario.file},
      {"hardware", scenario.hardware.name},
      {"model", scenario.model.name},
      {"plan", scenario.plan.name},
      {"devices", scenario.plan.devices()},
      {"workload",
       {{"phase", "serve"},
        {"arrival_rate_per_s",
         serving.arrivals.rate_per_s > 0.0 ? Json(serving.arrivals.rate_per_s) : Json(nullptr)},
        {"concurrency",
         serving.arrivals.concurrency > 0 ? Json(serving.arrivals.concurrency) : Json(nullptr)},
        {"requests", serving.requests},
        {"input_tokens", tokens_text(serving.input_tokens)},
        {"output_tokens", tokens_text(serving.output_tokens)},
        {"seed", serving.seed}}},
      {"scheduler",
       {{"max_sequences", scheduler.max_sequences},
        {"max_batch_tokens", scheduler.max_batch_tokens},
        {"chunked_prefill", scheduler.chunked_prefill},
        {"block_tokens", scheduler.block_tokens},
        {"memory_fraction", scheduler.memory_fraction}}},
      {"slo", slo},
      {"serving", serving_json(run.expected)},
      {"serving_at_lower_bound", serving_json(run.lower)}};
}

void write_serving_text(std::ostream& out, const ServingRun& run) {
  const Scenario& scenario = *run.scenario;
  const ServingSpec& serving = *scenario.serving;
  const ServingResult& result = run.expected;
  out << scenario.name << '\n' << '(' << scenario.file << ")\n\n";
  if (result.saturated) {
    out << fmt::format(
        "  result     saturated: {} requests/s arrive, about {} requests/s complete; the queue "
        "grows without bound while requests arrive, so its latencies are not figures (lower "
        "the rate or add devices)\n",
        format_plain(result.offered_requests_per_s), format_plain(result.capacity_requests_per_s));
  } else {
    out << fmt::format(
        "  result     TTFT p99 {}, TPOT p99 {}, end to end p99 {} (expected); {} tokens/s, {} "
        "per device\n",
        seconds(result.ttft.p99), seconds(result.tpot.p99), seconds(result.e2e.p99),
        format_plain(result.output_tokens_per_s),
        format_plain(result.output_tokens_per_s / static_cast<double>(result.devices)));
  }
  if (result.goodput_requests_per_s) {
    out << fmt::format(
        "  goodput    {} requests/s within the SLO (TTFT ≤ {}, TPOT ≤ {}) of {} "
        "requests/s served\n",
        format_plain(*result.goodput_requests_per_s),
        serving.slo.ttft_s > 0.0 ? seconds(serving.slo.ttft_s) : std::string("any"),
        serving.slo.tpot_s > 0.0 ? seconds(serving.slo.tpot_s) : std::string("any"),
        format_plain(result.requests_per_s));
  }
  if (serving.disaggregated && result.pools) {
    const Disaggregation& pools = *serving.disaggregated;
    out << fmt::format("  hardware   {} × {}: {}; KV caches over {} (mean {}, p99 {})\n",
                       result.devices, scenario.hardware.name, describe_pools(pools),
                       pools.transfer, seconds(result.pools->kv_transfer.mean),
                       seconds(result.pools->kv_transfer.p99));
  } else {
    out << fmt::format("  hardware   {} × {}, plan {}\n", scenario.plan.devices(),
                       scenario.hardware.name, scenario.plan.name);
  }
  out << fmt::format("  model      {}\n", scenario.model.name);
  out << fmt::format(
      "  workload   serve {} requests: {}; prompts {} tokens, outputs {} tokens, "
      "seed {}\n",
      serving.requests, arrivals_text(serving), tokens_text(serving.input_tokens),
      tokens_text(serving.output_tokens), serving.seed);
  const SchedulerSpec& scheduler = serving.scheduler;
  out << fmt::format(
      "  scheduler  continuous batching: ≤ {} sequences, ≤ {} tokens per "
      "iteration, {}; KV cache {} tokens per device in blocks of {}\n",
      scheduler.max_sequences, scheduler.max_batch_tokens,
      scheduler.chunked_prefill ? "chunked prefill" : "whole prompts first",
      format_count(static_cast<double>(result.kv_capacity_tokens)), scheduler.block_tokens);
  if (serving.speculative) {
    out << fmt::format(
        "  speculate  draft {} proposes {} tokens, acceptance {}: {} tokens per "
        "step expected\n",
        serving.speculative->draft.name, serving.speculative->tokens,
        format_plain(serving.speculative->acceptance),
        format_plain(serving.speculative->tokens_per_step()));
  }
  out << '\n';
  if (!result.saturated) {
    out << "Latency per request (expected: the iterations' expected times; lower bound: their "
           "lower bounds)\n";
    TextTable table({{"latency", TextTable::Align::left},
                     {"clock", TextTable::Align::left},
                     {"mean"},
                     {"p50"},
                     {"p90"},
                     {"p99"}});
    add_latency_rows(table, result, "expected");
    if (!run.lower.saturated) {
      table.add_rule();
      add_latency_rows(table, run.lower, "lower bound");
    }
    table.print(out, "  ");
    out << '\n';
  }
  out << "Throughput and occupancy\n";
  TextTable table({{"figure", TextTable::Align::left}, {"expected"}, {"lower bound"}});
  const auto both = [&](const std::string& name, double expected, double lower) {
    table.add_row({name, format_plain(expected), format_plain(lower)});
  };
  both("requests/s", result.requests_per_s, run.lower.requests_per_s);
  both("output tokens/s", result.output_tokens_per_s, run.lower.output_tokens_per_s);
  both("output tokens/s per device",
       result.output_tokens_per_s / static_cast<double>(result.devices),
       run.lower.output_tokens_per_s / static_cast<double>(result.devices));
  both("iterations", static_cast<double>(result.iterations),
       static_cast<double>(run.lower.iterations));
  both("tokens per iteration (mean)", result.mean_batch_tokens, run.lower.mean_batch_tokens);
  both("sequences running (mean)", result.mean_running, run.lower.mean_running);
  table.add_row({"KV cache occupancy (mean)", percent(result.kv_occupancy_mean),
                 percent(run.lower.kv_occupancy_mean)});
  table.add_row({"KV cache occupancy (peak)", percent(result.kv_occupancy_peak),
                 percent(run.lower.kv_occupancy_peak)});
  both("preemptions", static_cast<double>(result.preemptions),
       static_cast<double>(run.lower.preemptions));
  table.add_row({"makespan", seconds(result.makespan_s), seconds(run.lower.makespan_s)});
  table.print(out, "  ");
}

void write_serving_csv(std::ostream& out, const ServingRun& run) {
  out << "clock,metric,mean_s,p50_s,p90_s,p99_s\n";
  for (const ServingResult* result : {&run.expected, &run.lower}) {
    const char* clock = result->clock == ServingClock::expected ? "expected" : "lower";
    for (const auto& [name, summary] :
         {std::pair{"ttft", &result->ttft}, std::pair{"tpot", &result->tpot},
          std::pair{"e2e", &result->e2e}, std::pair{"queueing", &result->queueing}}) {
      if (result->saturated || summary->count == 0) {
        out << fmt::format("{},{},,,,\n", clock, name);
        continue;
      }
      out << fmt::format("{},{},{},{},{},{}\n", clock, name, summary->mean, summary->p50,
                         summary->p90, summary->p99);
    }
  }
}

void write_serving_variants_text(std::ostream& out, const std::string& title,
                                 const std::vector<ServingVariant>& variants) {
  out << title << "\n\n";
  TextTable table({{"variant", TextTable::Align::left},
                   {"plan", TextTable::Align::left, 2},
                   {"TTFT p50"},
                   {"TTFT p99"},
                   {"TPOT p50"},
                   {"TPOT p99"},
                   {"tokens/s"},
                   {"per device", TextTable::Align::right, 1},
                   {"goodput req/s", TextTable::Align::right, 1}});
  std::vector<std::string> notes;
  for (const ServingVariant& variant : variants) {
    const Scenario& scenario = *variant.scenario;
    const std::string plan =
        scenario.serving->disaggregated
            ? describe_pools(*scenario.serving->disaggregated)
            : fmt::format("{} ×{}", scenario.plan.name, scenario.plan.devices());
    if (!variant.result) {
      table.add_row({variant.name, plan, "–", "–", "–", "–", "–", "–", "–"});
      notes.push_back(fmt::format("{}: {}", variant.name, variant.why_not));
      continue;
    }
    const ServingResult& result = *variant.result;
    const auto latency = [&](double value) {
      return result.saturated ? std::string("unbounded") : seconds(value);
    };
    table.add_row({variant.name, plan, latency(result.ttft.p50), latency(result.ttft.p99),
                   latency(result.tpot.p50), latency(result.tpot.p99),
                   format_plain(result.output_tokens_per_s),
                   format_plain(result.output_tokens_per_s / static_cast<double>(result.devices)),
                   result.goodput_requests_per_s ? format_plain(*result.goodput_requests_per_s)
                                                 : std::string("–")});
    if (result.saturated) {
      notes.push_back(fmt::format(
          "{}: saturated ({} requests/s arrive, about {} complete): the queue grows without "
          "bound",
          variant.name, format_plain(result.offered_requests_per_s),
          format_plain(result.capacity_requests_per_s)));
    }
  }
  table.print(out, "  ");
  if (!notes.empty()) {
    out << '\n';
    for (const std::string& note : notes) {
      out << "  " << note << '\n';
    }
  }
  out << "\n  Latencies at the iterations' expected times; TTFT: time to first token, TPOT: time "
         "per output token, tokens/s: output tokens.\n";
}

nlohmann::ordered_json serving_variants_to_json(const std::vector<ServingVariant>& variants) {
  Json list = Json::array();
  for (const ServingVariant& variant : variants) {
    const Scenario& scenario = *variant.scenario;
    list.push_back(Json{{"name", variant.name},
                        {"hardware", scenario.hardware.name},
                        {"plan", scenario.plan.name},
                        {"devices", scenario.plan.devices()},
                        {"serving", variant.result ? serving_json(*variant.result) : Json(nullptr)},
                        {"why_not", variant.result ? Json(nullptr) : Json(variant.why_not)}});
  }
  return Json{{"schema_version", 1},
              {"scenario", variants.empty() ? std::string() : variants.front().scenario->name},
              {"variants", list}};
}

void write_serving_variants_csv(std::ostream& out, const std::vector<ServingVariant>& variants) {
  out << "variant,plan,devices,saturated,ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s,e2e_p99_s,"
         "throughput_tokens_per_s,throughput_tokens_per_s_per_device,goodput_requests_per_s\n";
  for (const ServingVariant& variant : variants) {
    const Scenario& scenario = *variant.scenario;
    out << fmt::format("\"{}\",{},{},", variant.name, scenario.plan.name, scenario.plan.devices());
    if (!variant.result) {
      out << ",,,,,,,,\n";
      continue;
    }
    const ServingResult& result = *variant.result;
    const auto latency = [&](double value) {
      return result.saturated ? std::string() : fmt::format("{}", value);
    };
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{}\n", result.saturated ? "true" : "false",
        latency(result.ttft.p50), latency(result.ttft.p99), latency(result.tpot.p50),
        latency(result.tpot.p99), latency(result.e2e.p99), result.output_tokens_per_s,
        result.output_tokens_per_s / static_cast<double>(result.devices),
        result.goodput_requests_per_s ? fmt::format("{}", *result.goodput_requests_per_s)
                                      : std::string());
  }
}

SeriesChart serving_quantile_chart(const ServingRun& run) {
  SeriesChart chart;
  chart.title = run.scenario->name;
  chart.subtitle =
      fmt::format("{} requests; band: lower-bound clock … expected clock", run.expected.requests);
  chart.x_label = "percentile of requests";
  chart.y_label = "latency";
  chart.log_y = true;
  chart.crossovers = false;
  const auto add = [&](const std::string& name, const std::vector<double>& lower,
                       const std::vector<double>& expected) {
    if (expected.empty() || lower.size() != expected.size()) {
      return;
    }
    Series series;
    series.name = name;
    for (std::size_t p = 0; p < expected.size(); ++p) {
      series.x.push_back(static_cast<double>(p));
    }
    series.lower_s = lower;
    series.upper_s = expected;
    chart.series.push_back(std::move(series));
  };
  add("time to first token", run.lower.ttft_quantiles, run.expected.ttft_quantiles);
  add("time per output token", run.lower.tpot_quantiles, run.expected.tpot_quantiles);
  return chart;
}

std::optional<SeriesChart> serving_sweep_chart(const std::string& title, const std::string& axis,
                                               const std::vector<double>& values,
                                               const std::vector<ServingVariant>& variants) {
  if (values.size() != variants.size()) {
    return std::nullopt;
  }
  SeriesChart chart;
  chart.title = title;
  chart.subtitle = "p99 latencies at the iterations' expected times; saturated rates left out";
  chart.x_label = axis;
  chart.y_label = "p99 latency";
  chart.log_y = true;
  chart.crossovers = false;
  Series ttft{"TTFT p99", {}, {}, {}, {}, {}};
  Series tpot{"TPOT p99", {}, {}, {}, {}, {}};
  for (std::size_t index = 0; index < variants.size(); ++index) {
    const std::optional<ServingResult>& result = variants[index].result;
    if (!result || result->saturated || result->tpot.count == 0) {
      continue;
    }
    for (auto [series, value] :
         {std::pair{&ttft, result->ttft.p99}, std::pair{&tpot, result->tpot.p99}}) {
      series->x.push_back(values[index]);
      series->lower_s.push_back(value);
      series->upper_s.push_back(value);
    }
  }
  if (ttft.x.size() < 2) {
    return std::nullopt;
  }
  chart.series = {ttft, tpot};
  return chart;
}

}  // namespace rsim
